"""One blind sheet per pivot of a pivot comparison, so that each pivot's cases are read by a reader of their own.

Each sheet is an accepted-only draw (``experiments.review.sheet``) among one pivot's accepted cases, written as
``OUT.<pivot>.md`` with its key beside it; a reader's verdicts come back through ``--import-sheet`` with that
key, and the comparison's report reads them as that pivot's read share. A reader who sees one pivot's cases
only cannot compare pivots while reading, nor learn one pivot's habits from another's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.review.sheet import accepted_only_draw, write_sheet


@dataclass(frozen=True)
class PivotSheet:
    pivot: str
    sheet: Path
    key: Path
    cases: int


def pivots_of(records: list[Mapping[str, Any]]) -> list[str]:
    """The rows of a comparison's records (pivots, and `rules`) in order of first appearance; fewer than two is
    no comparison."""
    seen: dict[str, None] = {}
    for record in records:
        if record.get("pivot") is not None and "target" not in record:
            seen.setdefault(str(record["pivot"]), None)
    return list(seen)


def sheet_path(out: Path, pivot: str) -> Path:
    """``OUT.<pivot>.md``: a provider's model name ('openai/gpt-4o-mini') becomes one file name part."""
    part = re.sub(r"[^\w.-]+", "_", pivot).strip("._") or "pivot"
    return out.with_name(f"{out.stem}.{part}{out.suffix or '.md'}")


def write_pivot_sheets(
    records: list[Mapping[str, Any]], run_id: str, out: str | Path, size: int | None, seed: int | None
) -> list[PivotSheet]:
    """A sheet per pivot that has accepted cases; a pivot without any gets none (and is not listed)."""
    out = Path(out)
    written = []
    for pivot in pivots_of(records):
        mine = [r for r in records if r.get("pivot") == pivot]
        if not any(r.get("status") == "accepted" for r in mine):
            continue
        draw = accepted_only_draw(mine, run_id, size, seed)
        sheet, key = write_sheet(draw, run_id, sheet_path(out, pivot))
        written.append(PivotSheet(pivot, sheet, key, len(draw.groups)))
    return written
