"""Other formats mapped to the QA and multiple-choice records: MRQA 2019 (its file rows and the hub's
rows share the per-question mapping) and ARC rows as the hub stores them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from experiments.data.errors import DataError, describe
from experiments.data.fields import field_error, missing, opt_str, req_str, str_list
from experiments.data.records import validate_mc_record

logger = logging.getLogger(__name__)


def _norm_text(s: str) -> str:
    return " ".join(s.split()).lower()


def _spans_as_pairs(spans: Any, where: str, field: str) -> list[tuple[int, int]]:
    """MRQA char spans as (start, end_inclusive) pairs.

    Accepts the file form ``[[s, e], ...]``, the hub (Arrow) form ``{"start": [...], "end": [...]}``
    and ``[{"start": s, "end": e}, ...]``.
    """
    if isinstance(spans, Mapping):
        starts, ends = spans.get("start"), spans.get("end")
        if not isinstance(starts, list) or not isinstance(ends, list) or len(starts) != len(ends):
            raise field_error(where, field, "{start: [int], end: [int]} of equal length", spans)
        spans = [[s, e] for s, e in zip(starts, ends, strict=True)]
    if not isinstance(spans, list):
        raise field_error(where, field, "a list of [start, end] pairs", spans)
    pairs: list[tuple[int, int]] = []
    for i, sp in enumerate(spans):
        if isinstance(sp, Mapping):
            sp = [sp.get("start"), sp.get("end")]
        ok = (
            isinstance(sp, list | tuple)
            and len(sp) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in sp)
            and 0 <= sp[0] <= sp[1]
        )
        if not ok:
            raise DataError(f"{where}: field {field!r}: expected [start, end] with 0 <= start <= end at index {i}")
        pairs.append((sp[0], sp[1]))
    return pairs


def _detected_as_list(value: Any, where: str, field: str) -> list[dict[str, Any]]:
    """MRQA ``detected_answers`` as a list of {text, char_spans}: file form or hub dict-of-lists."""
    if value is None:
        return []
    if isinstance(value, Mapping):  # Arrow "sequence of struct" comes back as a dict of lists
        texts = value.get("text") or []
        spans = value.get("char_spans") or []
        if not isinstance(texts, list) or not isinstance(spans, list) or len(texts) != len(spans):
            raise field_error(where, field, "{text: [...], char_spans: [...]} of equal length", value)
        return [{"text": t, "char_spans": s} for t, s in zip(texts, spans, strict=True)]
    if not isinstance(value, list):
        raise field_error(where, field, "a list of {text, char_spans} objects", value)
    for i, d in enumerate(value):
        if not isinstance(d, Mapping):
            raise DataError(
                f"{where}: field {field!r}: expected {{text, char_spans}} objects, got {describe(d)} at index {i}"
            )
    return list(value)


def mrqa_qa_to_record(
    context: str, qa: Mapping[str, Any], where: str, *, source: str, prefix: str = ""
) -> tuple[dict[str, Any], bool]:
    """Map one MRQA question (file ``qas[i]`` or a hub row) to a flat QA record.

    Answers come from ``detected_answers`` (their first char span; MRQA spans are inclusive,
    so the text is ``context[start:end + 1]``), de-duplicated by text in order; without
    detected answers, MRQA ``answers`` are used with no offsets. Returns the record and
    whether some detected span did not match its text (then that answer is kept without an
    offset, using the detected text).
    """
    qid = req_str(qa, "qid", where, label=f"{prefix}qid")
    question = req_str(qa, "question", where, label=f"{prefix}question").strip()
    detected = _detected_as_list(qa.get("detected_answers"), where, f"{prefix}detected_answers")
    answers: list[str] = []
    starts: list[int | None] = []
    mismatch = False
    for k, d in enumerate(detected):
        field = f"{prefix}detected_answers[{k}]"
        text = req_str(d, "text", where, label=f"{field}.text")
        pairs = _spans_as_pairs(d.get("char_spans", []), where, f"{field}.char_spans")
        start: int | None = None
        if pairs:
            s, e = pairs[0]
            span = context[s : e + 1]
            if e < len(context) and _norm_text(span) == _norm_text(text):
                text, start = span, s
            else:
                mismatch = True
        if text not in answers:
            answers.append(text)
            starts.append(start)
    if not answers:
        raw = qa.get("answers")
        field = f"{prefix}answers"
        if raw is None:
            raise missing(where, field)
        answers = list(dict.fromkeys(str_list(raw, where, field, non_empty=True)))
        starts = [None] * len(answers)
    record = {
        "id": qid,
        "question": question,
        "context": context,
        "answers": answers,
        "answer_starts": starts,
        "title": "",
        "source": source,
    }
    return record, mismatch


def mrqa_context_to_records(obj: Mapping[str, Any], where: str, *, source: str) -> tuple[list[dict[str, Any]], int]:
    """Map one MRQA file row (a context with its ``qas``) to flat QA records; also count span mismatches."""
    context = req_str(obj, "context", where)
    qas = obj.get("qas")
    if not isinstance(qas, list) or not qas:
        raise field_error(where, "qas", "a non-empty list of question objects", qas)
    records, mismatches = [], 0
    for i, qa in enumerate(qas):
        if not isinstance(qa, Mapping):
            raise DataError(f"{where}: field 'qas': expected question objects, got {describe(qa)} at index {i}")
        rec, bad = mrqa_qa_to_record(context, qa, where, source=source, prefix=f"qas[{i}].")
        records.append(rec)
        mismatches += bad
    return records, mismatches


def mrqa_hub_row_to_record(row: Mapping[str, Any], where: str = "hub row") -> dict[str, Any]:
    """Map one row of the hub dataset ``mrqa-workshop/mrqa`` (columns ``subset``, ``context``,
    ``qid``, ``question``, ``answers``, ``detected_answers``) to a flat QA record.

    ``source`` is the lower-cased ``subset`` (e.g. ``"naturalquestionsshort"``).
    """
    context = req_str(row, "context", where)
    source = opt_str(row, "subset", where, "mrqa").lower()
    record, mismatch = mrqa_qa_to_record(context, row, where, source=source)
    if mismatch:
        logger.debug("%s: a detected answer span did not match its text; kept without offset", where)
    return record


def arc_hub_row_to_record(
    row: Mapping[str, Any], where: str = "hub row", *, source: str = "arc_challenge"
) -> dict[str, Any]:
    """Map one row of ``allenai/ai2_arc`` to an MC record.

    The hub stores ``choices`` as ``{"text": [...], "label": [...]}``; files store a list of
    ``{label, text}`` objects.
    """
    choices = row.get("choices")
    if isinstance(choices, Mapping):
        texts, labels = choices.get("text"), choices.get("label")
        if not isinstance(texts, list) or not isinstance(labels, list) or len(texts) != len(labels):
            raise field_error(where, "choices", "{text: [...], label: [...]} of equal length", choices)
        choices = [{"label": lab, "text": t} for lab, t in zip(labels, texts, strict=True)]
    return validate_mc_record({**row, "choices": choices}, where, source=source)
