"""The development / held-out split of shipped rows (experiments/splits.py)."""

import pytest
from pydantic import ValidationError

from experiments.config import DataConfig
from experiments.splits import DEVELOPMENT_ROWS, is_development, select_split


def test_nq_development_rows_are_the_first_thousand_and_the_judge_controls():
    assert is_development("nq", 0) and is_development("nq", 999)
    assert not is_development("nq", 1000) and not is_development("nq", 4999)
    assert is_development("nq", 5000) and is_development("nq", 5499)
    assert not is_development("nq", 5500)


def test_arc_challenge_holds_out_every_test_question_after_the_first_two_hundred():
    assert is_development("arc_challenge", 0) and is_development("arc_challenge", 199)
    assert not is_development("arc_challenge", 200)
    questions = list(range(1172))
    assert select_split(questions, "arc_challenge", "held_out")[0] == 200


def test_split_selects_by_file_position_and_partitions_the_rows():
    rows = list(range(6000))
    development = select_split(rows, "nq", "development")
    held_out = select_split(rows, "nq", "held_out")
    assert len(development) == 1500 and development[:2] == [0, 1] and development[-1] == 5499
    assert held_out[0] == 1000 and 999 not in held_out and 5000 not in held_out and held_out[-1] == 5999
    assert sorted(development + held_out) == rows
    assert select_split(rows, "nq", "all") == rows


def test_a_source_without_declared_rows_has_no_split():
    assert "squad" not in DEVELOPMENT_ROWS
    with pytest.raises(ValueError, match="no declared development rows"):
        select_split([1, 2], "squad", "held_out")
    with pytest.raises(ValidationError, match="no declared development rows"):
        DataConfig(source="squad", split="held_out")


def test_the_default_split_leaves_a_config_identity_unchanged():
    assert "split" not in DataConfig(source="nq").model_dump(exclude_defaults=True)
