"""One entry for running a config: resolved once (experiments.resolved_run), then a task of the runner's case
loop, or a task that drives its own stages (the bench, which runs that loop once per stage). Which one is its
registration's `runs`. A run with `run.max_cost` runs under its spend cap (experiments/lm/spend.py)."""

from __future__ import annotations

from experiments import runner
from experiments.config import ExperimentConfig
from experiments.errors import SpendCapReached
from experiments.lm.spend import SPEND_FILE, SpendCap, SpendCapHit, capped
from experiments.resolved_run import ResolvedRun, resolve_run
from experiments.runner import RunResult


def run_experiment(config: ExperimentConfig, **invocation) -> RunResult:
    """`invocation`: run_id, fresh, retry_errors, progress, ray_address (experiments.resolved_run.resolve_run)."""
    run = resolve_run(config, **invocation)
    cap = run.config.run.max_cost  # its models' prices were checked as the run was resolved
    # What earlier invocations of the run were charged counts against the cap.
    with capped(SpendCap(cap, run.folder / SPEND_FILE) if cap is not None else None):
        try:
            return runner.run(run) if run.task.runs == "cases" else run.task.cls.drive(run)
        except SpendCapHit as hit:  # stopped outside the case loop (the judge's calibration, a bench stage's setup)
            raise SpendCapReached(f"{hit}; {_resume_hint(run)}") from None
        except SpendCapReached as exc:
            raise SpendCapReached(f"{exc}; {_resume_hint(run)}") from None


def _resume_hint(run: ResolvedRun) -> str:
    higher = run.config.run.max_cost * 2
    return f"resume with a higher cap: reeval resume {run.run_id} --max-cost {higher:g}"
