"""The `reeval` layout: ReEval's released JSON (github.com/CogComp/ReEval-LLM-Hallucination, `data/*.json`), one
array of rows per case set (`<set>.json`), each of ReEval's fields with ReEval's type and meaning:

- `q_id`, `question`, `source`: as ReEval's;
- `answer`: one string, the answer the passage a model reads supports (ReEval's analysis concatenates
  `question + evidence + answer` and counts `answer` in `evidence`, so a list would break it);
- `status`: ReEval's `mem_<closed>_evi_<open>`: whether the pivot answered the source row right closed-book
  (`mem`) and open-book (`evi`), the cell its seed selection picked the row from; left out, as in ReEval's
  rows that lack it, where the run did not record both;
- answer swapping and the FaithEval tasks (ReEval's Category 1 files): `evidence` is the perturbed passage;
- context enriching (ReEval's Category 2 files): `evidence` is the original passage, `new_retrieval_info` the
  condensed retrieved text, `supporting_sen` the sentence kept from the passage and `condensed_evidence` the
  merged passage a model reads.

ReEval's code ignores other fields; reeval reads these back (experiments/external_cases.py): `task`,
`acceptance` (what reeval's checks and judge decided: `accepted`, `rejected:<check>`, `error:<kind>`),
`answers` (every answer the passage supports), `original_evidence` (Category 1: the passage before the
perturbation), `original_answers`, `retrieved` (context enriching: the pool passages' ids, titles and scores),
and a counterfactual row's `choices`, `answerKey` and `original_answerKey`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from experiments import task_registry

# ReEval's status values: the pivot's closed-book (memory) and open-book (evidence) correctness on the seed.
SEED_STATUSES = ("mem_correct_evi_correct", "mem_correct_evi_wrong", "mem_wrong_evi_correct", "mem_wrong_evi_wrong")


def seed_status(record: dict[str, Any]) -> str | None:
    """ReEval's `mem_*_evi_*` of the case's seed, from the pivot's closed- and open-book correctness; None when
    the run did not record both."""
    closed, opened = record.get("closed_correct"), record.get("open_correct")
    if not isinstance(closed, bool) or not isinstance(opened, bool):
        return None
    word = {True: "correct", False: "wrong"}
    return f"mem_{word[closed]}_evi_{word[opened]}"


def reeval_row(row: dict[str, Any], record: dict[str, Any], source: str) -> dict[str, Any]:
    """A public row (experiments/export/rows.py) in ReEval's fields, then reeval's own."""
    entry = task_registry.find(row["task"])
    enriching = entry is not None and entry.keeps_answer
    out: dict[str, Any] = {
        "q_id": row["id"],
        "question": row["question"],
        "answer": row["answers"][0] if row["answers"] else "",
        "evidence": row["original_context"] if enriching else row["context"],
        "source": source,
    }
    status = seed_status(record)
    if status is not None:
        out["status"] = status
    if enriching:
        out |= {
            "new_retrieval_info": row["background"],
            "supporting_sen": row["supporting_sentence"],
            "condensed_evidence": row["context"],
        }
    out |= {"task": row["task"], "acceptance": row["status"], "answers": row["answers"]}
    if not enriching:
        out["original_evidence"] = row["original_context"]
    if row["original_answers"]:  # a counterfactual case keys its original by option label instead
        out["original_answers"] = row["original_answers"]
    if enriching:
        retrieved = record.get("retrieved") if isinstance(record.get("retrieved"), list) else []
        out["retrieved"] = [
            {k: item.get(k) for k in ("id", "title", "score")} for item in retrieved if isinstance(item, dict)
        ]
    if row["choices"]["label"]:
        out |= {"choices": row["choices"], "answerKey": row["answer_key"]}
        if row["original_answer_key"]:
            out["original_answerKey"] = row["original_answer_key"]
    return out


def write_reeval(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
