"""Options of a generator with dials: `strength` fills the dials a config leaves unset from the generator's
ladder (its registered `ladder`, read by programs/strength.py)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field, model_validator

from experiments import task_registry
from programs.strength import with_strength


class DialledOptions(BaseModel):
    generator: ClassVar[str]
    strength: float | None = Field(
        None, ge=0, le=1, description="sets the dials not given, from the generator's strength ladder"
    )

    @model_validator(mode="before")
    @classmethod
    def _strength(cls, data):
        if not isinstance(data, dict):
            return data
        return with_strength(task_registry.ladder(cls.generator), data, repr(cls.generator))
