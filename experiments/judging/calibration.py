"""The judge calibration that opens every judged run: the run's judge, with the run's parameters,
on held-out controls (never the half its parameters were fitted on), accuracy per condition. The
controls are the stored set of the source (experiments/judging/control_set.py): a run reads them."""

from __future__ import annotations

import logging

from tqdm import tqdm

from experiments.judging.control_set import read_controls
from experiments.judging.controls import CONDITIONS
from experiments.lm.registry import ResolvedLM
from experiments.validation import judge_record
from programs.judge import CaseJudge

logger = logging.getLogger(__name__)


def calibration_metrics(judged: list[dict], prefix: str = "judge_calibration") -> dict[str, float]:
    metrics: dict[str, float] = {}
    for condition in CONDITIONS:
        rows = [r for r in judged if r["condition"] == condition]
        decided = [r for r in rows if not r["status"].startswith("error:")]
        right = sum((r["status"] == "accepted") == r["expected_valid"] for r in decided)
        metrics[f"{prefix}.{condition}.accuracy"] = right / len(decided) if decided else float("nan")
        metrics[f"{prefix}.{condition}.n"] = len(rows)
        metrics[f"{prefix}.{condition}.unjudged"] = len(rows) - len(decided)
    decided = [r for r in judged if not r["status"].startswith("error:")]
    right = sum((r["status"] == "accepted") == r["expected_valid"] for r in decided)
    metrics[f"{prefix}.accuracy"] = right / len(decided) if decided else float("nan")
    per_condition = [metrics[f"{prefix}.{c}.accuracy"] for c in CONDITIONS if metrics[f"{prefix}.{c}.n"]]
    metrics[f"{prefix}.worst_condition_accuracy"] = min(
        (a for a in per_condition if a == a),  # a == a: not NaN
        default=float("nan"),
    )
    return metrics


def usage_spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """What the judge spent on the controls, as `judge_calibration.usage.<key>`: its calls do not grow with the
    data, so an estimate must tell them from the judge's calls per case, which share the judge's `lm.` figures."""
    return {
        f"judge_calibration.usage.{key}": round(float(value) - float(before.get(key, 0.0)), 8)
        for key, value in after.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not key.endswith("share")
    }


def calibrate(
    judge_lm: ResolvedLM | None,
    judge: CaseJudge | None,
    n_per_condition: int,
    min_accuracy: float,
    source: str = "nq",
    progress: bool = True,
) -> dict[str, float]:
    """The judge's accuracy per condition; none where the run has no judge of its own or asks for no controls."""
    if judge is None or not n_per_condition:
        return {}
    controls = read_controls(source, n_per_condition)
    before = judge_lm.usage()
    judged = [
        judge_record(judge_lm, judge, c)
        for c in tqdm(
            controls, desc=f"judge calibration ({judge_lm.config.label})", unit="control", disable=not progress
        )
    ]
    metrics = calibration_metrics(judged)
    metrics.update(usage_spent(before, judge_lm.usage()))
    # Per condition: a judge that rejects everything is right on every invalid condition, and an
    # overall rate would hide that it throws away valid cases.
    for condition in CONDITIONS:
        accuracy = metrics[f"judge_calibration.{condition}.accuracy"]
        if metrics[f"judge_calibration.{condition}.n"] and not accuracy >= min_accuracy:
            logger.warning(
                "JUDGE CALIBRATION BELOW THRESHOLD: %s (%s) is right on %.0f%% of the %s controls "
                "(threshold %.0f%%); treat its verdicts with suspicion.",
                judge_lm.config.label,
                judge.method,
                100 * accuracy,
                condition,
                100 * min_accuracy,
            )
    return metrics
