"""The case loop of a run and of a bench stage: each case an executor finishes is checkpointed before the next
result is taken, and after each the cases so far answer to the error budget."""

from __future__ import annotations

from tqdm.auto import tqdm

from experiments.config import ExperimentConfig
from experiments.errors import SpendCapReached, check_budget
from experiments.lm.spend import SpendCapHit
from experiments.run_store import RunStore


def map_cases(
    executor, todo: list, store: RunStore, config: ExperimentConfig, progress: bool, earlier: list[dict], total: int
) -> None:
    """`earlier`: the records of the cases earlier invocations finished; they count against the budget too, and
    with nothing left to do they still answer to it."""
    records_so_far: list[dict] = list(earlier)
    # The bar is closed on the way out of an error too: the error's message then starts a line of its own.
    with tqdm(total=len(todo), desc=config.task, unit="row", disable=not progress) as bar:
        try:
            for records in executor.map(todo):
                store.append(records)
                records_so_far.extend(records)
                bar.update(1)
                bar.set_postfix(status=records[-1]["status"][:24])
                check_budget(records_so_far, config.run.error_budget, config.run.min_cases_before_budget, total)
        except SpendCapHit as hit:  # the row it interrupted is not recorded: a resume does it
            raise SpendCapReached(f"{hit}; {len(records_so_far)} records of the run's {total} rows saved") from None
    check_budget(records_so_far, config.run.error_budget, config.run.min_cases_before_budget, total)
