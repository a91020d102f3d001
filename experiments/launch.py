"""One entry for running a config: resolved once (experiments.resolved_run), then a task of the runner's case
loop, or a task that drives its own stages (the bench, which runs that loop once per stage). Which one is its
registration's `runs`. A run with `run.max_cost` runs under its spend cap (experiments/lm/spend.py)."""

from __future__ import annotations

from experiments import runner
from experiments.config import ConfigError, ExperimentConfig
from experiments.errors import SpendCapReached
from experiments.lm.prices import is_priced
from experiments.lm.spend import SPEND_FILE, SpendCap, SpendCapHit, capped
from experiments.resolved_run import ResolvedRun, resolve_run
from experiments.run_store import RunStore
from experiments.runner import RunResult


def run_experiment(config: ExperimentConfig, **invocation) -> RunResult:
    """`invocation`: run_id, fresh, retry_errors, progress, ray_address (experiments.resolved_run.resolve_run)."""
    run = resolve_run(config, **invocation)
    with capped(spend_cap(run)):
        try:
            return runner.run(run) if run.task.runs == "cases" else run.task.cls.drive(run)
        except SpendCapHit as hit:  # stopped outside the case loop (the judge's calibration, a bench stage's setup)
            raise SpendCapReached(f"{hit}; {_resume_hint(run)}") from None
        except SpendCapReached as exc:
            raise SpendCapReached(f"{exc}; {_resume_hint(run)}") from None


def spend_cap(run: ResolvedRun) -> SpendCap | None:
    """The run's cap, with what earlier invocations of the run were charged; a provider model without a price
    is refused, since a cap cannot bound what it cannot price."""
    cap = run.config.run.max_cost
    if cap is None:
        return None
    unpriced = [
        f"{where} ({entry.name})"
        for where, entry in run.config.models.entries().items()
        if "/" in entry.name and not is_priced(entry.name, entry.price)
    ]
    if unpriced:
        raise ConfigError(
            f"run.max_cost: no price for {', '.join(unpriced)} in LiteLLM's cost map; give each a "
            "`price: {prompt_per_million: …, completion_per_million: …}` or drop the cap"
        )
    return SpendCap(cap, RunStore(run.run_id).dir / SPEND_FILE)


def _resume_hint(run: ResolvedRun) -> str:
    higher = run.config.run.max_cost * 2
    return f"resume with a higher cap: reeval resume {run.run_id} --max-cost {higher:g}"
