import json
from pathlib import Path

import dspy
import pytest

from programs.answer_swap import AnswerSwap, proposal_problem, swap_checks
from programs.span_edit import replace_spans

FIXTURE = Path(__file__).parent / "fixtures" / "answer_swap_accepted.jsonl"


def test_replace_every_occurrence_case_aware_and_whole_word():
    text = "Paris is big. I love paris. Parisian food. In July 30 , 2017 it rained."
    out, n = replace_spans(text, ["paris"], "lyon")
    assert out == "Lyon is big. I love lyon. Parisian food. In July 30 , 2017 it rained."
    assert n == 2
    out, n = replace_spans(text, ["July 30, 2017"], "May 2, 2016")  # tokenised spacing in the text
    assert "May 2, 2016 it rained" in out and n == 1


def test_longest_alias_first():
    out, n = replace_spans("Born 13 July 1890 and in 1890 again.", ["1890", "13 July 1890"], "1901")
    assert out == "Born 1901 and in 1901 again." and n == 2


@pytest.mark.parametrize("proposal, golds, problem", [
    ("", ["July 2005"], "empty_proposal"),
    ("The Beatles", ["beatles"], "proposal_is_gold"),
    ("2005", ["July 2005"], "proposal_is_gold"),  # the scorer would accept it as the gold
    ("one two three four five six", ["July 2005"], "proposal_too_long"),
    ("last summer", ["July 2005"], "proposal_type_mismatch"),
    ("March 2004", ["July 2005"], None),
    ("The Rolling Stones", ["the Beatles"], None),
])
def test_proposal_problems(proposal, golds, problem):
    assert proposal_problem(proposal, golds) == problem


def test_checks_catch_a_new_answer_that_contains_the_old():
    checks = swap_checks("It was 1890.", "It was May 1890.", ["1890"], "May 1890", 0.9)
    assert checks["new_answer_present"] and not checks["old_answer_absent"]


def test_module_retries_then_swaps():
    lm = dspy.utils.DummyLM([
        {"answer_type": "year", "wrong_answer": "1890"},  # the gold: rejected
        {"answer_type": "year", "wrong_answer": "1902"},
    ], adapter=dspy.JSONAdapter())
    context = "The story was written in 1890. By 1890 it was famous."
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=3)(question="when was it written", context=context, answers=["1890"])
    assert out.rejection is None and out.new_answer == "1902"
    assert out.context == "The story was written in 1902. By 1902 it was famous."
    assert [p["problem"] for p in out.proposals] == ["proposal_is_gold", None]
    assert out.checks["similarity"] == 1.0


def test_accepted_real_outputs_pass_the_checks():
    """Cases accepted in a real run with the local pivot (recorded): new answer in, old answer out."""
    cases = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    assert len(cases) >= 5
    for case in cases:
        checks = swap_checks(case["original_context"], case["context"], case["original_answers"],
                             case["answers"][0], 0.9)
        assert checks["new_answer_present"] and checks["old_answer_absent"] and checks["rest_unchanged"], case["id"]
