"""The knowledge-conflict table by the old answer's kind: evidence / memory / other per reading group of the
kind (people / places and organisations / works and things / dates and numbers, as the blind sheets are
drawn), on the swaps of the seeds each target knows.

A swap's kind is the one its generator read where the old answer stands in the passage (`answer_kind` on the
case, programs/answer_kinds.py); a case without one (written before kinds were read) is `untyped`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from experiments.bench.conflict import swap_tasks
from metrics.conflict import LABELS, conflict_table
from programs.answer_kinds import Typed

# Below this many labelled known-seed swaps in a setting, a target's shares are too wide to split four ways
# (a Wilson interval at n = 30 is still about ±0.17): such a target is named, not tabled.
ENOUGH_SWAPS = 30


def kind_group(kind: str | None) -> str:
    """The reading group of an answer kind (programs.answer_kinds.Typed.group), `untyped` for none."""
    return Typed(kind, None, None, "").group if kind else "untyped"


def kind_table(
    records: Iterable[Mapping[str, Any]],
    tasks: Iterable[str] | None = None,
    enough: int = ENOUGH_SWAPS,
    valid: set[str] | None = None,
) -> tuple[list[dict], list[str]]:
    """Rows of (target, setting, group) with n and each label's share and interval, on the known-seed swaps of
    targets with at least `enough` labelled swaps in a setting; `valid`, where given, keeps only those case
    ids (swaps read valid); `tasks`, the swap generators by default. Also the targets left out for too few
    swaps."""
    tasks = set(swap_tasks() if tasks is None else tasks)
    swaps = [
        {**r, "answer_group": kind_group(r.get("answer_kind"))}
        for r in records
        if r.get("task") in tasks and r.get("seeds") == "known" and (valid is None or r.get("case_id") in valid)
    ]
    labelled: dict[tuple, int] = {}
    for r in swaps:
        if r.get("label") in LABELS:
            labelled[(r["target"], r["setting"])] = labelled.get((r["target"], r["setting"]), 0) + 1
    kept = {key for key, n in labelled.items() if n >= enough}
    targets = {r["target"] for r in swaps}
    left_out = sorted(targets - {t for t, _ in kept})
    rows = conflict_table(
        [r for r in swaps if (r["target"], r["setting"]) in kept], by=("target", "setting", "answer_group")
    )
    return rows, left_out
