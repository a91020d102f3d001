"""scripts/measure_acceptance.py and scripts/conflict_on_valid.py on the archive (no model runs): the figures
docs/results/acceptance.md quotes recompute from the archived readings, and the estimators behave."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


measure = _load("measure_acceptance")
conflict = _load("conflict_on_valid")


def test_the_fresh_readings_recompute(capsys):
    readings = ROOT / "docs" / "readings"
    measure.fresh_report([readings / "nq-unanswerable-490347297d", readings / "nq-unanswerable-aaf4abdcbd"])
    out = capsys.readouterr().out
    assert "103 seeds selected, 75 judged" in out
    assert "the judge alone: accepts 62 (60% of selected); read 57" in out and "43 valid = 75%" in out


def test_the_known_seed_reading_and_the_conflict_table_recompute(capsys):
    cases, answers = conflict.known_swaps(ROOT / "docs" / "reviews" / "knowledge-conflict-9eb7a0a1c6")
    level = conflict.levels(cases, ROOT / "docs" / "reviews" / "knowledge-conflict-9eb7a0a1c6")
    assert (
        len(cases) == 169 and sum(lv["checks"] is None for lv in level.values()) == 146
    )  # 148 before answer_swap/31 (a country's people or short names), 157 before /29 (head, pronouns), 158 before /22
    read = [lv["verdict"] for lv in level.values() if lv["verdict"] in ("valid", "invalid")]
    assert len(read) == 60 and read.count("valid") == 37
    open_book = [a for a in answers if a["setting"] == "open_book"]
    valid = [a for a in open_book if level[a["case_id"]]["verdict"] == "valid"]
    assert len(valid) == 37 and all(a["label"] == "evidence" for a in valid)


def test_prediction_powered_shares_follow_the_reading_where_the_predictor_is_wrong():
    # The predictor calls every case valid; the reading says the "memory" cases are the invalid ones.
    answers = [{"case_id": f"c{i}", "label": "memory" if i < 10 else "evidence"} for i in range(40)]
    level = {
        f"c{i}": {"checks": None, "p": 1.0, "verdict": ("invalid" if i < 10 else "valid") if i % 2 == 0 else None}
        for i in range(40)
    }
    shares = conflict.ppi_shares(answers, level, boot=200)
    assert shares["memory"][0] == pytest.approx(0.0, abs=1e-9)  # among valid cases, memory vanishes
    assert shares["evidence"][0] == pytest.approx(1.0)
    naive = sum(a["label"] == "memory" for a in answers) / len(answers)
    assert naive == 0.25  # what the table on every accepted case would say


def test_run_key_names_archived_and_local_runs(tmp_path):
    assert measure.run_key(ROOT / "docs" / "reviews" / "nq-answer-swap-eb625ff9e8") == "nq-answer-swap-eb625ff9e8"
    assert measure.run_key(tmp_path / "some-run") == "some-run"
