"""Benchmark files made elsewhere, evaluated as given: one case per row, answers unchanged.

A row is flat QA — ``id`` (or FaithEval's ``qid``), ``question``, ``context``, ``answers`` — and
may carry what released adversarial sets carry next to it:

- ``original_context`` with ``original_answers``: the evidence before the perturbation (ReEval's
  and FaithEval's released rows have it). Such a row is evaluated *paired*, exactly like a
  generated case: every target answers the original and the perturbed version, so drops are
  measured on the same seeds. An empty ``original_context`` is the question without evidence
  (FaithEval's counterfactual original). A row without one is evaluated once, as variant
  ``external``.
- ``task`` (``answer_swap``, ``context_enrich``, ``unanswerable``, ``inconsistent``,
  ``counterfactual`` or ``external``): how the row is scored. Without it, a row whose answers are
  all FaithEval's keyword ``unknown`` (or ``conflict``) is scored as unanswerable (inconsistent):
  keyword match, strict and non-strict; a row with options as counterfactual; any other row as
  ``external`` (EM, F1, containment).
- options: ``choices`` in ARC's form (``[{label, text}]`` or ``{label: [...], text: [...]}``) or
  ``options`` (strings, labelled A, B, …), with ``answerKey`` (or ``answer_label``); ``answers``
  default to the keyed option's text, and ``original_answerKey`` (or ``original_answer_label``)
  keys the original's. The options are appended to the question the targets see, lettered.
- ``seed_id`` (copies of one seed, such as Category 2's two enriched copies, share it),
  ``source``, ``generator`` (or ``pivot``: the model that made the row, for the transfer matrix).

ReEval's released field names are read as these: ``q_id`` as ``id``, ``evidence`` as ``context``,
``answer`` (a string or a list) as ``answers``, and ``original_evidence`` / ``original_answer`` (which
`reeval export --layout reeval` adds beside them) as ``original_context`` / ``original_answers``. A
row of ReEval's Category 2 (context enriching) carries ``condensed_evidence``, the merged passage a model
reads: it is the ``context``, ReEval's ``evidence`` (the passage before enriching) the ``original_context``,
and the row is scored as ``context_enrich`` (the answer unchanged), so such a file is evaluated paired. A
file may also be one JSON array of such rows (``.json``), as ReEval released them, or a Parquet file, as
FaithEval released theirs and ``reeval export`` writes its ``hf`` and ``faitheval`` layouts (an export folder
holding one data file stands for that file: experiments/data/registry.py).

Other fields are ignored. ReEval's seed filters are not applied to these rows unless the config
asks for them (``data.reeval_filters: true``): they drop rows and rewrite answers, and a file
given for evaluation must be measured as published.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dspy

from experiments import task_registry
from experiments.data.errors import DataError
from experiments.data.fields import choices, field_error, missing, opt_str, option_label, req_str, row_id, str_list
from experiments.data.files import iter_rows, source_name
from metrics.keywords import TASK_ANSWERS
from metrics.normalize import normalize_answer

logger = logging.getLogger(__name__)


def _generator(where) -> str | None:
    """The first registered generator whose entry satisfies `where`."""
    return next(iter(task_registry.names(lambda r: r.generator and where(r))), None)


def _task_of_keyword() -> dict[str, str]:
    """The keyword a FaithEval row answers with, and the task it marks."""
    return {TASK_ANSWERS[r.answer]: n for n, r in task_registry.entries().items() if r.generator and r.verdict}


# ReEval's Category 2 field holding the merged passage (context enriching).
CONDENSED = "condensed_evidence"
# ReEval's released names -> the flat form's; a row holding the flat name as well keeps the flat one.
REEVAL_FIELDS: dict[str, str] = {
    "q_id": "id",
    "evidence": "context",
    "answer": "answers",
    "original_evidence": "original_context",
    "original_answer": "original_answers",
}


# The `hf` export layout's names for an option key (experiments/export/rows.py) -> the ones read here. Its rows
# hold every field for every task, empty where a task has none: empty options and answers are no options.
HF_EXPORT_FIELDS: dict[str, str] = {"answer_key": "answerKey", "original_answer_key": "original_answerKey"}


def _export_names(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    if not any(name in obj for name in HF_EXPORT_FIELDS):
        return obj
    out = dict(obj)
    for theirs, ours in HF_EXPORT_FIELDS.items():
        value = out.pop(theirs, None)
        if value and ours not in out:
            out[ours] = value
    options = out.get("choices")
    if isinstance(options, Mapping) and not options.get("label"):
        out.pop("choices")
    if out.get("original_answers") == []:
        out.pop("original_answers")
    return out


def _flat_names(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    if not any(name in obj for name in (*REEVAL_FIELDS, CONDENSED)):
        return obj
    out = dict(obj)
    if CONDENSED in out:  # Category 2: the merged passage is what a model reads; `evidence` is the original
        condensed = out.pop(CONDENSED)
        out.setdefault("context", condensed)
        if "evidence" in out:
            out.setdefault("original_context", out.pop("evidence"))
        out.setdefault("task", _generator(lambda r: r.keeps_answer) or "external")
    for theirs, ours in REEVAL_FIELDS.items():
        if theirs in out and ours not in out:
            value = out.pop(theirs)
            # ReEval writes a single answer as a string.
            out[ours] = [value] if ours.endswith("answers") and isinstance(value, str) else value
    return out


def _infer_task(answers: list[str], options: list | None) -> str:
    keywords = {normalize_answer(a) for a in answers}
    by_keyword = _task_of_keyword()
    if len(keywords) == 1 and (keyword := keywords.pop()) in by_keyword:
        return by_keyword[keyword]
    return (_generator(lambda r: r.answer == "choice") if options else None) or "external"


def validate_case_record(obj: Mapping[str, Any], where: str, *, default_source: str) -> dict[str, Any]:
    """One row as the fields of an evaluation case; a malformed row raises DataError naming `where` and the field.

    Every field is checked (`experiments.data.fields`) before the row's task is inferred: the checks are
    about the row as written, the inference about what its answers mean."""
    obj = _flat_names(_export_names(obj))
    rid = row_id(obj, where)
    question = req_str(obj, "question", where)
    context = req_str(obj, "context", where)
    options = choices(obj, where)
    labels = [o["label"] for o in options or []]
    texts = {o["label"]: [o["text"]] for o in options or []}
    answer_label = option_label(obj, ("answerKey", "answer_label"), labels, where) if options else None
    original_label = (
        option_label(obj, ("original_answerKey", "original_answer_label"), labels, where) if options else None
    )
    if options and answer_label is None:
        raise missing(where, "answerKey")

    if obj.get("answers") is not None:
        answers = str_list(obj["answers"], where, "answers", non_empty=True)
    elif answer_label is not None:
        answers = texts[answer_label]
    else:
        raise missing(where, "answers")

    task = obj.get("task")
    if task is not None and task not in (known := (*task_registry.names(lambda r: r.generator), "external")):
        raise DataError(f"{where}: field 'task': {task!r} is not one of {', '.join(known)}")

    original_context = obj.get("original_context")
    original_answers = None
    if original_context is not None:
        if not isinstance(original_context, str):
            raise field_error(where, "original_context", "a string", original_context)
        if obj.get("original_answers") is not None:
            original_answers = str_list(obj["original_answers"], where, "original_answers", non_empty=True)
        elif original_label is not None:
            original_answers = texts[original_label]
        elif task is not None and getattr(task_registry.find(task), "keeps_answer", False):
            original_answers = list(answers)
        else:
            raise DataError(
                f"{where}: field 'original_answers': missing (required with 'original_context': "
                "the answers the original context supports)"
            )
    elif obj.get("original_answers") is not None:
        raise DataError(f"{where}: field 'original_context': missing (required with 'original_answers')")

    seed_id = opt_str(obj, "seed_id", where, rid)
    generator = opt_str(obj, "generator", where, "") or opt_str(obj, "pivot", where, "")
    source = opt_str(obj, "source", where, default_source)
    if options:  # the targets see the options, lettered, as in generated counterfactual cases
        question = question + "\n" + "\n".join(f"{o['label']}. {o['text']}" for o in options)
    return {
        "id": rid,
        "seed_id": seed_id,
        "task": _infer_task(answers, options) if task is None else task,
        "generator": generator,
        "source": source,
        "question": question,
        "context": context,
        "answers": answers,
        "original_context": original_context,
        "original_answers": original_answers,
        "options": options,
        "answer_label": answer_label,
        "original_answer_label": original_label,
    }


def load_external_cases(path: str | Path) -> list[dspy.Example]:
    """Every row of a ``.jsonl``/``.jsonl.gz`` file (or ``.json`` array, or ``.parquet``) as an evaluation case,
    in file order (see the module docstring).

    Ids must be unique within the file (a duplicate names both lines).
    """
    path = Path(path)
    default_source = source_name(path)
    examples, seen = [], {}
    for lineno, obj in iter_rows(path):
        where = f"{path}:{lineno}"
        record = validate_case_record(obj, where, default_source=default_source)
        if record["id"] in seen:
            raise DataError(f"{where}: field 'id': duplicate id {record['id']!r} (first on line {seen[record['id']]})")
        seen[record["id"]] = lineno
        examples.append(dspy.Example(**record).with_inputs("question", "context"))
    paired = sum(e.original_context is not None for e in examples)
    logger.info("%s: %d rows evaluated as given, %d paired with their original context", path, len(examples), paired)
    if 0 < paired < len(examples):
        logger.warning(
            "%s: %d of %d rows carry no original_context: they are evaluated unpaired (variant "
            "'external'), in the accuracy tables, not in the drop table",
            path,
            len(examples) - paired,
            len(examples),
        )
    return examples
