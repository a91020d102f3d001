"""The attack metric that generator programs are optimised against, and its summaries.

A generated case scores only if it is valid: it passed the program's cheap checks and the
judge said yes to both "if" and "only-if". Among valid cases the score rises with the share of
targets that answer the perturbed case wrongly:

    score = 0                                         if the case is not valid
    score = (1 - strength) + strength * failure_rate  if it is

`strength` in [0, 1] is the trade-off. At 0 every valid case is worth 1 and the optimiser only
learns to produce valid cases (the widest validity margin: it is never rewarded for pushing a
case towards the edge of what the judge accepts). At 1 a valid case that fools no target is
worth nothing, so the optimiser is rewarded only for cases that make targets fail, and it will
accept fewer valid cases to get them. At 0.5 a valid case that fools every target is worth
twice one that fools none. An invalid case is worth 0 at every strength, so no setting can
buy target failures with broken cases (an unanswerable-looking swap, a leaked old answer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .intervals import rate_with_ci, wilson_interval


def attack_score(valid: bool, target_wrong: Sequence[bool], strength: float) -> float:
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength must be in [0, 1], got {strength}")
    if not valid:
        return 0.0
    failure = sum(map(bool, target_wrong)) / len(target_wrong) if target_wrong else 0.0
    return (1.0 - strength) + strength * failure


def setting_score(valid: Sequence[bool], failure: Sequence[float], strength: float) -> float:
    """A dial setting's score over the validation seeds, used to choose between settings (not per case):

        (1 - strength) * yield + strength * lower 95% Wilson bound of success among its valid cases

    `valid` has one flag per seed, `failure` the share of targets fooled per valid case. Summed per seed, the
    attack score makes a rejected seed worth 0 at every strength, so a setting that makes harder cases of
    fewer seeds loses at strength 1 too: yield decides, and the strengths choose alike (measured on the
    unanswerable background dial, docs/results/strength.md). Here strength 0 asks for the most valid cases,
    strength 1 for the hardest ones; the lower bound keeps a setting with two lucky cases from winning."""
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength must be in [0, 1], got {strength}")
    if not valid:
        return 0.0
    made = sum(map(bool, valid))
    hardness = wilson_interval(sum(failure), made)[0] if made else 0.0
    return (1.0 - strength) * made / len(valid) + strength * hardness


def is_valid(record: Mapping[str, Any]) -> bool:
    """Passed the checks and, where a judge ran, both of its verdicts."""
    if record.get("status") != "accepted":
        return False
    verdicts = record.get("judge")
    return verdicts is None or (verdicts.get("if") is True and verdicts.get("only_if") is True)


def attack_summary(records: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> dict[str, Any]:
    """Validity over generated cases and, per target, attack success over valid cases.

    attack success = the target answers the valid perturbed case wrongly; flip = it answered the
    original correctly and the perturbed case wrongly (the failure the perturbation caused).
    Every rate carries a Wilson interval.
    """
    generated = [
        r
        for r in records
        if r.get("status") != "rejected:seed_not_selected" and not str(r.get("status", "")).startswith("error:")
    ]
    valid = [r for r in generated if is_valid(r)]
    summary: dict[str, Any] = {
        "generated": len(generated),
        "validity": rate_with_ci([is_valid(r) for r in generated]),
        "score": _mean([r.get("attack_score", 0.0) for r in generated]),
        "targets": {},
    }
    for name in targets:
        answered = [
            r["targets"][name]
            for r in valid
            if name in r.get("targets", {}) and r["targets"][name].get("perturbed_correct") is not None
        ]
        both = [a for a in answered if a.get("original_correct") is not None]
        summary["targets"][name] = {
            "success": rate_with_ci([not a["perturbed_correct"] for a in answered]),
            "flip": rate_with_ci([a["original_correct"] and not a["perturbed_correct"] for a in both]),
            "original_accuracy": rate_with_ci([a["original_correct"] for a in both]),
        }
    return summary


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def flat_metrics(prefix: str, summary: Mapping[str, Any]) -> dict[str, float]:
    """MLflow-ready numbers: rate and interval bounds for validity and every target's success."""
    out = {f"{prefix}.generated": summary["generated"], f"{prefix}.score": summary["score"]}
    for key in ("rate", "low", "high"):
        out[f"{prefix}.validity.{key}"] = summary["validity"][key]
    for name, rates in summary["targets"].items():
        for measure, rate in rates.items():
            for key in ("rate", "low", "high"):
                out[f"{prefix}.{name}.{measure}.{key}"] = rate[key]
            out[f"{prefix}.{name}.{measure}.n"] = rate["n"]
    return out


def format_rate(rate: Mapping[str, Any]) -> str:
    """ "0.40 [0.20, 0.63] (n=15)" — a rate as the tables print it."""
    if not rate["n"]:
        return "— (n=0)"
    return f"{rate['rate']:.2f} [{rate['low']:.2f}, {rate['high']:.2f}] (n={rate['n']})"
