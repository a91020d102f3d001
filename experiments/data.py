"""Load QA, multiple-choice and passage data as ``dspy.Example``s (or a ``datasets.Dataset``).

Every local file is read line by line and each row is validated *before* it reaches
Hugging Face ``datasets``: a malformed row fails with a :class:`DataError` that names the
file, the 1-based line number and the field (``data/x.jsonl:17: field 'answers': expected a
non-empty list of strings, got int``). Without this, ``datasets``/Arrow reports a schema
mismatch for a whole shard with no line number, which is useless on an 8k-line file.

The validated rows then go through ``datasets.Dataset.from_list`` with explicit features,
so the QA and passage data have one fixed schema whatever file they came from, and can be
mapped, sharded or handed to other engines as Arrow tables.

The data version is :func:`content_sha256` of the file as stored. A ``datasets``
fingerprint depends on path and mtime, so it changes on a fresh checkout of identical data
and must never be used to identify a data set.

Hub loaders (:func:`load_qa_from_hub`, :func:`load_arc_from_hub`) are for users with a
network; the local loaders set ``HF_DATASETS_OFFLINE``/``HF_HUB_OFFLINE`` as defaults
(``os.environ.setdefault``) before importing ``datasets``, the hub loaders do not.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import json
import logging
import os
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import dspy

from experiments.paths import project_root

if TYPE_CHECKING:  # pragma: no cover - typing only; ``datasets`` is imported lazily
    import datasets

logger = logging.getLogger(__name__)

REPO_ROOT: Path = project_root()
DATA_DIR: Path = REPO_ROOT / "data"

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

_JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")


class DataError(ValueError):
    """A data file or row does not have the expected form. The message says where: file:line, field."""


class UnknownDatasetError(ValueError):
    """A dataset name that is neither registered nor an existing file (the message suggests names)."""


# --------------------------------------------------------------------------------------------
# Versioning


def content_sha256(path: str | Path) -> str:
    """SHA-256 of the file's bytes as stored (for ``.gz``: of the compressed bytes).

    This is the data version recorded with every run: it depends on content only, unlike a
    ``datasets`` fingerprint, which changes with path and mtime.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------------------------
# Reading JSONL with line numbers


def _describe(value: Any) -> str:
    """A short JSON-flavoured type name for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _quote(value: Any, limit: int = 80) -> str:
    """A row's value inside a message, cut short: a message is a line or two, whatever the row holds."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _check_suffix(path: Path) -> None:
    if not path.name.endswith(_JSONL_SUFFIXES):
        raise DataError(f"{path}: expected a .jsonl or .jsonl.gz file")


