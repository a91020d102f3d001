"""scripts/measure_counterfactual_filters.py on the archived counterfactual readings (no model runs): the
figures docs/results/validity.md quotes for the filters that were tried and not shipped."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("filters", ROOT / "scripts" / "measure_counterfactual_filters.py")
filters = importlib.util.module_from_spec(spec)
spec.loader.exec_module(filters)


def _record(context: str) -> dict:
    return {
        "question": "Which planet in the solar system has the longest year?\nA. The planet closest to the Sun.",
        "options": [
            "The planet closest to the Sun.",
            "The planet with the most moons.",
            "The planet farthest from the Sun.",
        ],
        "answers": ["The planet with the most moons."],
        "context": context,
    }


def test_link_asks_the_target_sentence_to_answer_the_question_not_merely_name_the_target():
    assert not filters.linked(_record("The planet with the most moons is Jupiter. It has 79 moons."))
    assert filters.linked(_record("The planet with the most moons has the longest year of all."))


def test_roc_auc_counts_ties_half():
    assert filters.roc_auc([0.9, 0.5], [0.1, 0.5]) == 0.875


def test_the_documented_figures_come_out_of_the_archive(capsys):
    filters.main([])
    out = capsys.readouterr().out
    development, held_out = out.split("== held-out")
    assert "68 passages read, 39 of 59 read valid of the judge-accepted" in development
    assert "c_expected >= 0.9: 28 of 40 read valid" in development
    assert "link, of the judge-accepted: 32 of 44 read valid" in development
    assert "54 passages read, 24 of 44 read valid of the judge-accepted" in held_out
    assert "c_expected >= 0.9: 17 of 27 read valid" in held_out
    assert "link, of the judge-accepted: 22 of 37 read valid" in held_out
