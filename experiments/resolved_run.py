"""A run resolved once, before anything runs: the environment's offline defaults, the case set a `run:<config>`
source names, the task's registration and its validated options, the models of the task's roles and how this
process's local models share its cores (and, under a spend cap, that each provider model has a price), the run id
(resumed or fresh), its folder, and how this invocation runs it. The
runner, the Ray workers and the tasks that drive their own stages receive this object and read it; none of them
resolves any of it again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from experiments import task_registry
from experiments.case_sets import is_run_source, resolve_run_source
from experiments.config import ConfigError, ExperimentConfig
from experiments.lm.offline import apply_offline_defaults
from experiments.lm.pool import CoreSplit
from experiments.lm.prices import unpriced
from experiments.lm.settings import LMConfig
from experiments.run_store import RunStore, RunStoreError
from experiments.tracking import flatten


@dataclass(frozen=True)
class ResolvedRun:
    config: ExperimentConfig  # a `run:<config>` source names the run id whose cases it reads
    task: task_registry.Registered
    options: BaseModel  # the task's `Options`, validated
    models: dict[str, LMConfig | list[LMConfig]]  # by role, the roles the task uses ("targets", "pivots": lists)
    split: CoreSplit  # how the local models of a process share its cores
    run_id: str
    folder: Path  # runs/<run id>: its checkpoint, lock and spend
    retry_errors: bool = False  # redo the cases that ended in error:<kind>
    progress: bool = True
    ray_address: str | None = None  # the Ray cluster to join, with run.executor: ray

    @property
    def judged_task(self) -> str:
        """The generator whose cases the run's judge validates: the task, or the one a pivot comparison or an
        optimisation attacks with."""
        return getattr(self.options, "generator", self.config.task)

    def as_task(self, task: str, options: BaseModel) -> ResolvedRun:
        """The run as one of its stages sees it: another task, with its options, on the same run."""
        config = self.config.model_copy(update={"task": task, "options": options.model_dump(mode="json")})
        return dataclasses.replace(self, config=config, task=task_registry.get(task), options=options)


def resolve_run(
    config: ExperimentConfig,
    *,
    run_id: str | None = None,
    fresh: bool = False,
    retry_errors: bool = False,
    progress: bool = True,
    ray_address: str | None = None,
) -> ResolvedRun:
    """`config` resolved for this invocation. `run_id` resumes that run; `fresh` starts a new one where the
    config ran before."""
    apply_offline_defaults()
    if is_run_source(config.data.source):  # record which run's cases, not "the latest"
        data = config.data.model_copy(update={"source": resolve_run_source(config.data.source)})
        config = config.model_copy(update={"data": data})
    task = task_registry.get(config.task)
    options = task.Options.model_validate(config.options)
    run_id = run_id or RunStore.new_id(config.name, config.digest(), fresh=fresh)
    store = RunStore(run_id)
    _check_same_config(store, config)
    models = config.models_of(task.cls.roles, getattr(task.cls, "optional_roles", ()))
    split = config.run.core_split()
    # Under `run.max_cost`, a provider model without a price is refused: a cap cannot bound what it cannot price.
    if config.run.max_cost is not None and (missing := unpriced(config.models.entries())):
        raise ConfigError(
            f"run.max_cost: no price for {', '.join(missing)} in LiteLLM's cost map; give each a "
            "`price: {prompt_per_million: …, completion_per_million: …}` or drop the cap"
        )
    return ResolvedRun(config, task, options, models, split, run_id, store.dir, retry_errors, progress, ray_address)


def _check_same_config(store: RunStore, config: ExperimentConfig) -> None:
    """A run directory is one config's: resuming it with another would mix two experiments' cases."""
    if not store.exists():
        return
    theirs, ours = flatten(store.experiment_config().identity()), flatten(config.identity())
    differ = sorted(k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k))
    if not differ:
        return

    def value(config: dict, key: str) -> str:
        return repr(config[key]) if key in config else "unset"

    shown = ", ".join(f"{k}: {value(theirs, k)} there, {value(ours, k)} here" for k in differ[:3])
    more = f" and {len(differ) - 3} more" if len(differ) > 3 else ""
    raise RunStoreError(
        f"{store.dir / 'config.json'}: run {store.run_id!r} was made with another config "
        f"({shown}{more}); start a new run with --fresh, or finish that one with "
        f"`reeval resume {store.run_id}`"
    )
