"""One entry for running a config: a task of the runner's case loop, or a task that drives its own
stages (the bench, which runs that loop once per stage).

`TASKS` here is the whole registry, the one a config is checked against (experiments.config_loader).
"""

from __future__ import annotations

from experiments import runner
from experiments.bench.task import BenchTask
from experiments.case_sets import is_run_source, resolve_run_source
from experiments.config import ExperimentConfig
from experiments.lm.offline import apply_offline_defaults
from experiments.optimize_compare.task import OptimizeCompareTask
from experiments.runner import RunResult
from experiments.sweep.task import StrengthSweepTask
from experiments.tasks import TASKS as RUNNER_TASKS

TASKS = {
    **RUNNER_TASKS,
    "bench": BenchTask,
    "optimize_compare": OptimizeCompareTask,
    "strength_sweep": StrengthSweepTask,
}


def run_experiment(
    config: ExperimentConfig,
    *,
    run_id: str | None = None,
    fresh: bool = False,
    retry_errors: bool = False,
    progress: bool = True,
    ray_address: str | None = None,
) -> RunResult:
    task_cls = TASKS.get(config.task)
    if not hasattr(task_cls, "drive"):
        return runner.run_experiment(
            config, run_id=run_id, fresh=fresh, retry_errors=retry_errors, progress=progress, ray_address=ray_address
        )
    # a task that runs stages of its own (bench, optimize_compare)
    apply_offline_defaults()
    if is_run_source(config.data.source):  # a config-named case set: record which run's cases
        config.data.source = resolve_run_source(config.data.source)
    return task_cls.drive(
        config, run_id=run_id, fresh=fresh, retry_errors=retry_errors, progress=progress, ray_address=ray_address
    )
