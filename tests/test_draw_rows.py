"""Rows drawn by the reading group of their answer (scripts/draw_rows.py), typed by the shipped spaCy pipeline in
the passage as the answer swap types them, fresh and outside the ranges kept for other readings."""

import dspy
import pytest

from programs.entity_tagger import tagger
from scripts.draw_rows import answer_group, drawn


def _row(question, context, answer):
    return dspy.Example(question=question, context=context, answers=[answer]).with_inputs("question", "context")


ROWS = [
    _row("when did the war end", "The war ended in 1945 after six years of fighting in Europe and Asia .", "1945"),
    _row("who wrote the novel", "The novel was written by Charles Dickens in London in winter .", "Charles Dickens"),
    _row("where is the tower", "The tower stands in Paris , the capital of France , beside the river .", "Paris"),
    _row("where is the bridge", "The bridge stands in Rome , the capital of Italy , beside the river .", "Rome"),
    _row("where is the castle", "The castle stands in Vienna , the capital of Austria , on a hill .", "Vienna"),
]


@pytest.fixture(scope="module")
def tag():
    return tagger()


def test_each_row_is_typed_into_its_group(tag):
    assert [answer_group(tag, r) for r in ROWS[:3]] == ["dates and numbers", "people", "places and organisations"]


def test_only_fresh_rows_of_the_groups_outside_the_skipped_ranges_are_drawn(tag):
    quoted = "where is the castle\n"
    assert drawn(ROWS, ["places and organisations"], quoted, [(3, 3)], tag) == [2]
    assert drawn(ROWS, ["places and organisations", "dates and numbers"], "", [], tag) == [0, 2, 3, 4]


def test_a_row_whose_answer_is_not_in_its_passage_is_not_drawn(tag):
    row = _row("who was it", "Nothing in this passage names anyone at all , not even once .", "Ada Lovelace")
    assert drawn([row], ["people"], "", [], tag) == []
