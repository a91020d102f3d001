"""The `faitheval` layout: FaithEval's hub layout (`Salesforce/FaithEval-{unanswerable,inconsistent,
counterfactual}-v1.0`): one folder per case set holding `data/test-00000-of-00001.parquet`, fields
`id, context, question, answers`, and for counterfactual `choices {label, text}` and `answerKey`.

A case set of another task (answer swap, context enriching) is written in the same fields under a folder
named after its task: FaithEval's evaluation code reads those four fields whatever the task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

FAITHEVAL_TASKS = ("unanswerable", "inconsistent", "counterfactual")
SHARD = "data/test-00000-of-00001.parquet"


def folder_name(task: str, set_name: str, several: bool) -> str:
    base = f"FaithEval-{task}-v1.0" if task in FAITHEVAL_TASKS else task
    return f"{base}-{set_name}" if several else base


def features(task: str):
    import datasets

    text = datasets.Value("string")
    out = {"id": text, "context": text, "question": text, "answers": datasets.List(text)}
    if task == "counterfactual":
        out |= {"choices": {"label": datasets.List(text), "text": datasets.List(text)}, "answerKey": text}
    return datasets.Features(out)


def faitheval_row(row: dict[str, Any]) -> dict[str, Any]:
    out = {"id": row["id"], "context": row["context"], "question": row["question"], "answers": row["answers"]}
    if row["task"] == "counterfactual":
        out |= {"choices": row["choices"], "answerKey": row["answer_key"]}
    return out


def write_faitheval(folder: Path, task: str, rows: list[dict[str, Any]]) -> Path:
    import datasets

    path = folder / SHARD
    path.parent.mkdir(parents=True, exist_ok=True)
    data = [faitheval_row(r) for r in rows]
    datasets.Dataset.from_list(data, features=features(task)).to_parquet(str(path))
    return path
