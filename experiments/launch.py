"""One entry for running a config: a task of the runner's case loop, or a task that drives its own
stages (the bench, which runs that loop once per stage). Which one is its registration's `runs`."""

from __future__ import annotations

from experiments import runner, task_registry
from experiments.case_sets import is_run_source, resolve_run_source
from experiments.config import ExperimentConfig
from experiments.lm.offline import apply_offline_defaults
from experiments.runner import RunResult


def run_experiment(
    config: ExperimentConfig,
    *,
    run_id: str | None = None,
    fresh: bool = False,
    retry_errors: bool = False,
    progress: bool = True,
    ray_address: str | None = None,
) -> RunResult:
    entry = task_registry.get(config.task)
    if entry.runs == "cases":
        return runner.run_experiment(
            config, run_id=run_id, fresh=fresh, retry_errors=retry_errors, progress=progress, ray_address=ray_address
        )
    apply_offline_defaults()
    if is_run_source(config.data.source):  # a config-named case set: record which run's cases
        config.data.source = resolve_run_source(config.data.source)
    return entry.cls.drive(
        config, run_id=run_id, fresh=fresh, retry_errors=retry_errors, progress=progress, ray_address=ray_address
    )
