"""Each pivot's valid cases as read by people: the share a reading found valid, prediction-powered.

Readings come from the run's review folder: the review sample's verdicts (`review/*.jsonl`) and those of the
per-pivot sheets (`reeval review RUN --sheet`, a uniform draw among one pivot's accepted cases each, read back
into `review/accepted-only/*.jsonl`). Among a pivot's cases the judge accepted, every case is unlabelled and the
read ones labelled; the judge's `p_valid`, where it gives one, is the prediction (metrics.validity). A case read
in both places keeps the review sample's majority.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments.review import load_verdicts, majority_vote
from experiments.review.sheet import ACCEPTED_ONLY_DIR
from experiments.validity.inputs import REVIEW_DIR, human_decisions, judged_population, reviewer_kinds
from metrics.validity import validity_figures

DECISIONS = ("valid", "invalid")


def _accepted_only(review_dir: Path) -> tuple[dict[str, bool | None], list[str]]:
    files = sorted((review_dir / ACCEPTED_ONLY_DIR).glob("*.jsonl"))
    if not files:
        return {}, []
    votes = majority_vote(load_verdicts(files))
    decided = {i: (v.decision == "valid" if v.decision in DECISIONS else None) for i, v in votes.items()}
    return decided, sorted({a for v in votes.values() for a in v.annotators})


def readings(run_dir: Path) -> tuple[dict[str, bool | None], dict[str, str]]:
    """(case id -> valid by the readers' majority, None without one; reader -> their kind)."""
    sample, _ = human_decisions(run_dir)
    sheets, _ = _accepted_only(run_dir / REVIEW_DIR)
    return {**sheets, **sample}, reviewer_kinds(run_dir)


def read_share(records: list[dict], human: dict[str, bool | None]) -> dict[str, Any] | None:
    """The PPI estimate of the valid share among one row's accepted cases, or None when nobody read any."""
    population, judged = judged_population(records)
    accepted = [c for c in population if c.accepted]
    read = {c.id: human[c.id] for c in accepted if c.id in human}
    if not any(v is not None for v in read.values()):
        return None
    figures = validity_figures(accepted, read, judged=judged)
    ppi = figures.accepted_valid_ppi
    return {
        "read": figures.reviewed_n,
        "valid": figures.human_valid_n,
        "accepted": len(accepted),
        "estimate": ppi.estimate,
        "low": ppi.low,
        "high": ppi.high,
        "method": ppi.method,
        "note": ppi.note,
    }
