"""Case sets to evaluate: the accepted cases of a reeval run (`run:<run-id>`), or any JSONL file in
the flat form (question, context, answers) — benchmark files made elsewhere included."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import dspy

from experiments.run_store import RunStore

RUN_PREFIX = "run:"


def is_run_source(source: str) -> bool:
    return source.startswith(RUN_PREFIX)


def run_cases_path(source: str) -> Path:
    store = RunStore(source.removeprefix(RUN_PREFIX))
    if not store.cases_path.exists():
        raise FileNotFoundError(f"no finished cases for run {store.run_id!r} ({store.cases_path})")
    return store.cases_path


def load_run_cases(source: str) -> tuple[list[dspy.Example], str]:
    """Accepted generated cases as Examples, each carrying its original (pre-perturbation) version."""
    store = RunStore(source.removeprefix(RUN_PREFIX))
    records = [r for r in store.records() if r.get("status") == "accepted" and r.get("context") is not None]
    digest = hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()
    examples = []
    for r in records:
        if r["id"].endswith(":closed-book"):
            continue  # a counterfactual case's no-context twin: evaluated as its "original" variant
        examples.append(dspy.Example(
            id=r["id"], seed_id=r["seed_id"], task=r.get("task", ""), generator=r.get("pivot", ""),
            source=r.get("source", ""), question=r["question"], context=r["context"], answers=r["answers"],
            original_context=r.get("original_context", ""), original_answers=r.get("original_answers")
            or ([r["options"][r["choice_labels"].index(r["original_answer_label"])]] if r.get("options") else []),
            options=r.get("options"), answer_label=r.get("answer_label"),
            original_answer_label=r.get("original_answer_label"),
        ).with_inputs("question", "context"))
    return examples, digest
