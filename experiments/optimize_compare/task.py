"""`task: optimize_compare`: the registry's entry for the held-out comparison of compiled generators and the
strength curve, which runs stages of its own (experiments/optimize_compare/driver.py)."""

from __future__ import annotations

from experiments import task_registry
from experiments.optimize_compare.driver import check_config, run_comparison
from experiments.optimize_compare.options import CompareOptions


@task_registry.task("optimize_compare", runs="stages")
class OptimizeCompareTask:
    roles = ("pivot", "judge", "targets")
    Options = CompareOptions

    check_config = staticmethod(check_config)

    drive = staticmethod(run_comparison)  # runs the whole of it (instead of the runner's one case loop)