def _iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, decoded line); gzip chosen by the ``.gz`` suffix. A byte-order mark
    opening the file (Windows editors write one) is not part of the first row."""
    opener = gzip.open if path.name.endswith(".gz") else open
    lineno = 0
    try:
        with opener(path, "rb") as f:
            for lineno, raw in enumerate(f, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise DataError(f"{path}:{lineno}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
                yield lineno, text.removeprefix("\ufeff") if lineno == 1 else text
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise DataError(f"{path}:{lineno + 1}: corrupt or truncated gzip data ({e})") from None


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a ``.jsonl``/``.jsonl.gz`` file.

    Invalid JSON, or a line that is not a JSON object, raises :class:`DataError` naming the
    file and line, so a broken row is found without bisecting the file.
    """
    path = Path(path)
    _check_suffix(path)
    for lineno, text in _iter_lines(path):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise DataError(f"{path}:{lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
        except RecursionError:
            raise DataError(f"{path}:{lineno}: invalid JSON: nested deeper than this reader allows") from None
        except ValueError:  # Python refuses integers of more than 4,300 digits (CVE-2020-10735)
            raise DataError(f"{path}:{lineno}: invalid JSON: a number too long to read") from None
        if not isinstance(obj, dict):
            raise DataError(f"{path}:{lineno}: expected a JSON object, got {_describe(obj)}")
        yield lineno, obj


# --------------------------------------------------------------------------------------------
# Field validation (``where`` is "file:line" or "hub:name[split] row N")


def _field_error(where: str, field: str, expected: str, value: Any) -> DataError:
    return DataError(f"{where}: field {field!r}: expected {expected}, got {_describe(value)}")


def _missing(where: str, field: str) -> DataError:
    return DataError(f"{where}: field {field!r}: missing (required)")


def _text(value: str, where: str, field: str) -> str:
    """A string Arrow and UTF-8 files can hold: JSON's escapes can spell a lone surrogate ("\\ud800")."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise DataError(
            f"{where}: field {field!r}: not valid Unicode text (a lone surrogate "
            f"U+{ord(value[e.start]):04X} at character {e.start})"
        ) from None
    return value


def _req_str(obj: Mapping[str, Any], field: str, where: str, *, label: str | None = None) -> str:
    """A required, non-empty string field."""
    label = label or field
    if field not in obj:
        raise _missing(where, label)
    value = obj[field]
    if not isinstance(value, str):
        raise _field_error(where, label, "a string", value)
    if not value.strip():
        raise DataError(f"{where}: field {label!r}: expected a non-empty string, got an empty one")
    return _text(value, where, label)


def _opt_str(obj: Mapping[str, Any], field: str, where: str, default: str, *, label: str | None = None) -> str:
    """An optional string field (missing or null gives ``default``)."""
    value = obj.get(field)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _field_error(where, label or field, "a string", value)
    return _text(value, where, label or field)


def _str_list(value: Any, where: str, field: str, *, non_empty: bool) -> list[str]:
    expected = "a non-empty list of strings" if non_empty else "a list of strings"
    if not isinstance(value, list):
        raise _field_error(where, field, expected, value)
    if non_empty and not value:
        raise DataError(f"{where}: field {field!r}: expected {expected}, got an empty list")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise DataError(f"{where}: field {field!r}: expected {expected}, got {_describe(item)} at index {i}")
        if not item.strip():
            raise DataError(f"{where}: field {field!r}: empty string at index {i}")
        _text(item, where, f"{field}[{i}]")
    return list(value)


def _answer_starts(
    value: Any, answers: list[str], context: str, where: str, field: str = "answer_starts"
) -> list[int | None]:
    """Optional offsets, one per answer (int or null); each int must point at its answer."""
    if value is None:
        return [None] * len(answers)
    if not isinstance(value, list):
        raise _field_error(where, field, "a list of integers or nulls", value)
    if len(value) != len(answers):
        raise DataError(f"{where}: field {field!r}: has {len(value)} entries but 'answers' has {len(answers)}")
    starts: list[int | None] = []
    for i, (s, a) in enumerate(zip(value, answers, strict=True)):
        if s is None:
            starts.append(None)
            continue
        if isinstance(s, bool) or not isinstance(s, int):
            raise DataError(f"{where}: field {field!r}: expected an integer or null, got {_describe(s)} at index {i}")
        if not 0 <= s < len(context):  # not printed: Python cannot print an int of more than 4,300 digits
            raise DataError(
                f"{where}: field {field!r}: offset at index {i} is outside the context (0 to {len(context) - 1})"
            )
        if context[s : s + len(a)] != a:
            raise DataError(f"{where}: field {field!r}: offset {s} at index {i} does not point at answer {_quote(a)}")
        starts.append(s)
    return starts


def validate_qa_record(obj: Mapping[str, Any], where: str, *, default_source: str = "") -> dict[str, Any]:
    """Check one flat-QA row and return it normalised to :data:`QA_FIELDS`.

    Required: ``id``, ``question``, ``context`` (non-empty strings), ``answers`` (non-empty list
    of non-empty strings). Optional: ``answer_starts`` (same length as ``answers``; ints must
    satisfy ``context[s:s+len(a)] == a``), ``title`` (default ""), ``source`` (default
    ``default_source``). Extra fields are ignored.
    """
    rid = _req_str(obj, "id", where)
    question = _req_str(obj, "question", where)
    context = _req_str(obj, "context", where)
    if "answers" not in obj:
        raise _missing(where, "answers")
    answers = _str_list(obj["answers"], where, "answers", non_empty=True)
    starts = _answer_starts(obj.get("answer_starts"), answers, context, where)
    return {
        "id": rid,
        "question": question,
        "context": context,
        "answers": answers,
        "answer_starts": starts,
        "title": _opt_str(obj, "title", where, ""),
        "source": _opt_str(obj, "source", where, default_source),
    }


def validate_mc_record(obj: Mapping[str, Any], where: str, *, source: str = "arc_challenge") -> dict[str, Any]:
    """Check one ARC-style row (``id``, ``question``, ``choices`` [{label, text}], ``answerKey``).

    Returns ``{id, question, choices, answer_key, source}``. Labels must be unique and
    ``answerKey`` must be one of them.
    """
    rid = _req_str(obj, "id", where)
    question = _req_str(obj, "question", where)
    if "choices" not in obj:
        raise _missing(where, "choices")
    raw = obj["choices"]
    if not isinstance(raw, list) or len(raw) < 2:
        raise _field_error(where, "choices", "a list of at least 2 {label, text} objects", raw)
    choices: list[dict[str, str]] = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict):
            raise DataError(
                f"{where}: field 'choices': expected {{label, text}} objects, got {_describe(c)} at index {i}"
            )
        label = _req_str(c, "label", where, label=f"choices[{i}].label")
        text = _req_str(c, "text", where, label=f"choices[{i}].text")
        choices.append({"label": label, "text": text})
    labels = [c["label"] for c in choices]
    if len(set(labels)) != len(labels):
        raise DataError(f"{where}: field 'choices': duplicate labels {_quote(labels)}")
    key = _req_str(obj, "answerKey", where)
    if key not in labels:
        raise DataError(f"{where}: field 'answerKey': {_quote(key)} is not one of the choice labels {_quote(labels)}")
    return {"id": rid, "question": question, "choices": choices, "answer_key": key, "source": source}


def validate_passage_record(obj: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Check one passage-pool row: ``id``, ``text``, ``origin`` non-empty strings; ``title`` a string."""
    return {
        "id": _req_str(obj, "id", where),
        "title": _opt_str(obj, "title", where, ""),
        "text": _req_str(obj, "text", where),
        "origin": _req_str(obj, "origin", where),
    }


# --------------------------------------------------------------------------------------------
# MRQA (file rows and hub rows share the per-question mapping)


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
            raise _field_error(where, field, "{start: [int], end: [int]} of equal length", spans)
        spans = [[s, e] for s, e in zip(starts, ends, strict=True)]
    if not isinstance(spans, list):
        raise _field_error(where, field, "a list of [start, end] pairs", spans)
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
            raise _field_error(where, field, "{text: [...], char_spans: [...]} of equal length", value)
        return [{"text": t, "char_spans": s} for t, s in zip(texts, spans, strict=True)]
    if not isinstance(value, list):
        raise _field_error(where, field, "a list of {text, char_spans} objects", value)
    for i, d in enumerate(value):
        if not isinstance(d, Mapping):
            raise DataError(
                f"{where}: field {field!r}: expected {{text, char_spans}} objects, got {_describe(d)} at index {i}"
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
    qid = _req_str(qa, "qid", where, label=f"{prefix}qid")
    question = _req_str(qa, "question", where, label=f"{prefix}question").strip()
    detected = _detected_as_list(qa.get("detected_answers"), where, f"{prefix}detected_answers")
    answers: list[str] = []
    starts: list[int | None] = []
    mismatch = False
    for k, d in enumerate(detected):
        field = f"{prefix}detected_answers[{k}]"
        text = _req_str(d, "text", where, label=f"{field}.text")
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
            raise _missing(where, field)
        answers = list(dict.fromkeys(_str_list(raw, where, field, non_empty=True)))
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
    context = _req_str(obj, "context", where)
    qas = obj.get("qas")
    if not isinstance(qas, list) or not qas:
        raise _field_error(where, "qas", "a non-empty list of question objects", qas)
    records, mismatches = [], 0
    for i, qa in enumerate(qas):
        if not isinstance(qa, Mapping):
            raise DataError(f"{where}: field 'qas': expected question objects, got {_describe(qa)} at index {i}")
        rec, bad = mrqa_qa_to_record(context, qa, where, source=source, prefix=f"qas[{i}].")
        records.append(rec)
        mismatches += bad
    return records, mismatches


def mrqa_hub_row_to_record(row: Mapping[str, Any], where: str = "hub row") -> dict[str, Any]:
    """Map one row of the hub dataset ``mrqa-workshop/mrqa`` (columns ``subset``, ``context``,
    ``qid``, ``question``, ``answers``, ``detected_answers``) to a flat QA record.

    ``source`` is the lower-cased ``subset`` (e.g. ``"naturalquestionsshort"``).
    """
    context = _req_str(row, "context", where)
    source = _opt_str(row, "subset", where, "mrqa").lower()
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
            raise _field_error(where, "choices", "{text: [...], label: [...]} of equal length", choices)
        choices = [{"label": lab, "text": t} for lab, t in zip(labels, texts, strict=True)]
    return validate_mc_record({**row, "choices": choices}, where, source=source)


# --------------------------------------------------------------------------------------------
# Records -> dspy.Example


def qa_example(record: Mapping[str, Any]) -> dspy.Example:
    """A QA record (see :data:`QA_FIELDS`) as a ``dspy.Example`` with inputs question and context."""
    fields = {k: record[k] for k in QA_FIELDS}
    fields["answers"] = list(fields["answers"])
    fields["answer_starts"] = list(fields["answer_starts"])
    return dspy.Example(**fields).with_inputs(*QA_INPUTS)


def mc_example(record: Mapping[str, Any]) -> dspy.Example:
    """An MC record as a ``dspy.Example``.

    Adds ``options`` (the choice texts), ``choice_labels`` and ``answer`` (the right text).

    The labels field is ``choice_labels``, not ``labels``: ``Example.labels`` is a method, so
    ``ex.labels`` would silently return it instead of the field.
    """
    choices = [{"label": c["label"], "text": c["text"]} for c in record["choices"]]
    labels = [c["label"] for c in choices]
    options = [c["text"] for c in choices]
    answer = options[labels.index(record["answer_key"])]
    return dspy.Example(
        id=record["id"],
        question=record["question"],
        choices=choices,
        options=options,
        choice_labels=labels,
        answer_key=record["answer_key"],
        answer=answer,
        source=record["source"],
    ).with_inputs(*MC_INPUTS)


# --------------------------------------------------------------------------------------------
# datasets plumbing


def _offline_datasets():
    """Import ``datasets`` with hub access off by default (setdefault, so users can override).

    ``datasets`` reads these variables when first imported; set them before that import.
    """
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import datasets

    return datasets


def _qa_features(ds_mod: Any) -> datasets.Features:
    v = ds_mod.Value
    return ds_mod.Features(
        {
            "id": v("string"),
            "question": v("string"),
            "context": v("string"),
            "answers": [v("string")],
            "answer_starts": [v("int64")],
            "title": v("string"),
            "source": v("string"),
        }
    )


def _mc_features(ds_mod: Any) -> datasets.Features:
    v = ds_mod.Value
    return ds_mod.Features(
        {
            "id": v("string"),
            "question": v("string"),
            "choices": [{"label": v("string"), "text": v("string")}],
            "answer_key": v("string"),
            "source": v("string"),
        }
    )


def _passage_features(ds_mod: Any) -> datasets.Features:
    v = ds_mod.Value
    return ds_mod.Features({k: v("string") for k in PASSAGE_FIELDS})


def _to_dataset(ds_mod: Any, records: list[dict[str, Any]], features: datasets.Features) -> datasets.Dataset:
    """Records → Dataset with a fixed schema (``from_list`` cannot build an empty table)."""
    if not records:
        return ds_mod.Dataset.from_dict({k: [] for k in features}, features=features)
    return ds_mod.Dataset.from_list(records, features=features)


def _check_limit(limit: int | None) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative integer or None, got {limit!r}")


def _file_stem(path: Path) -> str:
    name = path.name
    for suffix in (".jsonl.gz", ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _collect(
    path: Path,
    rows: Iterable[tuple[int, dict[str, Any]]],
    *,
    limit: int | None,
    keep: Callable[[dict[str, Any]], bool] = lambda r: True,
) -> list[dict[str, Any]]:
    """Take validated records in file order, skipping those ``keep`` rejects, up to ``limit``.

    Ids must be unique within a file (a duplicate names both lines). Rows after the limit are
    not read, so with a limit only the rows read are validated.
    """
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    if limit == 0:
        return out
    for lineno, rec in rows:
        if rec["id"] in seen:
            first = seen[rec["id"]]
            raise DataError(f"{path}:{lineno}: field 'id': duplicate id {_quote(rec['id'])} (first on line {first})")
        seen[rec["id"]] = lineno
        if not keep(rec):
            continue
        out.append(rec)
        if limit is not None and len(out) >= limit:
            break
    return out


# --------------------------------------------------------------------------------------------
# Local loaders


def load_qa_dataset(path: str | Path, *, limit: int | None = None, source: str | None = None) -> datasets.Dataset:
    """Validated flat-QA rows of a ``.jsonl``/``.jsonl.gz`` file as a ``datasets.Dataset``.

    Columns are :data:`QA_FIELDS` (fixed schema). ``source`` keeps only rows whose ``source``
    equals it (rows without one get the file's stem, e.g. ``nq``); ``limit`` then takes the
    first N kept rows in file order, so the selection is deterministic.
    """
    _check_limit(limit)
    path = Path(path)
    default_source = _file_stem(path)
    rows = ((n, validate_qa_record(obj, f"{path}:{n}", default_source=default_source)) for n, obj in iter_jsonl(path))
    keep = (lambda r: r["source"] == source) if source is not None else (lambda r: True)
    records = _collect(path, rows, limit=limit, keep=keep)
    ds_mod = _offline_datasets()
    logger.info("loaded %d QA rows from %s", len(records), path)
    return _to_dataset(ds_mod, records, _qa_features(ds_mod))


def load_qa(path: str | Path, *, limit: int | None = None, source: str | None = None) -> list[dspy.Example]:
    """Flat-QA file → ``dspy.Example``s (fields :data:`QA_FIELDS`, inputs question and context).

    See :func:`load_qa_dataset` for validation, ``source`` and ``limit``.
    """
    return [qa_example(r) for r in load_qa_dataset(path, limit=limit, source=source)]


def load_mrqa_dataset(path: str | Path, *, limit: int | None = None, source: str | None = None) -> datasets.Dataset:
    """A real MRQA 2019 JSONL file (header line, then one context per line) as flat QA rows.

    One row per question; ``source`` of each row is the header's ``dataset`` lower-cased
    (``NewsQA`` → ``newsqa``). ``source`` and ``limit`` work as in :func:`load_qa_dataset`.
    """
    _check_limit(limit)
    path = Path(path)
    lines = iter_jsonl(path)
    first = next(lines, None)
    if first is None:
        raise DataError(f"{path}: empty file (expected an MRQA header line)")
    n0, header_obj = first
    header = header_obj.get("header")
    if not isinstance(header, Mapping):
        raise DataError(f"{path}:{n0}: field 'header': expected the MRQA header line {{\"header\": {{...}}}}")
    file_source = _opt_str(header, "dataset", f"{path}:{n0}", "", label="header.dataset").lower() or _file_stem(path)
    mismatches = 0

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        nonlocal mismatches
        for n, obj in lines:
            recs, bad = mrqa_context_to_records(obj, f"{path}:{n}", source=file_source)
            mismatches += bad
            for rec in recs:
                yield n, rec

    keep = (lambda r: r["source"] == source) if source is not None else (lambda r: True)
    records = _collect(path, rows(), limit=limit, keep=keep)
    if mismatches:
        logger.warning("%s: %d detected answer span(s) did not match their text; kept without offset", path, mismatches)
    ds_mod = _offline_datasets()
    logger.info("loaded %d MRQA questions from %s", len(records), path)
    return _to_dataset(ds_mod, records, _qa_features(ds_mod))


def load_mrqa(path: str | Path, *, limit: int | None = None, source: str | None = None) -> list[dspy.Example]:
    """MRQA 2019 file → QA ``dspy.Example``s (same shape as :func:`load_qa`)."""
    return [qa_example(r) for r in load_mrqa_dataset(path, limit=limit, source=source)]


def load_multiple_choice(
    path: str | Path, *, limit: int | None = None, source: str = "arc_challenge"
) -> list[dspy.Example]:
    """ARC-style multiple-choice file → ``dspy.Example``s (fields :data:`MC_FIELDS`, inputs question
    and options). ``answer`` is the text of the choice labelled ``answerKey``; ``limit`` takes the
    first N rows in file order.
    """
    _check_limit(limit)
    path = Path(path)
    rows = ((n, validate_mc_record(obj, f"{path}:{n}", source=source)) for n, obj in iter_jsonl(path))
    records = _collect(path, rows, limit=limit)
    ds_mod = _offline_datasets()
    ds = _to_dataset(ds_mod, records, _mc_features(ds_mod))
    logger.info("loaded %d multiple-choice rows from %s", len(ds), path)
    return [mc_example(r) for r in ds]


def load_passages(
    path: str | Path, *, limit: int | None = None, exclude_origins: Collection[str] = ()
) -> datasets.Dataset:
    """The Wikipedia passage pool as a ``datasets.Dataset`` with columns id, title, text, origin.

    A Dataset rather than Examples: the pool is a retrieval corpus (embedded in batches,
    indexed), not a set of test cases. ``exclude_origins`` drops rows by ``origin`` (e.g.
    ``{"realtimeqa_dpr"}`` when reading the unfiltered shared pool).
    """
    _check_limit(limit)
    path = Path(path)
    excluded = set(exclude_origins)
    rows = ((n, validate_passage_record(obj, f"{path}:{n}")) for n, obj in iter_jsonl(path))
    records = _collect(path, rows, limit=limit, keep=lambda r: r["origin"] not in excluded)
    ds_mod = _offline_datasets()
    logger.info("loaded %d passages from %s", len(records), path)
    return _to_dataset(ds_mod, records, _passage_features(ds_mod))


# --------------------------------------------------------------------------------------------
# Hub loaders (need a network; never set the offline variables)


def _hub_datasets():
    import datasets

    return datasets


def load_qa_from_hub(
    name: str = "mrqa-workshop/mrqa",
    split: str = "validation",
    subset: str | None = None,
    *,
    limit: int | None = None,
    revision: str | None = None,
    streaming: bool = False,
) -> list[dspy.Example]:
    """MRQA questions from the Hugging Face hub as QA ``dspy.Example``s.

    ``subset`` keeps one MRQA source (compared case-insensitively, e.g. ``"NaturalQuestionsShort"``).
    Pin ``revision`` for reproducible runs and record the hub commit, since a hub dataset has
    no local file to hash. ``streaming=True`` avoids downloading the whole split when only
    ``limit`` rows are needed.
    """
    _check_limit(limit)
    ds_mod = _hub_datasets()
    ds = ds_mod.load_dataset(name, split=split, revision=revision, streaming=streaming)
    want = subset.lower() if subset is not None else None
    out: list[dspy.Example] = []
    for i, row in enumerate(ds):
        if limit is not None and len(out) >= limit:
            break
        if want is not None and str(row.get("subset", "")).lower() != want:
            continue
        out.append(qa_example(mrqa_hub_row_to_record(row, f"hub:{name}[{split}] row {i}")))
    logger.info("loaded %d MRQA questions from hub %s[%s]", len(out), name, split)
    return out


def load_arc_from_hub(
    name: str = "allenai/ai2_arc",
    config: str = "ARC-Challenge",
    split: str = "test",
    *,
    limit: int | None = None,
    revision: str | None = None,
) -> list[dspy.Example]:
    """ARC questions from the Hugging Face hub as multiple-choice ``dspy.Example``s."""
    _check_limit(limit)
    ds_mod = _hub_datasets()
    ds = ds_mod.load_dataset(name, config, split=split, revision=revision)
    source = config.lower().replace("-", "_")
    out: list[dspy.Example] = []
    for i, row in enumerate(ds):
        if limit is not None and len(out) >= limit:
            break
        out.append(mc_example(arc_hub_row_to_record(row, f"hub:{name}/{config}[{split}] row {i}", source=source)))
    logger.info("loaded %d ARC questions from hub %s/%s[%s]", len(out), name, config, split)
    return out


# --------------------------------------------------------------------------------------------
# Registry

#: Shipped data sets (under ``data/``, see data/README.md): name → (path, loader).
DATASETS: dict[str, tuple[Path, Callable[..., Any]]] = {
    "nq": (DATA_DIR / "nq.jsonl.gz", load_qa),
    "arc_challenge": (DATA_DIR / "arc_challenge_test.jsonl", load_multiple_choice),
    "arc_challenge_validation": (DATA_DIR / "arc_challenge_validation.jsonl", load_multiple_choice),
    "wiki_passages": (DATA_DIR / "wiki_passages.jsonl.gz", load_passages),
}


class DatasetSpec(NamedTuple):
    """A resolved data set: its name (registry name or file stem), file path and loader."""

    name: str
    path: Path
    loader: Callable[..., Any]


def sniff_loader(path: str | Path) -> Callable[..., Any]:
    """Pick a loader from the first row of a file: MRQA header, ARC choices, passage pool or flat QA."""
    path = Path(path)
    for _, obj in iter_jsonl(path):
        if "header" in obj:
            return load_mrqa
        if "choices" in obj and "answerKey" in obj:
            return load_multiple_choice
        if "origin" in obj and "text" in obj and "question" not in obj:
            return load_passages
        return load_qa
    raise DataError(f"{path}: empty file")


def resolve_dataset(name_or_path: str | Path) -> DatasetSpec:
    """A registry name (see :data:`DATASETS`) or a path to an existing ``.jsonl``/``.jsonl.gz`` file.

    Names win over paths. An unknown name that is not a file fails with a "did you mean"
    suggestion, so a typo in a config is caught before any LM call.
    """
    key = str(name_or_path)
    if key in DATASETS:
        path, loader = DATASETS[key]
        return DatasetSpec(key, path, loader)
    path = Path(key).expanduser()
    if path.is_file():
        return DatasetSpec(_file_stem(path), path.resolve(), sniff_loader(path))
    close = difflib.get_close_matches(key, list(DATASETS), n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    raise UnknownDatasetError(
        f"unknown dataset {key!r}: {hint}Known names: {', '.join(sorted(DATASETS))}; "
        "or give the path of an existing .jsonl/.jsonl.gz file."
    )
