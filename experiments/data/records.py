"""The record forms every data set is normalised to (QA, multiple choice, passage), and the checks
that turn one file row into a record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from experiments.data.errors import DataError, describe, quote
from experiments.data.fields import field_error, missing, opt_str, req_str, str_list

#: Fields of a QA example, in order (flat QA form, MRQA and hub MRQA all map to these).
QA_FIELDS: tuple[str, ...] = ("id", "question", "context", "answers", "answer_starts", "title", "source")
#: Inputs of a QA example: the model sees the question and the evidence.
QA_INPUTS: tuple[str, ...] = ("question", "context")
#: Fields of a multiple-choice (ARC) example.
MC_FIELDS: tuple[str, ...] = (
    "id",
    "question",
    "choices",
    "options",
    "choice_labels",
    "answer_key",
    "answer",
    "source",
)
MC_INPUTS: tuple[str, ...] = ("question", "options")
#: Columns of the passage pool.
PASSAGE_FIELDS: tuple[str, ...] = ("id", "title", "text", "origin")


def _answer_starts(
    value: Any, answers: list[str], context: str, where: str, field: str = "answer_starts"
) -> list[int | None]:
    """Optional offsets, one per answer (int or null); each int must point at its answer."""
    if value is None:
        return [None] * len(answers)
    if not isinstance(value, list):
        raise field_error(where, field, "a list of integers or nulls", value)
    if len(value) != len(answers):
        raise DataError(f"{where}: field {field!r}: has {len(value)} entries but 'answers' has {len(answers)}")
    starts: list[int | None] = []
    for i, (s, a) in enumerate(zip(value, answers, strict=True)):
        if s is None:
            starts.append(None)
            continue
        if isinstance(s, bool) or not isinstance(s, int):
            raise DataError(f"{where}: field {field!r}: expected an integer or null, got {describe(s)} at index {i}")
        if not 0 <= s < len(context):  # not printed: Python cannot print an int of more than 4,300 digits
            raise DataError(
                f"{where}: field {field!r}: offset at index {i} is outside the context (0 to {len(context) - 1})"
            )
        if context[s : s + len(a)] != a:
            raise DataError(f"{where}: field {field!r}: offset {s} at index {i} does not point at answer {quote(a)}")
        starts.append(s)
    return starts


def validate_qa_record(obj: Mapping[str, Any], where: str, *, default_source: str = "") -> dict[str, Any]:
    """Check one flat-QA row and return it normalised to :data:`QA_FIELDS`.

    Required: ``id``, ``question``, ``context`` (non-empty strings), ``answers`` (non-empty list
    of non-empty strings). Optional: ``answer_starts`` (same length as ``answers``; ints must
    satisfy ``context[s:s+len(a)] == a``), ``title`` (default ""), ``source`` (default
    ``default_source``). Extra fields are ignored.
    """
    rid = req_str(obj, "id", where)
    question = req_str(obj, "question", where)
    context = req_str(obj, "context", where)
    if "answers" not in obj:
        raise missing(where, "answers")
    answers = str_list(obj["answers"], where, "answers", non_empty=True)
    starts = _answer_starts(obj.get("answer_starts"), answers, context, where)
    return {
        "id": rid,
        "question": question,
        "context": context,
        "answers": answers,
        "answer_starts": starts,
        "title": opt_str(obj, "title", where, ""),
        "source": opt_str(obj, "source", where, default_source),
    }


def validate_mc_record(obj: Mapping[str, Any], where: str, *, source: str = "arc_challenge") -> dict[str, Any]:
    """Check one ARC-style row (``id``, ``question``, ``choices`` [{label, text}], ``answerKey``).

    Returns ``{id, question, choices, answer_key, source}``. Labels must be unique and
    ``answerKey`` must be one of them.
    """
    rid = req_str(obj, "id", where)
    question = req_str(obj, "question", where)
    if "choices" not in obj:
        raise missing(where, "choices")
    raw = obj["choices"]
    if not isinstance(raw, list) or len(raw) < 2:
        raise field_error(where, "choices", "a list of at least 2 {label, text} objects", raw)
    choices: list[dict[str, str]] = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict):
            raise DataError(
                f"{where}: field 'choices': expected {{label, text}} objects, got {describe(c)} at index {i}"
            )
        label = req_str(c, "label", where, label=f"choices[{i}].label")
        text = req_str(c, "text", where, label=f"choices[{i}].text")
        choices.append({"label": label, "text": text})
    labels = [c["label"] for c in choices]
    if len(set(labels)) != len(labels):
        raise DataError(f"{where}: field 'choices': duplicate labels {quote(labels)}")
    key = req_str(obj, "answerKey", where)
    if key not in labels:
        raise DataError(f"{where}: field 'answerKey': {quote(key)} is not one of the choice labels {quote(labels)}")
    return {"id": rid, "question": question, "choices": choices, "answer_key": key, "source": source}


def validate_passage_record(obj: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Check one passage-pool row: ``id``, ``text``, ``origin`` non-empty strings; ``title`` a string."""
    return {
        "id": req_str(obj, "id", where),
        "title": opt_str(obj, "title", where, ""),
        "text": req_str(obj, "text", where),
        "origin": req_str(obj, "origin", where),
    }
