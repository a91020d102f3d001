"""A pivot comparison's figures from its records: per pivot (and the rules row) the funnel from seeds to valid
cases, validity, attack success and flips per target, cost per valid case and the cases another row made
identically; between every two rows, attack success and flips paired on the cases both made valid.

Records carry `pivot` (the row), `case_key` (the generator's case id, the same for every row) and the
generator's own fields; a row's cost (`pivot_tokens`, their prompt and completion parts, `pivot_seconds`,
`pivot_cached_calls`) is on the first record of each seed, its token counts left out where no call left one: a
row none of whose calls did has no token figure (None), not 0.
"""

from __future__ import annotations

import json
from typing import Any

from experiments.lm.prices import Price, dollars, is_local
from experiments.tasks.pivot_generators import is_attack
from metrics.attack import attack_summary, is_valid
from metrics.intervals import rate_with_ci
from metrics.pivot_pairs import identical_shares, pairwise

NOT_SELECTED = "rejected:seed_not_selected"
UNREACHABLE = "rejected:level_unreachable"


def _errored(record: dict) -> bool:
    return str(record.get("status", "")).startswith("error:")


def generated(records: list[dict]) -> list[dict]:
    """A row's attack cases the generator made or refused (not unselected seeds, helpers or errors)."""
    return [r for r in records if is_attack(r) and r.get("status") != NOT_SELECTED and not _errored(r)]


def _rate(flags: list) -> float:
    decided = [f for f in flags if f is not None]
    return sum(decided) / len(decided) if decided else float("nan")


def row_figures(
    records: list[dict], targets: list[str], model: str | None = None, price: Price | None = None
) -> dict[str, Any]:
    """One row's funnel, validity, success per target and cost (in dollars too where `model` has a price: the
    config's `price`, LiteLLM's map, or none for a local model)."""
    made = generated(records)
    selected = {r["seed_id"] for r in made}
    reachable = {r["seed_id"] for r in made if r.get("status") != UNREACHABLE}
    valid = [r for r in made if is_valid(r)]
    judged = [r["judge"] for r in made if r.get("judge")]
    counted = [r for r in records if "pivot_tokens" in r]
    tokens = sum(r["pivot_tokens"] for r in counted) if counted else None
    seconds = sum(r.get("pivot_seconds", 0.0) for r in records)
    cost = (
        dollars(
            model,
            sum(r.get("pivot_prompt_tokens", 0) for r in counted),
            sum(r.get("pivot_completion_tokens", 0) for r in counted),
            price,
        )
        # Without a count a provider's bill is unknown; a local model's is nothing either way.
        if counted or (model and price is None and is_local(model))
        else None
    )
    return {
        "summary": attack_summary(made, targets),
        "seeds": len({r["seed_id"] for r in records}),
        "selected": len(selected),
        "reachable": len(reachable),
        "cases": len(made),
        "passed_checks": sum(1 for r in made if r.get("judge") or r.get("status") == "accepted"),
        "valid": len(valid),
        "valid_seeds": len({r["seed_id"] for r in valid}),
        "errors": sum(_errored(r) for r in records),
        "acceptance": sum(1 for r in made if r.get("judge") or r.get("status") == "accepted") / len(made)
        if made
        else float("nan"),
        "yield": rate_with_ci([s in {r["seed_id"] for r in valid} for s in selected]),
        "judge_if": _rate([j["if"] for j in judged]),
        "judge_only_if": _rate([j["only_if"] for j in judged]),
        "versions": sorted({str(r["program_version"]) for r in records if r.get("program_version")}),
        "tokens": tokens,
        "seconds": round(seconds, 1),
        "cached_calls": sum(r.get("pivot_cached_calls", 0) for r in records),
        "tokens_per_valid": None if tokens is None else tokens / len(valid) if valid else float("nan"),
        "seconds_per_valid": seconds / len(valid) if valid else float("nan"),
        "dollars": cost,
        "dollars_per_valid": cost / len(valid) if cost is not None and valid else None,
    }


def _what_it_is(record: dict) -> str:
    return json.dumps([record.get("context"), record.get("answers")], sort_keys=True)


def identical(by_row: dict[str, list[dict]]) -> dict[str, dict[str, Any]]:
    """Per row: of its valid cases, those another row made word for word (same text, same expected answer)."""
    cases = {name: {r["case_key"]: _what_it_is(r) for r in generated(rows)} for name, rows in by_row.items()}
    valid = {name: [r["case_key"] for r in generated(rows) if is_valid(r)] for name, rows in by_row.items()}
    return identical_shares(cases, valid)


def _outcomes(rows: list[dict], target: str, measure: str) -> dict[str, bool | None]:
    """Per valid case: the target failed it ('success'), or read its original right and failed it ('flip')."""
    out: dict[str, bool | None] = {}
    for r in generated(rows):
        answer = (r.get("targets") or {}).get(target)
        if not is_valid(r) or not answer or answer.get("perturbed_correct") is None:
            continue
        failed = not answer["perturbed_correct"]
        if measure == "success":
            out[r["case_key"]] = failed
        else:
            original = answer.get("original_correct")
            out[r["case_key"]] = None if original is None else bool(original and failed)
    return out


def pairs(by_row: dict[str, list[dict]], targets: list[str]) -> list[dict[str, Any]]:
    """Every two rows, per target and measure (success, flip), on the cases both made valid and the target
    answered: B - A with its bootstrap interval and the exact McNemar p."""
    out = []
    for target in targets:
        for measure in ("success", "flip"):
            outcomes = {name: _outcomes(rows, target, measure) for name, rows in by_row.items()}
            out += [{"target": target, "measure": measure, **row} for row in pairwise(outcomes)]
    return out
