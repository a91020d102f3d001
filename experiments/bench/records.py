"""Scored evaluation records from the shared answers: each use of an ask becomes the record an
evaluate run would have written for it (same fields, same scoring), so every table of
metrics.evaluation / metrics.transfer and the evaluation report read it unchanged."""

from __future__ import annotations

from collections.abc import Mapping

from experiments import task_registry
from experiments.bench.sharing import Plan
from metrics.evaluation import answer_position
from metrics.scores import score_record


def evaluation_records(plan: Plan, answers: Mapping[str, dict]) -> list[dict]:
    records = []
    for use in plan.uses:
        answer = answers.get(use.ask_id)
        if answer is None:
            continue  # not asked (a stage stopped by its error budget); counted as missing, not as wrong
        ask, case = plan.asks[use.ask_id], use.case
        original = use.variant == "original"
        golds = list((case.original_answers if original else case.answers) or [])
        record = {
            "id": f"{case.id}|{use.target}|{use.setting}|{use.decoding}|{use.variant}",
            "case_id": case.id,
            "seed_id": case.seed_id,
            "task": use.task,
            "task_answer": task_registry.task_answer(use.task),
            "generator": case.get("generator", ""),
            "target": use.target,
            "setting": use.setting,
            "decoding": use.decoding,
            "variant": use.variant,
            "asked_as": ask.setting,
            "demos": ask.demos,
            "ask_id": ask.id,
            "source": case.get("source", ""),
            "question": case.question,
            "context": ask.context,
            "answers": golds,
            "options": case.get("options"),
            "answer_label": case.get("original_answer_label") if original else case.get("answer_label"),
            "answer_position": answer_position(ask.context, golds[0]) if golds and ask.context else None,
            "prediction": answer.get("prediction"),
            "reasoning": answer.get("reasoning", ""),
            "status": answer.get("status", "ok"),
        }
        if answer.get("error"):
            record["error_message"] = answer["error"]
        records.append(score_record(record))
    return records
