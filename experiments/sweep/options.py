"""What a strength sweep varies: one generator, one dial (or `strength`), its levels, and the prompt settings
the targets answer in."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from experiments import task_registry
from experiments.bench.options import Setting


class SweepOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    generator: str = Field(description="the generator whose dial is swept: a registered one with sweep settings")
    dial: str = Field("strength", description="an option of the generator, or strength (its ladder)")
    levels: list[Any] = Field(
        default_factory=list, description="the dial's values, gentlest first (default: every rung of the ladder)"
    )
    default: Any = Field(
        None, description="the level the others are paired against (default: the generator's default setting)"
    )
    base: dict[str, Any] = Field(default_factory=dict, description="the generator's other options, at every level")
    settings: list[Setting] = Field(default_factory=list, description="prompt settings the targets answer in")
    known_by: str | None = Field(
        None,
        description="only seeds this target answers right closed-book in the shipped knowledge scan "
        "(data/knowledge_scans/), so a swap contradicts what it knows",
    )
    answer_kinds: list[Literal["date", "number", "name", "other"]] = Field(
        default_factory=list, description="only seeds whose answer is of these kinds (default: any)"
    )

    @field_validator("generator")
    @classmethod
    def _sweepable(cls, generator: str) -> str:
        return task_registry.check_name(generator, lambda r: r.sweepable, "generator that can be swept")

    @model_validator(mode="after")
    def _resolve(self) -> SweepOptions:
        if not self.levels and self.dial == "strength":
            self.levels = [level for level, _ in task_registry.ladder(self.generator)]
        if not self.levels:
            raise ValueError(f"options.levels: the values of {self.dial} to sweep")
        if self.dial in self.base or "strength" in self.base:
            raise ValueError("options.base: the swept dial and strength are set per level, not in base")
        entry = task_registry.get(self.generator)
        options = entry.Options
        if self.dial != "strength" and self.dial not in options.model_fields:
            raise ValueError(f"options.dial: {self.dial!r} is no option of {self.generator}")
        for level in self.levels:
            try:
                options.model_validate(self.level_options(level))
            except ValidationError as exc:
                raise ValueError(f"options.levels: {level!r}: {exc.errors()[0]['msg']}") from None
        if self.default is None:
            self.default = (
                entry.default_strength if self.dial == "strength" else options.model_fields[self.dial].default
            )
        if self.default not in self.levels:
            raise ValueError(f"options.default: {self.default!r} is not among the levels {self.levels}")
        if len({label(v) for v in self.levels}) != len(self.levels):
            raise ValueError("options.levels: each level once")
        self.settings = self.settings or list(task_registry.get(self.generator).sweep_settings)
        return self

    def level_options(self, level) -> dict[str, Any]:
        """The generator's options at `level`."""
        return {**self.base, self.dial: level}


def label(level) -> str:
    """A level as a stage name and a table column can carry it."""
    return f"{level:g}" if isinstance(level, float) else str(level)
