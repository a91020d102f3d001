"""Where a bench stage's items run: in this process (`run.executor: local`) or on Ray actors (`ray`).

On Ray each stage starts its own actors; each builds the stage's unit (seed selection, a generator with
its judge, a target's asker, a knowledge probe) from a `UnitRecipe`, loads only the models that unit
needs, takes items one at a time from the driver, and ends with the stage. So generation stages spread
their seeds over the actors, and a target's evaluation its asks. Stages still run one after another:
this process stays the only writer of each stage's checkpoint, of the ledger (stages.json) and of
MLflow, so a bench on Ray has the local executor's stages, checkpoint files and resume, and either
executor can resume the other's run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

from experiments import tracking
from experiments.config import RunConfig
from experiments.executors import LocalExecutor, RayExecutor, merge_usage, ray_session
from experiments.lm.pool import CoreSplit
from experiments.lm.settings import LMConfig


@dataclass
class UnitRecipe:
    """A stage's unit as any process can build it: `make` (experiments.bench.units) called with the
    models it names, by keyword, from bench labels (`pivot/<name>`, `judge`, `target/<name>`)."""

    make: Callable
    models: dict[str, str]  # keyword -> bench label

    def build(self, labelled: dict):
        return self.make(**{keyword: labelled[label] for keyword, label in self.models.items()})


@dataclass
class StageSpec:
    """What a Ray actor needs to build a stage's unit: the recipe and the configs of its models."""

    recipe: UnitRecipe
    configs: dict[str, dict]  # bench label -> LM config (JSON)
    build_lm: Callable  # experiments.lm.registry.build_lm; tests swap in fakes
    worker_cpus: int

    def build(self) -> tuple[dict, object]:
        split = CoreSplit(contexts=1, threads=self.worker_cpus, cores=self.worker_cpus)
        lms = {
            # the label's first part is the role: pivot/<name>, judge, target/<name>
            label: self.build_lm(LMConfig.model_validate(config), label.split("/")[0], split)
            for label, config in self.configs.items()
        }
        return lms, self.recipe.build(lms)


class Placement:
    """The bench's executor per stage; `lms` are the bench's models by label (the driver's copies, which
    count what Ray actors spent, so a stage's ledger entry is the same under either executor)."""

    def __init__(self, run: RunConfig, lms: dict, build_lm: Callable, address: str | None = None):
        self.run = run
        self.lms = lms
        self.build_lm = build_lm
        self.address = address

    @property
    def on_ray(self) -> bool:
        return self.run.executor == "ray"

    def session(self):
        """Around the whole bench: one Ray connection (a local instance starts once) for every stage."""
        return ray_session(self.address) if self.on_ray else nullcontext()

    @contextmanager
    def executor(self, unit, recipe: UnitRecipe) -> Iterator:
        """An executor for one stage: `unit` runs the items here; on Ray, actors build theirs from `recipe`.
        Logged to the stage's MLflow run; on Ray, what the actors spent joins the driver's counts."""
        if not self.on_ray:
            with LocalExecutor(unit, self.run.threads) as executor:
                yield executor
            tracking.log_params(executor.describe())
            return
        configs = {label: self.lms[label].config.model_dump(mode="json") for label in recipe.models.values()}
        spec = StageSpec(recipe, configs, self.build_lm, self.run.ray.worker_cpus)
        executor = RayExecutor(self.run, spec, self.address)
        try:
            with executor:
                yield executor
        finally:
            merge_usage(self.lms, executor.usage())
            tracking.log_params(executor.describe())
