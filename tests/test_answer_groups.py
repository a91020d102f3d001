"""Rows drawn by the reading group of their answer (`data.answer_groups`), typed by the shipped spaCy pipeline
in the passage as the answer swap types them."""

import dspy
import pytest
from pydantic import ValidationError

from experiments.answer_groups import answer_group, keep_groups
from experiments.config import DataConfig
from programs.entity_tagger import tagger


def _row(question, context, answer):
    return dspy.Example(question=question, context=context, answers=[answer]).with_inputs("question", "context")


ROWS = [
    _row("when did the war end", "The war ended in 1945 after six years of fighting .", "1945"),
    _row("who wrote the novel", "The novel was written by Charles Dickens in London .", "Charles Dickens"),
    _row("where is the tower", "The tower stands in Paris , the capital of France .", "Paris"),
]


@pytest.fixture(scope="module")
def tag():
    return tagger()


def test_each_row_is_typed_into_its_group(tag):
    assert [answer_group(tag, r) for r in ROWS] == ["dates and numbers", "people", "places and organisations"]


def test_only_the_asked_groups_are_kept_in_order(tag):
    kept, dropped = keep_groups(ROWS, ["places and organisations", "dates and numbers"], tag)
    assert [r.answers[0] for r in kept] == ["1945", "Paris"]
    assert dropped == 1


def test_a_row_whose_answer_is_not_in_its_passage_is_dropped(tag):
    kept, dropped = keep_groups([_row("who", "Nothing here names anyone .", "Ada Lovelace")], ["people"], tag)
    assert (kept, dropped) == ([], 1)


def test_an_unknown_group_is_refused_by_the_config():
    with pytest.raises(ValidationError, match="answer_groups"):
        DataConfig(source="nq", answer_groups=["cities"])
