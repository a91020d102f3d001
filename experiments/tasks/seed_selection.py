"""ReEval seed selection as an experiment: pivot answers closed- and open-book, 4-way table."""

from __future__ import annotations

import time

import dspy
from pydantic import BaseModel, ConfigDict

from experiments import task_registry
from experiments.lm.registry import ResolvedLM
from metrics import is_correct, seed_cell, seed_table
from programs.seed_selection import SeedSelection


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
        with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
            prediction = self.program(question=example.question, context=example.context)
        closed_ok = is_correct(prediction.closed_answer, example.answers)
        open_ok = is_correct(prediction.open_answer, example.answers)
        return {
            "id": example.id,
            "source": example.get("source", ""),
            "question": example.question,
            "answers": list(example.answers),
            "closed_answer": prediction.closed_answer,
            "open_answer": prediction.open_answer,
            "closed_correct": closed_ok,
            "open_correct": open_ok,
            "cell": seed_cell(open_ok, closed_ok),
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
                "cases": len(records),
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
