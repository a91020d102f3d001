"""`task: bench`: the registry's entry for the bench, which runs its own stages (experiments/bench).

It joins the single-run tasks in `experiments.launch.TASKS`, not in `experiments.tasks`: the bench
drives the runner, so the runner's registry cannot hold it."""

from __future__ import annotations

from experiments import task_registry
from experiments.bench.driver import check_config, run_bench
from experiments.bench.options import BenchOptions


@task_registry.task("bench", runs="stages")
class BenchTask:
    roles = ("targets",)
    optional_roles = ("pivot", "pivots", "judge")
    Options = BenchOptions

    check_config = staticmethod(check_config)

    drive = staticmethod(run_bench)  # runs the whole of it (instead of the runner's one case loop)
