"""scripts/audit_scoring.py: the blind dump hides every score, and the archived reading of the bench's scoring
(docs/reviews/bench-local-40-adb3e759b1/scoring) gives the agreement docs/results/bench.md quotes."""

import importlib.util
import json
from pathlib import Path

import pytest

from experiments.task_registry import task_answer
from metrics.scores import score_record

ROOT = Path(__file__).resolve().parents[1]
ARCHIVE = ROOT / "docs" / "reviews" / "bench-local-40-adb3e759b1" / "scoring"
spec = importlib.util.spec_from_file_location("audit_scoring", ROOT / "scripts" / "audit_scoring.py")
audit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(audit)


def test_archived_readings_agree_with_the_scores_as_documented(capsys):
    assert audit.compare(ARCHIVE / "random") == {"read": 40, "agree": 39, "ambiguous": 1}
    assert audit.compare(ARCHIVE / "rules") == {"read": 38, "agree": 32, "disagree": 5, "ambiguous": 1}
    disagreements = [line for line in capsys.readouterr().out.splitlines() if "tool 1 reader 0" in line]
    # every disagreement is FaithEval's non-strict "not" inside an answer that does not abstain
    assert len(disagreements) == 5 and all("unanswerable/perturbed" in line for line in disagreements)


def _scored(i: int, task: str, prediction: str, answers: list[str], variant: str = "perturbed") -> dict:
    return score_record(
        {
            "id": f"c{i}",
            "task": task,
            "task_answer": task_answer(task),
            "variant": variant,
            "setting": "open_book",
            "target": "t",
            "question": f"question {i}",
            "answers": answers,
            "prediction": prediction,
            "status": "ok",
        }
    )


def test_dump_hides_the_scores_and_keeps_them_in_the_key(tmp_path):
    records = [
        _scored(0, "answer_swap", "it was John Lennon in the end", ["John Lennon"]),
        _scored(1, "unanswerable", "The answer is not in the passage at all", ["x"]),
        _scored(2, "unanswerable", "Paris is the capital, not Rome", ["x"]),
        _scored(3, "context_enrich", "somebody else entirely, or so we think", ["Ringo"]),
    ]
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(json.dumps(r) + "\n" for r in records))
    audit.dump(scores, tmp_path / "out", "rules", 0)
    blind = (tmp_path / "out" / "blind.txt").read_text()
    key = json.loads((tmp_path / "out" / "key.json").read_text())
    assert "task_correct" not in blind and "keyword" not in blind and "PRED: 'Paris is the capital, not Rome'" in blind
    # c1 and c2 fall in two groups (a keyword hit that is not the bare constant, a long keyword answer): read once
    assert sorted(r["id"] for r in key["records"]) == ["c0", "c1", "c2", "c3"]
    by_id = {r["id"]: r for r in key["records"]}
    assert by_id["c0"]["task_correct"] is True and by_id["c2"]["task_correct"] is True  # "not": FaithEval's rule
    assert by_id["c3"]["task_correct"] is False


def test_a_malformed_verdict_line_names_its_file_and_line(tmp_path):
    (tmp_path / "verdicts.tsv").write_text("0\t1\tfine\n1\tyes\n")
    with pytest.raises(SystemExit, match=r"verdicts.tsv:2: expected"):
        audit.read_verdicts(tmp_path / "verdicts.tsv")
