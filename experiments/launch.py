"""One entry for running a config: resolved once (experiments.resolved_run), then a task of the runner's case
loop, or a task that drives its own stages (the bench, which runs that loop once per stage). Which one is its
registration's `runs`."""

from __future__ import annotations

from experiments import runner
from experiments.config import ExperimentConfig
from experiments.resolved_run import resolve_run
from experiments.runner import RunResult


def run_experiment(config: ExperimentConfig, **invocation) -> RunResult:
    """`invocation`: run_id, fresh, retry_errors, progress, ray_address (experiments.resolved_run.resolve_run)."""
    run = resolve_run(config, **invocation)
    return runner.run(run) if run.task.runs == "cases" else run.task.cls.drive(run)
