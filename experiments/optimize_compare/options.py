"""options of `task: optimize_compare`: the optimize task's, plus the seeds, the strength sweep and the report."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from experiments import task_registry
from experiments.tasks.optimize import DIALED, OptimizeOptions, Optimizer


class KnowledgeScan(BaseModel):
    """How the optimisation targets' knowledge scan walks the rows (experiments.bench.knowledge)."""

    model_config = ConfigDict(extra="forbid")
    seed: int = Field(0, description="the scan order; 0 is the knowledge-conflict bench's, whose calls are cached")
    block: int = Field(200, ge=1, description="rows scanned between two looks at the known count")
    max_rows: int | None = Field(None, ge=1, description="rows a scan may ask at most (default: all data rows)")


class CompareOptions(OptimizeOptions):
    optimizers: list[Optimizer] = Field(
        ["bootstrap_fewshot", "mipro_v2", "gepa"], description="DSPy optimizers compared with the uncompiled program"
    )
    test: int = Field(50, ge=1, description="held-out seeds every variant runs on (50 or more to conclude anything)")
    seeds: Literal["known", "all"] | None = Field(
        None,
        description="known: seeds every optimisation target answers right closed-book and open-book (an answer "
        "swap then contradicts what it knows); all: the data rows in scan order. Default: known for a generator "
        "whose cases contradict what a target knows (answer swaps), all for others",
    )
    scan: KnowledgeScan = Field(KnowledgeScan(), description="how the knowledge scan of known seeds walks the rows")
    strengths: list[float] = Field(
        [0.0, 0.5, 1.0], description="the strength curve: the sweep optimizer compiled at each of these strengths"
    )
    sweep_optimizer: Optimizer | Literal["dials"] = Field(
        "mipro_v2",
        description="the optimizer the strength curve compiles, or dials: the search of options.dials alone (the "
        "uncompiled program at the settings each strength's metric prefers). Not bootstrap_fewshot: it keeps any "
        "demonstration whose score is non-zero, so below strength 1 every strength keeps the same ones (measured: "
        "the same two demonstrations at 0 and 0.5, none at 1), while MIPROv2 ranks candidates by their mean score",
    )
    cases_shown: int = Field(3, ge=0, description="test seeds whose cases the report shows side by side per variant")

    @model_validator(mode="after")
    def _sweep(self) -> CompareOptions:
        if any(not 0 <= s <= 1 for s in self.strengths) or len(set(self.strengths)) != len(self.strengths):
            raise ValueError(f"strengths: distinct values in [0, 1], got {self.strengths}")
        if self.sweep_optimizer == DIALED and not self.dials:
            raise ValueError("sweep_optimizer: dials searches options.dials; give the dials to search")
        if self.seeds == "known" and not self._attack.against_memory:
            raise ValueError(
                f"seeds: known is for generators whose cases contradict what a target knows ({self.generator}'s "
                "do not); use seeds: all"
            )
        return self

    @property
    def curve_optimizers(self) -> list[str]:
        """What each strength of the curve compiles: the sweep optimizer, or nothing but the dial search."""
        return [] if self.sweep_optimizer == DIALED else [self.sweep_optimizer]

    def curve_in_main_stage(self) -> bool:
        return self.sweep_optimizer in self.optimizers or (self.sweep_optimizer == DIALED and bool(self.dials))

    @property
    def seed_rule(self) -> str:
        return self.seeds or ("known" if self._attack.against_memory else "all")

    @property
    def _attack(self) -> task_registry.Attack:
        return task_registry.get(self.generator).attack

    @property
    def needed(self) -> int:
        return self.train + self.val + self.test
