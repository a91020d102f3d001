"""Choose the judge's method and parameters on the calibration half of the controls; measure every
method on the held-out half.

A threshold is chosen per case kind (answer / unanswerable) to maximise the worst per-condition
accuracy of that kind on the calibration half (ties: the mean, then the threshold nearest 0.5),
because an overall accuracy lets a judge give up on one condition. The method is chosen the same
way (leximin over conditions), on the calibration half only, so the held-out numbers stay an
honest estimate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import get_args

from experiments.judging.controls import CONDITIONS, KIND
from programs.judge import FEATURES, METHODS, CaseKind, extraction_signals, score

KINDS: tuple[str, ...] = get_args(CaseKind)
# reasoned as it is (argmax verdicts), next to reasoned with a threshold on its verdict probabilities.
VARIANTS = ("reasoned_as_is",) + METHODS


def _rows(records: Iterable[dict], half: str | None = None) -> list[dict]:
    return [
        current_signals(r)
        for r in records
        if r.get("condition") in CONDITIONS
        and r.get("judge", {}).get("signals") is not None
        and (half is None or r.get("half") == half)
    ]


def current_signals(record: dict) -> dict:
    """Extraction signals as today's code reads the recorded answers: the comparison is code, so a
    better rule refits on a finished study without a single LM call."""
    judge = record["judge"]
    if judge.get("extracted") is None or "context" not in record:
        return record
    fresh = extraction_signals(
        judge["extracted"], record["context"], record["answers"][0], (record.get("original_answers") or [None])[0]
    )
    return {**record, "judge": {**judge, "signals": {**judge["signals"], **fresh}}}


def _params(variant: str) -> dict:
    return {"method": "reasoned" if variant == "reasoned_as_is" else variant}


def _scores(rows: list[dict], params: dict) -> list[float | None]:
    return [score(KIND[r["condition"]], r["judge"]["signals"], params) for r in rows]


def condition_accuracy(rows: list[dict], scores: list[float | None], threshold: dict[str, float]) -> dict[str, dict]:
    """Per condition: right verdicts among scored controls, and how many could not be scored."""
    out = {}
    for condition in CONDITIONS:
        pairs = [(r, s) for r, s in zip(rows, scores, strict=True) if r["condition"] == condition]
        scored = [(r, s) for r, s in pairs if s is not None]
        right = sum((s >= threshold[KIND[condition]]) == r["expected_valid"] for r, s in scored)
        out[condition] = {
            "n": len(pairs),
            "unjudged": len(pairs) - len(scored),
            "accuracy": right / len(scored) if scored else float("nan"),
        }
    return out


def _objective(accuracy: dict[str, dict], kind: str) -> tuple[float, float]:
    values = [
        a["accuracy"] for c, a in accuracy.items() if KIND[c] == kind and a["n"] and a["accuracy"] == a["accuracy"]
    ]  # x == x: not NaN
    return (min(values), sum(values) / len(values)) if values else (-1.0, -1.0)


def fit_threshold(rows: list[dict], scores: list[float | None], kind: str) -> float:
    values = sorted({s for r, s in zip(rows, scores, strict=True) if s is not None and KIND[r["condition"]] == kind})
    if not values:
        return 0.5
    midpoints = [(a + b) / 2 for a, b in zip(values, values[1:], strict=False)]
    candidates = [values[0] - 1e-9, *midpoints, values[-1] + 1e-9]

    def objective(t: float) -> tuple[float, float, float]:
        return (*_objective(condition_accuracy(rows, scores, {kind: t, **_other(kind)}), kind), -abs(t - 0.5))

    best = max(candidates, key=objective)
    return float(best)


def _other(kind: str) -> dict[str, float]:
    return {k: 0.5 for k in KINDS if k != kind}


def fit_stacked(rows: list[dict]) -> dict[str, list[float]]:
    """Logistic weights per kind over FEATURES; balanced classes so the rarer verdict still counts."""
    from sklearn.linear_model import LogisticRegression

    weights: dict[str, list[float]] = {}
    for kind in FEATURES:  # a multiple choice's score is its choice alone: no weights
        usable = [
            r for r in rows if KIND[r["condition"]] == kind and all(f in r["judge"]["signals"] for f in FEATURES[kind])
        ]
        labels = [r["expected_valid"] for r in usable]
        if len(set(labels)) < 2:
            weights[kind] = [0.0] * (len(FEATURES[kind]) + 1)
            continue
        x = [[r["judge"]["signals"][f] for f in FEATURES[kind]] for r in usable]
        model = LogisticRegression(class_weight="balanced", C=1.0, max_iter=1000).fit(x, labels)
        weights[kind] = [float(model.intercept_[0])] + [float(w) for w in model.coef_[0]]
    return weights


def auc(rows: list[dict], scores: list[float | None], valid: str, invalid: str) -> float:
    """ROC AUC of the score separating one valid condition from one invalid one (ties count half)."""
    pos = [s for r, s in zip(rows, scores, strict=True) if r["condition"] == valid and s is not None]
    neg = [s for r, s in zip(rows, scores, strict=True) if r["condition"] == invalid and s is not None]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


AUC_PAIRS = (
    ("gold_answer", "other_answer"),
    ("gold_answer", "two_answers"),
    ("answer_removed", "original_as_unanswerable"),
    ("option_gold", "option_other"),
)


def fit_and_measure(records: Iterable[dict], variants: Iterable[str] = VARIANTS) -> dict:
    """Every variant fitted on the calibration half and measured on the held-out half; the chosen one
    is the best on the calibration half's worst condition."""
    records = list(records)
    calibration, held_out = _rows(records, "calibration"), _rows(records, "held_out")
    results: dict[str, dict] = {}
    for variant in variants:
        params = _params(variant)
        if variant == "stacked":
            params["weights"] = fit_stacked(calibration)
        cal_scores = _scores(calibration, params)
        fixed = variant == "reasoned_as_is"  # nothing to fit: measured wherever its signals were collected
        measured = (calibration, cal_scores) if not fixed else (held_out, _scores(held_out, params))
        if not any(s is not None for r, s in zip(*measured, strict=True) if KIND[r["condition"]] != "option"):
            continue  # the study did not collect this method's signals (a multiple choice is every method's)
        if fixed:
            thresholds = {k: 0.5 for k in KINDS}  # the argmax verdicts: P(valid) ≥ 0.5 only when both say so
        else:
            thresholds = {k: fit_threshold(calibration, cal_scores, k) for k in KINDS}
        if variant != "reasoned_as_is":
            params["thresholds"] = thresholds
        held_scores = _scores(held_out, params)
        cal_accuracy = condition_accuracy(calibration, cal_scores, thresholds)
        held_accuracy = condition_accuracy(held_out, held_scores, thresholds)
        results[variant] = {
            "params": params,
            "calibration": cal_accuracy,
            "held_out": held_accuracy,
            "held_out_worst": min((a["accuracy"] for a in held_accuracy.values() if a["n"]), default=float("nan")),
            "calibration_worst": min((a["accuracy"] for a in cal_accuracy.values() if a["n"]), default=float("nan")),
            "auc": {f"{v}_vs_{i}": auc(held_out, held_scores, v, i) for v, i in AUC_PAIRS},
        }
    if not results:
        return {"results": {}, "chosen": None}
    # Leximin: the best worst condition, then the best second worst, and so on, so a condition every
    # method scores alike (a multiple choice is judged the same by all) does not decide by itself.
    chosen = max(
        results,
        key=lambda v: (
            sorted(_finite(a["accuracy"]) for a in results[v]["calibration"].values() if a["n"]),
            v != "reasoned_as_is",
        ),
    )
    return {
        "results": results,
        "chosen": chosen,
        "params": results[chosen]["params"],
        "controls": {"calibration": len(calibration), "held_out": len(held_out)},
    }


def _finite(x: float) -> float:
    return x if isinstance(x, float) and not math.isnan(x) else -1.0


def method_table(fitted: dict) -> tuple[list[str], list[list[str]]]:
    """Each method's held-out accuracy per condition, its worst, and its AUCs; the chosen one marked."""
    header = ["method", *CONDITIONS, "worst", *(f"AUC {v}/{i}" for v, i in AUC_PAIRS)]
    rows = []
    for variant, result in fitted.get("results", {}).items():
        held = [result["held_out"][c] for c in CONDITIONS]
        cells = [f"{a['accuracy']:.0%} (n={a['n'] - a['unjudged']})" for a in held]
        aucs = [f"{result['auc'][f'{v}_vs_{i}']:.2f}" for v, i in AUC_PAIRS]
        mark = " **(chosen)**" if variant == fitted.get("chosen") else ""
        rows.append([variant + mark, *cells, f"{result['held_out_worst']:.0%}", *aucs])
    return header, rows


def markdown(fitted: dict) -> str:
    """The comparison table alone, as the closing note and the README show it."""
    header, rows = method_table(fitted)
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
