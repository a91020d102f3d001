"""`task: strength_sweep`: the registry's entry for the sweep, which runs stages of its own
(experiments/sweep/driver.py)."""

from __future__ import annotations

from experiments import task_registry
from experiments.sweep.driver import check_config, run_sweep
from experiments.sweep.options import SweepOptions


@task_registry.task("strength_sweep", runs="stages")
class StrengthSweepTask:
    roles = ("pivot", "targets")
    optional_roles = ("judge",)
    Options = SweepOptions

    check_config = staticmethod(check_config)

    drive = staticmethod(run_sweep)  # runs the whole of it (instead of the runner's one case loop)
