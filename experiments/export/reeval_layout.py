"""The `reeval` layout: ReEval's released JSON, one array of rows per case set (`<set>.json`): `q_id,
question, answer, evidence, source, status`, and for context enriching `new_retrieval_info, supporting_sen,
condensed_evidence`.

`evidence` is the passage a model under test reads. Beside ReEval's fields each row keeps
`original_evidence`, `original_answer` and `task` (and a counterfactual row its `choices` and `answerKey`),
which ReEval's code ignores: with them `reeval run` evaluates the file as an external case set, each case
paired with its source row, as it evaluates the run itself (experiments/external_cases.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def reeval_row(row: dict[str, Any], record: dict[str, Any], source: str) -> dict[str, Any]:
    out = {
        "q_id": row["id"],
        "question": row["question"],
        "answer": row["answers"],
        "evidence": row["context"],
        "source": source,
        "status": row["status"],
        "task": row["task"],
        "original_evidence": row["original_context"],
    }
    if row["original_answers"]:  # a counterfactual case keys its original by option label instead
        out["original_answer"] = row["original_answers"]
    if row["task"] == "context_enrich":
        retrieved = record.get("retrieved") if isinstance(record.get("retrieved"), list) else []
        out |= {
            "new_retrieval_info": [
                {k: item.get(k) for k in ("id", "title", "score")} for item in retrieved if isinstance(item, dict)
            ],
            "supporting_sen": row["supporting_sentence"],
            "condensed_evidence": row["background"],
        }
    if row["choices"]["label"]:
        out |= {"choices": row["choices"], "answerKey": row["answer_key"]}
        if row["original_answer_key"]:
            out["original_answerKey"] = row["original_answer_key"]
    return out


def write_reeval(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
