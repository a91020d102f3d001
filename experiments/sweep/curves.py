"""A sweep's figures per level: yield of the generator, and per target and setting the attack success with
its interval and the paired difference against the default level on the cases both levels made."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from metrics import is_correct
from metrics.intervals import rate_with_ci
from metrics.paired import paired_difference

NOT_GENERATED = "rejected:seed_not_selected"


def level_yield(generation: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Selected seeds' cases, how many were accepted, and why the others were not (a level a seed cannot
    reach is a status of its own, counted here)."""
    made = [r for r in generation if r.get("status") != NOT_GENERATED]
    accepted = sum(r.get("status") == "accepted" for r in made)
    reasons = Counter(str(r.get("status")) for r in made if r.get("status") != "accepted")
    return {
        "cases": len(made),
        "accepted": accepted,
        "yield": rate_with_ci([r.get("status") == "accepted" for r in made]),
        "not_accepted": dict(reasons.most_common()),
    }


def _outcomes(records: Sequence[Mapping[str, Any]], target: str, setting: str) -> dict[str, dict[str, bool | None]]:
    """Per case id: attack success (the target fails the perturbed case) and whether it gave the answer the
    case's original passage held (its memory of the seed, for a swap)."""
    out: dict[str, dict[str, bool | None]] = {}
    for r in records:
        if r["target"] != target or r["setting"] != setting or r["variant"] != "perturbed":
            continue
        correct = r.get("task_correct")
        original = r.get("original_answers") or []
        out[r["case_id"]] = {
            "success": None if correct is None else not correct,
            "memory": None if correct is None or not original else is_correct(r.get("prediction") or "", original),
        }
    return out


def sweep_table(
    records_by_level: Mapping[str, Sequence[Mapping[str, Any]]],
    default: str,
    targets: Sequence[str],
    settings: Sequence[str],
) -> list[dict[str, Any]]:
    """One row per (level, target, setting): success [95% interval], memory answers, and the paired difference
    of success against the default level over cases made at both."""
    rows = []
    for target in targets:
        for setting in settings:
            base = _outcomes(records_by_level.get(default, []), target, setting)
            for level, records in records_by_level.items():
                here = _outcomes(records, target, setting)
                known = [o for o in here.values() if o["success"] is not None]
                shared = sorted(set(base) & set(here))
                paired = paired_difference([base[c]["success"] for c in shared], [here[c]["success"] for c in shared])
                rows.append(
                    {
                        "level": level,
                        "target": target,
                        "setting": setting,
                        "success": rate_with_ci([o["success"] for o in known]),
                        "memory": rate_with_ci([bool(o["memory"]) for o in known if o["memory"] is not None]),
                        "vs_default": paired,
                    }
                )
    return rows
