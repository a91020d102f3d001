"""Beside the tables: per task what was generated and how valid it is, per stage what it cost, and
what sharing saved."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from experiments.review import ReviewFormatError
from experiments.validity import run_validity

logger = logging.getLogger(__name__)


def validity_figure(stage_run_id: str, calibration: Mapping[str, float]) -> str:
    """The review-based estimate when the stage's cases were reviewed, else the judge's acceptance."""

    try:
        rv = run_validity(stage_run_id, calibration=calibration)
    except (FileNotFoundError, ReviewFormatError) as exc:
        logger.warning("validity of %s: %s", stage_run_id, exc)
        return "—"
    f = rv.figures
    ppi = f.accepted_valid_ppi
    if not f.judge_alone and ppi is not None and ppi.defined:
        return (
            f"{ppi.estimate:.0%} valid [{ppi.low:.0%}, {ppi.high:.0%}] (review of {f.reviewed_n}, prediction-powered)"
        )
    if not f.judged:
        return f"string checks only: {f.judged_n} accepted, no judge"
    text = f"judge accepted {f.judge_accepted_n}/{f.judged_n} ({f.judge_acceptance:.0%})"
    accuracy = calibration.get("judge_calibration.accuracy")
    if accuracy is not None and accuracy == accuracy:
        text += f"; judge right on {accuracy:.0%} of calibration controls"
    return text


def task_rows(
    tasks: Sequence[str],
    pivots: Sequence[str],
    seeds: Mapping[str, int],
    generation: Mapping[tuple[str, str], Mapping[str, float]],
    evaluated: Mapping[str, int],
    validity: Mapping[tuple[str, str], str],
) -> list[dict[str, Any]]:
    rows = []
    for task in tasks:
        per_pivot = [generation.get((task, p), {}) for p in pivots]
        figures = [
            f"{p}: {validity[(task, p)]}" if len(pivots) > 1 else validity[(task, p)]
            for p in pivots
            if (task, p) in validity
        ]
        rows.append(
            {
                "task": task,
                "seeds": seeds.get(task, 0),
                "selected": int(sum(m.get("seeds_selected", 0) for m in per_pivot)),
                "generated": int(sum(m.get("cases_generated", 0) for m in per_pivot)),
                "accepted": int(sum(m.get("cases_accepted", 0) for m in per_pivot)),
                "evaluated": evaluated.get(task, 0),
                "validity": "; ".join(figures) or "—",
            }
        )
    return rows


def stage_rows(stages: Mapping[str, Mapping[str, float]], ran: Mapping[str, bool]) -> list[dict[str, Any]]:
    return [
        {
            "stage": name,
            "ran": ran.get(name, False),
            "items": int(m.get("items", 0)),
            "calls": float(m.get("lm.calls", 0.0)),
            "lm_seconds": float(m.get("lm.seconds", 0.0)),
            "prompt_read_share": m.get("lm.prompt_read_share"),  # absent: no counted call, or a ledger from before
            "wall_seconds": float(m.get("wall_seconds", 0.0)),
            "dollars": m.get("lm.cost_usd"),  # absent: a model without a price, or a ledger from before
            "cpu_seconds": m.get("cpu_seconds"),
        }
        for name, m in stages.items()
    ]
