"""The `faitheval` layout: FaithEval's hub layout (`Salesforce/FaithEval-{unanswerable,inconsistent,
counterfactual}-v1.0`): one folder per case set holding `data/test-00000-of-00001.parquet`, fields
`id, context, question, answers`, and for counterfactual `choices {label, text}` and `answerKey`.

After FaithEval's fields each row keeps what FaithEval's code ignores and reeval reads back, so the folder (or
its Parquet file) evaluated as `data.source` is paired with its source rows as the run itself is
(experiments/external_cases.py): `task`, `original_context` (empty for a counterfactual question, whose
original is the question alone) and `original_answers`, or for counterfactual `original_answerKey`.

A case set of another task (answer swap, context enriching) is written in the same fields under a folder
named after its task: FaithEval's evaluation code reads those four fields whatever the task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments import task_registry

SHARD = "data/test-00000-of-00001.parquet"


def _multiple_choice(task: str) -> bool:
    entry = task_registry.find(task)
    return entry is not None and entry.answer == "choice"


def folder_name(task: str, set_name: str, several: bool) -> str:
    entry = task_registry.find(task)
    base = entry.release if entry and entry.release else task
    return f"{base}-{set_name}" if several else base


def features(task: str):
    import datasets

    text = datasets.Value("string")
    out = {"id": text, "context": text, "question": text, "answers": datasets.List(text)}
    if _multiple_choice(task):
        out |= {"choices": {"label": datasets.List(text), "text": datasets.List(text)}, "answerKey": text}
        out |= {"task": text, "original_context": text, "original_answerKey": text}
    else:
        out |= {"task": text, "original_context": text, "original_answers": datasets.List(text)}
    return datasets.Features(out)


def faitheval_row(row: dict[str, Any]) -> dict[str, Any]:
    out = {"id": row["id"], "context": row["context"], "question": row["question"], "answers": row["answers"]}
    if _multiple_choice(row["task"]):
        out |= {"choices": row["choices"], "answerKey": row["answer_key"]}
        out |= {"task": row["task"], "original_context": row["original_context"]}
        out["original_answerKey"] = row["original_answer_key"] or None
    else:
        out |= {"task": row["task"], "original_context": row["original_context"]}
        out["original_answers"] = row["original_answers"]
    return out


def write_faitheval(folder: Path, task: str, rows: list[dict[str, Any]]) -> Path:
    import datasets

    path = folder / SHARD
    path.parent.mkdir(parents=True, exist_ok=True)
    data = [faitheval_row(r) for r in rows]
    datasets.Dataset.from_list(data, features=features(task)).to_parquet(str(path))
    return path
