"""The validation stage every perturbation task shares: cheap checks (done by the programs), then
the judge LM on "if" / "only-if", then optionally human review (experiments/review/)."""

from __future__ import annotations

import logging

import dspy

from experiments.lm.registry import ResolvedLM
from programs.judge import CaseJudge, judge_status
from programs.multiple_choice import unlettered

logger = logging.getLogger(__name__)


def judge_record(judge_lm: ResolvedLM, judge: CaseJudge, record: dict) -> dict:
    """The record with its `judge` verdicts and, if it had passed the checks, its new status."""
    expected = (record.get("answers") or [""])[0]
    kind, question, extra = record.get("judge_kind", "answer"), record.get("judge_question") or record["question"], {}
    if record.get("options") and kind != "unanswerable":
        # A multiple-choice case: the judge chooses among the question's own options.
        kind, extra = "option", {"options": list(record["options"])}
        question = unlettered(question, record.get("choice_labels") or [], record["options"])
    with dspy.context(lm=judge_lm.lm, adapter=judge_lm.adapter()):
        out = judge(
            question=question,
            context=record["context"],
            expected_answer=expected,
            kind=kind,
            original_answer=(record.get("original_answers") or [""])[0],
            **extra,
        )
    verdicts = {
        "if": out.if_ok,
        "if_reason": out.if_reason,
        "only_if": out.only_if_ok,
        "only_if_reason": out.only_if_reason,
        "judge": judge_lm.config.label,
        "method": out.method,
        "p_valid": out.p_valid,
        "signals": out.signals,
    }
    if getattr(out, "extracted", None) is not None:
        verdicts["extracted"] = out.extracted
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
