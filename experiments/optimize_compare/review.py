"""Each variant's review-based validity on the test seeds: the blind verdicts given on the comparison's stage
(`reeval review <run>/<stage>`) weighed with the judge's scores, one variant at a time (prediction-powered,
metrics.validity). Cases of different variants that read the same are drawn into the review sample as one and
share its verdict (experiments.review.sample), so every case has the same chance of being read and a variant's
reviewed cases are a random draw of its own.

The figure is the valid share of a variant's accepted cases: where the checks and the judge let through invalid
cases that fool a target, it falls below the table's validity, which trusts them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from experiments.validity.inputs import load_inputs
from metrics.validity import validity_figures


def reviewed_validity(
    stage_id: str, runs_root: Path, records: Sequence[Mapping[str, Any]], variants: Sequence[str]
) -> dict[str, Any] | None:
    """{"variants": variant -> rate dict, "reviewers": their kinds}, or None when nobody reviewed the stage."""
    inputs = load_inputs(stage_id, runs_root)
    if not any(v is not None for v in inputs.human.values()):
        return None
    variant_of = {str(r["id"]): r.get("variant") for r in records if r.get("split") == "test"}
    out = {}
    for variant in variants:
        population = [c for c in inputs.population if variant_of.get(c.id) == variant]
        human = {i: d for i, d in inputs.human.items() if variant_of.get(i) == variant}
        est = validity_figures(population, human, judged=inputs.judged).accepted_valid_ppi
        out[variant] = (
            {"rate": est.estimate, "low": est.low, "high": est.high, "n": est.n_labelled, "accepted": est.n_population}
            if est is not None
            else {"rate": float("nan"), "low": float("nan"), "high": float("nan"), "n": 0, "accepted": 0}
        )
    kinds = sorted(set(inputs.reviewer_kinds.get(a, a) for a in inputs.annotators))
    return {"variants": out, "reviewers": kinds}
