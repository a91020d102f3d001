"""The archived reviews (docs/reviews/) stay usable: every sampled case has a verdict, the validity
figures the documentation quotes compute from the archive alone, with no run store or MLflow, and
each figure says whose reading it rests on (review/reviewers.json)."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.review.sample import read_sample
from experiments.review.verdicts import load_verdicts
from experiments.validity.render import statement
from experiments.validity.run import run_validity

ARCHIVE = Path(__file__).resolve().parents[1] / "docs" / "reviews"
# A run is a folder with cases.jsonl; a bench stage sits one level down (<bench id>/<stage>).
RUNS = sorted(
    str(p.parent.relative_to(ARCHIVE)) for p in [*ARCHIVE.glob("*/cases.jsonl"), *ARCHIVE.glob("*/*/cases.jsonl")]
)


def test_there_is_an_archived_review():
    assert RUNS, "docs/reviews holds no reviewed run"


@pytest.mark.parametrize("run_id", RUNS)
def test_an_archived_review_answers_its_whole_sample_and_computes(run_id):
    review = ARCHIVE / run_id / "review"
    sample = read_sample(review / "sample.json")
    verdicts = load_verdicts(sorted(review.glob("*.jsonl")))
    answered = {str(v.id) for v in verdicts}
    sampled = [str(c["id"]) for c in sample["cases"]]
    assert set(sampled) <= answered
    validity = run_validity(run_id, runs_root=ARCHIVE)
    copies = sum(len(c.get("same", ())) for c in sample["cases"])  # cases that read the same share a verdict
    assert validity.figures.reviewed_n + validity.figures.undecided_n == len(sampled) + copies
    assert 0.0 <= validity.figures.human_valid_rate <= 1.0


@pytest.mark.parametrize("run_id", RUNS)
def test_an_archived_review_names_its_reviewers_kind(run_id):
    text = statement(run_validity(run_id, runs_root=ARCHIVE))
    assert "by 1 reviewer (reviewer-1: maintainer, blind)" in text
