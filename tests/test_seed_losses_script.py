"""scripts/seed_losses.py and scripts/judge_signal_agreement.py on hand-made run directories and on the
archived reviews (no model runs)."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


seed_losses = _load("seed_losses")
judge_signal_agreement = _load("judge_signal_agreement")


def _run(folder: Path, records: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def test_seed_outcomes_count_each_selected_seed_once_by_its_loss(tmp_path):
    def rec(seed, status, copy="", attempt=1):
        return {
            "id": f"{seed}:enrich{copy}",
            "seed_id": seed,
            "task": "context_enrich",
            "status": status,
            "attempt": attempt,
            "program_version": "context_enrich/10",
        }

    run = _run(
        tmp_path / "run",
        [
            rec("a", "rejected:seed_not_selected"),
            rec("b", "accepted", "-q"),
            rec("b", "rejected:no_other_candidate", "-e"),  # one copy accepted: the seed yields
            rec("c", "rejected:judge_only_if", "-q"),
            rec("c", "rejected:no_other_candidate", "-e"),
            rec("d", "error:parse"),
            rec("d", "rejected:supporting_sentence_off_topic", attempt=2),  # the latest attempt counts
        ],
    )
    row = seed_losses.measure(run)
    assert (row["seeds"], row["selected"]) == (4, 3)
    assert row["outcomes"] == {
        "accepted": 1,
        "rejected:judge_only_if + rejected:no_other_candidate": 1,
        "rejected:supporting_sentence_off_topic": 1,
    }
    table = seed_losses.markdown([row])
    assert "| | selected seeds (of all) | 3 (4) |" in table
    assert "| checks | `rejected:supporting_sentence_off_topic` | 1 (33%) |" in table
    assert [seed_losses.step(s) for s in ("rejected:proposal_is_gold", "rejected:judge_if", "error:parse")] == [
        "proposal",
        "judge",
        "error",
    ]


def test_the_archived_runs_give_the_published_tables():
    rows = {r["run"]: r for r in map(seed_losses.measure, seed_losses.run_dirs([])) if r}
    assert rows["nq-unanswerable-9250d20e3b"]["outcomes"]["rejected:rest_kept"] == 10
    assert rows["nq-answer-swap-f25972d03c"]["outcomes"]["accepted"] == 25
    fitted = json.loads(judge_signal_agreement.PARAMS.read_text())
    swap = judge_signal_agreement.measure(ROOT / "docs" / "reviews" / "nq-answer-swap-f25972d03c", fitted)
    assert (swap["judged"], swap["extract"]["as_stacked"], swap["choose"]["as_stacked"]) == (32, 29, 26)
    assert (swap["stacked"]["accepted_valid"], swap["stacked"]["accepted_reviewed"]) == (24, 25)
    assert (swap["extract"]["accepted_valid"], swap["extract"]["accepted_reviewed"]) == (27, 28)
