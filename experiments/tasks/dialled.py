"""Options of a generator with dials: `strength` fills the dials a config leaves unset from the generator's
ladder (programs/strength.py)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field, model_validator

from programs.strength import with_strength


class DialledOptions(BaseModel):
    generator: ClassVar[str]
    strength: float | None = Field(
        None, ge=0, le=1, description="sets the dials not given, from the ladder in programs/strength.py"
    )

    @model_validator(mode="before")
    @classmethod
    def _strength(cls, data):
        return with_strength(cls.generator, data) if isinstance(data, dict) else data
