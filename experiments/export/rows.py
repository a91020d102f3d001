"""One exported row per case: the fields a reader of the case needs, under one schema for every task.

Internal bookkeeping (attempts, timings, proposals, check results, the judge's raw replies) stays in the
run store. A counterfactual question is stored without the lettered options the targets are shown: the
options are their own field, as in ARC and FaithEval.
"""

from __future__ import annotations

from typing import Any

from experiments.export.privacy import Scrubber

# Field name -> what it holds (the card's field table and the Croissant field descriptions).
FIELDS: dict[str, str] = {
    "id": "case id: the source row's id and the kind of case, joined by ':'",
    "seed_id": "id of the source row the case was made from",
    "task": "answer_swap, context_enrich, unanswerable, inconsistent or counterfactual",
    "question": "the question, unchanged from the source row",
    "context": "the passage a model under test reads (perturbed)",
    "answers": "answers the perturbed passage supports (FaithEval's keyword 'unknown' or 'conflict' where none)",
    "original_context": "the source row's passage before the perturbation (empty: the question alone)",
    "original_answers": "the source row's answers",
    "status": "accepted, or rejected: / error: followed by the check or error that decided it",
    "generator_version": "the generator that made the case (reeval's CHANGELOG names each version)",
    "pivot": "the model that wrote the perturbation",
    "judge_p_valid": "the judge's probability that the case is valid (null: no judge)",
    "human_verdict": "the reviewers' majority: valid, invalid, or empty when not reviewed",
    "choices": "options of a multiple-choice question ({label: [...], text: [...]}); empty otherwise",
    "answer_key": "label of the option the perturbed passage supports",
    "original_answer_key": "label of the option the original question keys",
    "supporting_sentence": "context enriching: the sentence kept verbatim from the source passage",
    "background": "context enriching: the condensed retrieved text; `context` is it merged with the kept sentence",
}


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def choices_of(record: dict[str, Any]) -> dict[str, list[str]]:
    options = record.get("options") or []
    if not isinstance(options, list):
        return {"label": [], "text": []}
    if options and isinstance(options[0], dict):  # external rows keep [{label, text}]
        return {"label": [str(o["label"]) for o in options], "text": [str(o["text"]) for o in options]}
    labels = _strings(record.get("choice_labels")) or [chr(ord("A") + i) for i in range(len(options))]
    return {"label": labels[: len(options)], "text": _strings(options)}


def bare_question(question: str, choices: dict[str, list[str]]) -> str:
    """The question without the lettered options appended for the targets ("\\nA. text" lines)."""
    lines = question.split("\n")
    option_lines = {f"{label}. {text}" for label, text in zip(choices["label"], choices["text"], strict=True)}
    while len(lines) > 1 and lines[-1] in option_lines:
        lines.pop()
    return "\n".join(lines)


def public_row(record: dict[str, Any], human: dict[str, bool | None], scrubber: Scrubber) -> dict[str, Any]:
    choices = choices_of(record)
    verdict = human.get(str(record.get("id")))
    judge = record.get("judge") or {}
    p_valid = judge.get("p_valid") if isinstance(judge, dict) else None
    row = {
        "id": str(record.get("id", "")),
        "seed_id": str(record.get("seed_id", "")),
        "task": str(record.get("task", "")),
        "question": bare_question(str(record.get("question", "")), choices),
        "context": str(record.get("context") or ""),
        "answers": _strings(record.get("answers")),
        "original_context": str(record.get("original_context") or ""),
        "original_answers": _strings(record.get("original_answers")),
        "status": str(record.get("status", "")),
        "generator_version": str(record.get("program_version", "")),
        "pivot": str(record.get("pivot", "")),
        "judge_p_valid": None if p_valid is None else float(p_valid),
        "human_verdict": "" if verdict is None else ("valid" if verdict else "invalid"),
        "choices": choices,
        "answer_key": str(record.get("answer_label") or ""),
        "original_answer_key": str(record.get("original_answer_label") or ""),
        "supporting_sentence": str(record.get("supporting_sentence") or ""),
        "background": str(record.get("background") or ""),
    }
    return scrubber.value(row)


def hf_features():
    """The rows' explicit schema, so an all-empty column still loads with its type."""
    import datasets

    text = datasets.Value("string")
    return datasets.Features(
        {
            "id": text,
            "seed_id": text,
            "task": text,
            "question": text,
            "context": text,
            "answers": datasets.List(text),
            "original_context": text,
            "original_answers": datasets.List(text),
            "status": text,
            "generator_version": text,
            "pivot": text,
            "judge_p_valid": datasets.Value("float64"),
            "human_verdict": text,
            "choices": {"label": datasets.List(text), "text": datasets.List(text)},
            "answer_key": text,
            "original_answer_key": text,
            "supporting_sentence": text,
            "background": text,
        }
    )
