"""Which rows of a shipped QA set generators and checks may be developed on, and which are kept for
measuring them.

Checks built by reading cases score better on the rows they were built from than on rows nobody
read (docs/results/held_out.md), so a
validity figure is only a property of a generator when it comes from rows held out of that work.
Rows are named by their position in the shipped file (0-based, before ReEval's filters), which no
later change to the filters or to the loader can move.

NQ's development rows: 0-999 hold every row the shipped configs, the reviewed runs and the tests
read (they take the first 40-80 rows); 5000-5499 feed the judge's calibration controls
(judge_calibration.yaml: offset 5000). ARC-Challenge's development rows: test questions 0-199 (the
counterfactual configs and the bench take the first 40-55). Every other row is held out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar

Split = Literal["all", "development", "held_out"]
SPLITS: tuple[str, ...] = ("all", "development", "held_out")

DEVELOPMENT_ROWS: dict[str, tuple[tuple[int, int], ...]] = {
    "nq": ((0, 1000), (5000, 5500)),
    # ARC-Challenge test: the shipped counterfactual configs read the first 40-55 questions; 0-199 leaves them room
    "arc_challenge": ((0, 200),),
}

T = TypeVar("T")


def is_development(source: str, position: int) -> bool:
    return any(start <= position < end for start, end in DEVELOPMENT_ROWS[source])


def select_split(rows: Sequence[T], source: str, split: str) -> list[T]:
    """The rows of `split`, in file order. Only sources with declared development rows have splits."""
    if split == "all":
        return list(rows)
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; splits: {', '.join(SPLITS)}")
    if source not in DEVELOPMENT_ROWS:
        raise ValueError(
            f"data.split: {source!r} has no declared development rows (only "
            f"{', '.join(DEVELOPMENT_ROWS)}); use split: all"
        )
    keep_development = split == "development"
    return [row for i, row in enumerate(rows) if is_development(source, i) == keep_development]
