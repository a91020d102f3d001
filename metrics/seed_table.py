"""ReEval's 4-way seed table: open-book vs closed-book correctness of the pivot LM.

The table is how ReEval picks seeds: open-book-correct cases show the model can use the
evidence; closed-book-wrong ones show it cannot answer from memory, so a later failure on
perturbed evidence is about the evidence, not about parametric knowledge.
"""

from collections.abc import Iterable, Mapping
from typing import Any

SEED_CELLS: tuple[str, ...] = (
    "open_correct__closed_correct",
    "open_correct__closed_wrong",
    "open_wrong__closed_correct",
    "open_wrong__closed_wrong",
)
ERRORS_KEY = "errors"


def seed_cell(open_correct: bool, closed_correct: bool) -> str:
    """Name of the table cell for one case."""
    open_part = "open_correct" if open_correct else "open_wrong"
    closed_part = "closed_correct" if closed_correct else "closed_wrong"
    return f"{open_part}__{closed_part}"


def _is_error(record: Mapping[str, Any]) -> bool:
    status = record.get("status")
    return isinstance(status, str) and status.startswith("error:")


def seed_table(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Count records per cell, plus failed cases under "errors".

    Errored cases are counted apart rather than scored as wrong (the project's rule: an LM or
    parse failure is never silently a 0). Records lacking either correctness flag (or with
    None) were not scored and are left out. All four cells and "errors" are always present so
    tables from different runs line up.
    """
    table = dict.fromkeys(SEED_CELLS, 0)
    table[ERRORS_KEY] = 0
    for record in records:
        if _is_error(record):
            table[ERRORS_KEY] += 1
            continue
        open_ok, closed_ok = record.get("open_correct"), record.get("closed_correct")
        if open_ok is None or closed_ok is None:
            continue
        table[seed_cell(bool(open_ok), bool(closed_ok))] += 1
    return table
