"""Records as ``dspy.Example``s: the form programs and evaluation read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dspy

from experiments.data.records import MC_INPUTS, QA_FIELDS, QA_INPUTS


def qa_example(record: Mapping[str, Any]) -> dspy.Example:
    """A QA record (see :data:`~experiments.data.records.QA_FIELDS`) as a ``dspy.Example`` with inputs
    question and context."""
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
