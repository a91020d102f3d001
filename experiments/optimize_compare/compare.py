"""The comparison's numbers from an optimize stage's test records: every variant against the uncompiled one on
the same seeds, per target group (the optimisation targets, the held-out ones), and what each variant cost.

Two readings of attack success. *On valid cases*: the share of valid cases a target answers wrongly (Wilson
interval; the variants' valid cases differ, so it is not paired). *Per seed*: a test seed counts when its case
is valid and the target answers it wrongly; every variant has one per seed, so this is the paired outcome the
differences, the exact McNemar test and the seed-bootstrap intervals are computed on. A compiled program that
buys target failures with fewer valid cases shows up in the second and not the first. The first is paired too,
on the seeds valid under both variants: whether the cases both programs make valid are harder under one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from experiments.tasks.optimize import UNCOMPILED
from metrics.attack import is_valid
from metrics.intervals import rate_with_ci
from metrics.paired import paired_difference

GROUPS = ("optimised", "held_out")


def cases_of(records: Sequence[Mapping[str, Any]], variant: str) -> dict[str, Mapping[str, Any]]:
    """seed id -> that variant's test case."""
    return {r["seed_id"]: r for r in records if r.get("split") == "test" and r.get("variant") == variant}


def _errored(record: Mapping[str, Any] | None) -> bool:
    return record is None or str(record.get("status", "")).startswith("error:")


def validity_outcome(record: Mapping[str, Any] | None) -> bool | None:
    return None if _errored(record) else is_valid(record)


def fooled_outcome(record: Mapping[str, Any] | None, target: str) -> bool | None:
    """Valid and answered wrongly by the target; None where the case or the target's answer errored."""
    if _errored(record):
        return None
    if not is_valid(record):
        return False
    correct = record.get("targets", {}).get(target, {}).get("perturbed_correct")
    return None if correct is None else not correct


def variant_figures(
    records: Sequence[Mapping[str, Any]], variant: str, groups: Mapping[str, Sequence[str]], seeds: Sequence[str]
) -> dict[str, Any]:
    """Validity and, per group, attack success on valid cases and per seed (Wilson intervals)."""
    cases = cases_of(records, variant)
    validity = [validity_outcome(cases.get(s)) for s in seeds]
    out: dict[str, Any] = {
        "seeds": sum(s in cases for s in seeds),
        "errors": sum(_errored(cases.get(s)) for s in seeds),
        "validity": rate_with_ci([v for v in validity if v is not None]),
    }
    for group, targets in groups.items():
        fooled = [fooled_outcome(cases.get(s), t) for s in seeds for t in targets]
        on_valid = [fooled_outcome(cases[s], t) for s in seeds for t in targets if validity_outcome(cases.get(s))]
        out[group] = {
            "on_valid": rate_with_ci([f for f in on_valid if f is not None]),
            "per_seed": rate_with_ci([f for f in fooled if f is not None]),
        }
    return out


def paired_against(
    records: Sequence[Mapping[str, Any]],
    variant: str,
    groups: Mapping[str, Sequence[str]],
    seeds: Sequence[str],
    base: str = UNCOMPILED,
    *,
    resamples: int = 2000,
) -> dict[str, dict[str, Any]]:
    """variant minus base on the same seeds: validity, and per group the per-seed attack success and the attack
    success on the seeds whose cases are valid under both (key `<group>.valid_both`)."""
    ours, theirs = cases_of(records, variant), cases_of(records, base)
    out = {
        "validity": paired_difference(
            [validity_outcome(theirs.get(s)) for s in seeds],
            [validity_outcome(ours.get(s)) for s in seeds],
            resamples=resamples,
        )
    }
    for group, targets in groups.items():
        units = [(s, t) for s in seeds for t in targets]
        out[group] = paired_difference(
            [fooled_outcome(theirs.get(s), t) for s, t in units],
            [fooled_outcome(ours.get(s), t) for s, t in units],
            clusters=[s for s, _ in units],  # a seed's targets move together: resample seeds
            resamples=resamples,
        )
        both = [(s, t) for s, t in units if validity_outcome(theirs.get(s)) and validity_outcome(ours.get(s))]
        out[f"{group}.valid_both"] = paired_difference(
            [fooled_outcome(theirs.get(s), t) for s, t in both],
            [fooled_outcome(ours.get(s), t) for s, t in both],
            clusters=[s for s, _ in both],
            resamples=resamples,
        )
    return out


def comparison(
    records: Sequence[Mapping[str, Any]], variants: Sequence[str], groups: Mapping[str, Sequence[str]]
) -> list[dict[str, Any]]:
    """One row per variant: its figures and, for compiled ones, the paired differences against uncompiled."""
    seeds = sorted({r["seed_id"] for r in records if r.get("split") == "test"})
    rows = []
    for variant in variants:
        row = {"variant": variant, **variant_figures(records, variant, groups, seeds)}
        if variant != UNCOMPILED:
            row["vs_uncompiled"] = paired_against(records, variant, groups, seeds)
        rows.append(row)
    return rows


def cost(records: Sequence[Mapping[str, Any]], variant: str, meta: Mapping[str, Any] | None) -> dict[str, float]:
    """LM calls and seconds: compiling (from the compiled program's metadata) and running the test seeds."""
    cases = cases_of(records, variant).values()
    meta = meta or {}
    return {
        "compile_seconds": float(meta.get("compile_seconds", 0.0)),
        "compile_calls": float(meta.get("compile_calls", float("nan"))) if meta else 0.0,
        "test_seconds": round(sum(float(r.get("seconds", 0.0)) for r in cases), 3),
        "test_calls": float(sum(r.get("lm_calls", 0.0) for r in cases)),
        "test_cases": float(len(cases)),
    }
