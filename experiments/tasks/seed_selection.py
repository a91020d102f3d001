"""ReEval seed selection: the pivot answers closed- and open-book and the answers are scored into the 4-way
table. `select_seed` is the one place a seed is selected: the `seed_selection` task reports it, every
perturbation task (and the bench's seed stage) keeps or drops its seed by one of `SEED_RULES`.

A perturbation task's seed-selection calls are identical to those of a `seed_selection` run with the same
pivot, so DSPy's cache answers them for free when that run came first.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import dspy
from pydantic import BaseModel, ConfigDict

from experiments import task_registry
from experiments.lm.registry import ResolvedLM
from metrics import is_correct, seed_cell, seed_table
from programs.seed_selection import SeedSelection

# Which cells of the 4-way table a perturbation keeps, as the papers do.
SEED_RULES: dict[str, Callable[[bool, bool], bool]] = {
    "open_correct": lambda open_ok, closed_ok: open_ok,
    "open_correct_closed_wrong": lambda open_ok, closed_ok: open_ok and not closed_ok,
    "all": lambda open_ok, closed_ok: True,
}


def select_seed(pivot: ResolvedLM, seeds: SeedSelection, example: dspy.Example) -> dict:
    """The pivot's closed- and open-book answers to one example, scored."""
    with dspy.context(lm=pivot.lm, adapter=pivot.adapter()):
        prediction = seeds(question=example.question, context=example.context)
    closed_ok = is_correct(prediction.closed_answer, example.answers)
    open_ok = is_correct(prediction.open_answer, example.answers)
    return {
        "seed_id": example.id,
        "source": example.get("source", ""),
        "question": example.question,
        "original_context": example.context,
        "original_answers": list(example.answers),
        "pivot_closed_answer": prediction.closed_answer,
        "pivot_open_answer": prediction.open_answer,
        "seed_cell": seed_cell(open_ok, closed_ok),
        "open_correct": open_ok,
        "closed_correct": closed_ok,
    }


@task_registry.task("seed_selection")
class SeedSelectionTask:
    roles = ("pivot",)

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

    def __init__(self, lms: dict[str, ResolvedLM], options: Options | None = None):
        self.pivot = lms["pivot"]
        self.program = SeedSelection()

    def programs(self) -> dict[str, dspy.Module]:
        return {"seed_selection": self.program}

    def process(self, example: dspy.Example) -> dict:
        started = time.perf_counter()
        seed = select_seed(self.pivot, self.program, example)
        return {
            "id": example.id,
            "source": seed["source"],
            "question": seed["question"],
            "answers": seed["original_answers"],
            "closed_answer": seed["pivot_closed_answer"],
            "open_answer": seed["pivot_open_answer"],
            "closed_correct": seed["closed_correct"],
            "open_correct": seed["open_correct"],
            "cell": seed["seed_cell"],
            "status": "accepted",
            "seconds": round(time.perf_counter() - started, 3),
        }

    def summarize(self, records: list[dict]) -> dict[str, float]:
        table = seed_table(records)
        scored = [r for r in records if r.get("status") == "accepted"]
        n = max(len(scored), 1)
        metrics = {f"table.{cell}": count for cell, count in table.items() if cell != "errors"}
        metrics.update(
            {
                "records": len(records),
                "scored": len(scored),
                "errors": table.get("errors", 0),
                "open_book_accuracy": sum(r["open_correct"] for r in scored) / n,
                "closed_book_accuracy": sum(r["closed_correct"] for r in scored) / n,
                "seconds_per_case": sum(r.get("seconds", 0) for r in scored) / n,
            }
        )
        return metrics

    def table_rows(self, records: list[dict]) -> tuple[list[str], list[list[str]]]:
        table = seed_table(records)
        header = ["", "closed-book correct", "closed-book wrong"]
        rows = [
            [
                "open-book correct",
                str(table.get("open_correct__closed_correct", 0)),
                str(table.get("open_correct__closed_wrong", 0)),
            ],
            [
                "open-book wrong",
                str(table.get("open_wrong__closed_correct", 0)),
                str(table.get("open_wrong__closed_wrong", 0)),
            ],
        ]
        return header, rows
