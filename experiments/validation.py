"""The validation stage every perturbation task shares: cheap checks (done by the programs), then
the judge LM on "if" / "only-if", then optionally human review (experiments/review/)."""

from __future__ import annotations

import functools
import logging
import random

import dspy

from experiments.lm_registry import ResolvedLM
from metrics.checks import mentions_any
from programs.judge import CaseJudge, judge_status

logger = logging.getLogger(__name__)


def judge_record(judge_lm: ResolvedLM, judge: CaseJudge, record: dict) -> dict:
    """The record with its `judge` verdicts and, if it had passed the checks, its new status."""
    expected = (record.get("answers") or [""])[0]
    with dspy.context(lm=judge_lm.lm, adapter=judge_lm.adapter()):
        out = judge(question=record.get("judge_question") or record["question"], context=record["context"],
                    expected_answer=expected, kind=record.get("judge_kind", "answer"),
                    original_answer=(record.get("original_answers") or [""])[0])
    verdicts = {"if": out.if_ok, "if_reason": out.if_reason, "only_if": out.only_if_ok,
                "only_if_reason": out.only_if_reason, "judge": judge_lm.config.name}
    status = judge_status(out.if_ok, out.only_if_ok) if record["status"] == "accepted" else record["status"]
    return {**record, "judge": verdicts, "status": status}


def validate(judge_lm: ResolvedLM | None, judge: CaseJudge, records: list[dict]) -> list[dict]:
    """The judge sees only cases that passed the cheap checks; without a judge role, records pass as they are."""
    if judge_lm is None:
        return records
    return [judge_record(judge_lm, judge, r) if r["status"] == "accepted" else r for r in records]


def judge_metrics(records: list[dict]) -> dict[str, float]:
    """Pass rate per verdict among judged cases; unparsed verdicts counted apart. only-if is asked
    (and so counted) only where "if" passed."""
    metrics: dict[str, float] = {}
    judged = [r for r in records if r.get("judge")]
    for key in ("if", "only_if"):
        asked = judged if key == "if" else [r for r in judged if r["judge"]["if"] is True]
        verdicts = [r["judge"][key] for r in asked]
        if verdicts:
            decided = [v for v in verdicts if v is not None]
            metrics[f"judge.{key}.pass_rate"] = sum(decided) / len(decided) if decided else float("nan")
            metrics[f"judge.{key}.unjudged"] = len(verdicts) - len(decided)
    if judged:
        metrics["judge.judged"] = len(judged)
    return metrics


# -- calibration: control cases whose right verdict is known without any LM ------------------------

CONDITIONS = ("gold_answer", "other_answer", "original_as_unanswerable")


def controls_for(example, pool: list, seed: int = 0) -> list[dict]:
    """Original context + its own gold (valid); + another question's answer not in the context
    (invalid); and the original context presented as an unanswerable case (invalid)."""
    rng = random.Random(f"{seed}:{example.id}")
    base = {"seed_id": example.id, "question": example.question, "context": example.context,
            "original_answers": list(example.answers), "status": "accepted", "task": "judge_calibration"}
    others = [e for e in pool if e.id != example.id and not mentions_any(example.context, e.answers)]
    return [
        {**base, "id": f"{example.id}:gold", "condition": "gold_answer", "expected_valid": True,
         "answers": list(example.answers)},
        {**base, "id": f"{example.id}:other", "condition": "other_answer", "expected_valid": False,
         "answers": [rng.choice(others).answers[0]]},
        {**base, "id": f"{example.id}:unanswerable", "condition": "original_as_unanswerable",
         "expected_valid": False, "answers": ["unknown"], "judge_kind": "unanswerable"},
    ]


# The control set is fixed by its source, not by the run's data: every run with the same judge is
# calibrated on the same cases (comparable numbers), which are the first cases of a dedicated
# judge_calibration run, so DSPy's cache answers them once either has run.
CALIBRATION_MAX_EVIDENCE_WORDS = 400
OTHER_ANSWER_POOL_SIZE = 2000


@functools.lru_cache(maxsize=2)
def _shipped_rows(source: str) -> tuple:
    """One read of the source per process, however many calibrations and pools ask for it."""
    from experiments.data import load_qa, resolve_dataset

    return tuple(load_qa(resolve_dataset(source).path))


def calibration_seeds(source: str = "nq") -> list:
    from experiments.filters import apply_reeval_filters

    examples, _ = apply_reeval_filters(list(_shipped_rows(source)), max_evidence_words=CALIBRATION_MAX_EVIDENCE_WORDS)
    return examples


def other_answer_pool(source: str = "nq") -> list:
    """Where "another question's answer" comes from, whatever the seeds: the source's first rows."""
    return list(_shipped_rows(source)[:OTHER_ANSWER_POOL_SIZE])


def control_cases(examples: list, n_per_condition: int, seed: int = 0, pool: list | None = None) -> list[dict]:
    seeds = [e for e in examples if e.get("context")]
    pool = seeds if pool is None else pool
    return [c for example in seeds[:n_per_condition] for c in controls_for(example, pool, seed)]


def calibration_metrics(judged: list[dict]) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for condition in CONDITIONS:
        rows = [r for r in judged if r["condition"] == condition]
        decided = [r for r in rows if not r["status"].startswith("error:")]
        right = sum((r["status"] == "accepted") == r["expected_valid"] for r in decided)
        metrics[f"judge_calibration.{condition}.accuracy"] = right / len(decided) if decided else float("nan")
        metrics[f"judge_calibration.{condition}.n"] = len(rows)
        metrics[f"judge_calibration.{condition}.unjudged"] = len(rows) - len(decided)
    decided = [r for r in judged if not r["status"].startswith("error:")]
    right = sum((r["status"] == "accepted") == r["expected_valid"] for r in decided)
    metrics["judge_calibration.accuracy"] = right / len(decided) if decided else float("nan")
    per_condition = [metrics[f"judge_calibration.{c}.accuracy"] for c in CONDITIONS]
    metrics["judge_calibration.worst_condition_accuracy"] = min(
        (a for a in per_condition if a == a), default=float("nan"))  # a == a: not NaN
    return metrics


def calibrate(judge_lm: ResolvedLM, judge: CaseJudge, n_per_condition: int, min_accuracy: float,
              source: str = "nq") -> dict[str, float]:
    controls = control_cases(calibration_seeds(source), n_per_condition, pool=other_answer_pool(source))
    judged = [judge_record(judge_lm, judge, c) for c in controls]
    metrics = calibration_metrics(judged)
    # Per condition: a judge that rejects everything is right on two conditions of three, and
    # an overall rate would hide that it throws away valid cases.
    for condition in CONDITIONS:
        accuracy = metrics[f"judge_calibration.{condition}.accuracy"]
        if not accuracy >= min_accuracy:
            logger.warning("JUDGE CALIBRATION BELOW THRESHOLD: %s is right on %.0f%% of the %s controls "
                           "(threshold %.0f%%); treat its verdicts with suspicion.", judge_lm.config.name,
                           100 * accuracy, condition, 100 * min_accuracy)
    return metrics
