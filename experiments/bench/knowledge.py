"""Which seeds a target already knows: ReEval's 4-way table asked of each *target*, over as many rows as it
takes to find enough seeds it answers correctly both closed- and open-book.

A scan walks the rows in one fixed shuffled order (the same for every target, so seeds known by several
targets are generated once) in blocks, and stops a target once it knows `known_per_target` seeds or the
rows run out. Every row is asked closed-book; open-book only where the answer came back right, and on the
first `table_rows` rows, whose full 4-way table is the unbiased picture (the rest would cost an open-book
read of every row to learn what the first rows already show). The asks are the evaluation's own
(`Ask(target, "closed_book", …)`), so the bench's closed-book evaluation of the same questions, and any
later scan of the same targets, is answered by the call cache.
"""

from __future__ import annotations

import random
import time

import dspy

from experiments.bench.answering import TargetAsker
from experiments.bench.demos import DemoBook
from experiments.bench.sharing import Ask
from experiments.bench.stages import run_cases
from metrics.conflict import knows
from metrics.qa import is_correct
from metrics.seed_table import seed_table

# Closed-book answers scored by metrics.conflict.knows (strict), open-book ones leniently as seed selection does.
# 2: a gold the question states is not known.
VERSION = "knowledge_scan/2"


def scan_order(examples: list[dspy.Example], seed: int) -> list[dspy.Example]:
    order = sorted(examples, key=lambda e: str(e.id))
    random.Random(f"knowledge-scan:{seed}").shuffle(order)
    return order


class KnowledgeProbe:
    """The per-row unit of a target's scan: the closed-book ask, then the open-book one where it counts."""

    def __init__(self, asker: TargetAsker, table_ids: set[str]):
        self.asker = asker
        self.table_ids = table_ids

    @classmethod
    def for_target(cls, target, table_ids: set[str]) -> KnowledgeProbe:
        return cls(TargetAsker(target, DemoBook({}, 1)), table_ids)

    def process(self, example: dspy.Example) -> dict:
        started = time.perf_counter()
        name = self.asker.target.config.label
        record = {
            "id": example.id,
            "seed_id": example.id,
            "target": name,
            "question": example.question,
            "answers": list(example.answers),
            "in_table": example.id in self.table_ids,
        }
        closed = self.asker.process(Ask(name, "closed_book", "greedy", example.question, ""))
        if closed["status"] != "ok":
            return {
                **record,
                "status": closed["status"],
                "error": closed.get("error", ""),
                "seconds": round(time.perf_counter() - started, 3),
            }
        record.update(
            closed_answer=closed["prediction"],
            closed_correct=knows(closed["prediction"], example.answers, example.question),
        )
        if record["closed_correct"] or record["in_table"]:
            opened = self.asker.process(Ask(name, "open_book", "greedy", example.question, example.context))
            if opened["status"] != "ok":
                return {
                    **record,
                    "status": opened["status"],
                    "error": opened.get("error", ""),
                    "seconds": round(time.perf_counter() - started, 3),
                }
            record.update(
                open_answer=opened["prediction"], open_correct=is_correct(opened["prediction"], example.answers)
            )
        return {**record, "status": "ok", "seconds": round(time.perf_counter() - started, 3)}


def scan_until_known(
    probe: KnowledgeProbe,
    ordered: list[dspy.Example],
    store,
    loop_config,
    *,
    block: int,
    enough: int,
    retry_errors: bool = False,
    progress: bool = True,
    executor=None,
) -> tuple[list[dict], int]:
    """The scan order in blocks (the table rows at least) until the target knows `enough` seeds or the rows run
    out: every record so far, and how many rows were asked now (the rest came from the checkpoint)."""
    upto, records, new = 0, [], 0
    while upto < len(ordered):
        upto = min(len(ordered), max(upto + block, len(probe.table_ids)))
        records, done_now = run_cases(probe, ordered[:upto], store, loop_config, retry_errors, progress, executor)
        new += done_now
        if sum(is_known(r) for r in records) >= enough:
            break
    return records, new


def is_known(record: dict) -> bool:
    """ReEval's closed-book-correct cell: right from memory and right from the evidence."""
    return record.get("status") == "ok" and bool(record.get("closed_correct")) and bool(record.get("open_correct"))


def is_unknown(record: dict) -> bool:
    """The comparison seeds: read right from the evidence, not known from memory (4-way-table rows only)."""
    return (
        record.get("status") == "ok"
        and record.get("in_table")
        and not record.get("closed_correct")
        and bool(record.get("open_correct"))
    )


def scan_summary(records: list[dict], rows_available: int) -> dict[str, float]:
    """What one target's scan found: rows asked, closed-book accuracy over all of them, the 4-way table of
    the table rows, and how many seeds it knows."""
    ok = [r for r in records if r.get("status") == "ok"]
    table = seed_table({**r, "status": "accepted"} for r in ok if r.get("in_table"))
    out = {
        "rows_scanned": float(len(records)),
        "rows_available": float(rows_available),
        "errors": float(len(records) - len(ok)),
        "from_archive": float(sum(bool(r.get("archived")) for r in records)),
        "closed_correct": float(sum(bool(r.get("closed_correct")) for r in ok)),
        "closed_book_accuracy": sum(bool(r.get("closed_correct")) for r in ok) / len(ok) if ok else float("nan"),
        "known": float(sum(is_known(r) for r in ok)),
        "table_rows": float(sum(1 for r in ok if r.get("in_table"))),
    }
    out.update({f"table.{cell}": float(n) for cell, n in table.items() if cell != "errors"})
    return out
