"""Answer kinds read by the shipped spaCy pipeline, and the swap's pivot path that uses them."""

import dspy
import pytest

from programs.answer_kinds import Typed, kind_problem, type_in
from programs.answer_swap import AnswerSwap
from programs.entity_tagger import PINNED, TaggerUnavailable, tagger, verify
from programs.person_names import generic_name
from programs.span_edit import replace_forms


@pytest.fixture(scope="module")
def tag():
    return tagger()


def _kinds(tag, context, answers, new):
    old = type_in(tag, context, answers)
    fresh = type_in(tag, replace_forms(context, answers, new).text, [new])
    return old, fresh


@pytest.mark.parametrize(
    "context, answers, new",
    [
        # Read invalid by blind readers when the pivot proposed them: a company for a driver, a band for an album.
        ("Ray Harroun won the first Indianapolis 500 in 1911 driving the Marmon Wasp .", ["Ray Harroun"], "Audi"),
        ("The Torah scroll is kept in the Ark , a cabinet in the synagogue .", ["Ark"], "Cairo"),
    ],
)
def test_a_proposal_of_another_kind_is_refused(tag, context, answers, new):
    old, fresh = _kinds(tag, context, answers, new)
    assert kind_problem(old, fresh) == "proposal_kind_mismatch", (old, fresh)


@pytest.mark.parametrize(
    "context, answers, new",
    [
        ("Ray Harroun won the first Indianapolis 500 in 1911 driving the Marmon Wasp .", ["Ray Harroun"], "Joe Dawson"),
        ("The Harlem River separates Manhattan from the Bronx .", ["the Harlem River"], "the Hudson River"),
        ("He was born in Lyon , France , in 1902 .", ["Lyon"], "Marseille"),
        ("The pelvis is joined to the spine at the sacroiliac joint .", ["sacroiliac joint"], "hip joint"),
    ],
)
def test_a_proposal_of_the_same_kind_passes(tag, context, answers, new):
    old, fresh = _kinds(tag, context, answers, new)
    assert kind_problem(old, fresh) is None, (old, fresh)


def test_a_plural_in_a_singulars_place_is_refused(tag):
    old, fresh = _kinds(tag, "The cambium is the main growth layer of the stem .", ["cambium"], "trunks")
    assert old.plural is False and fresh.plural is True
    assert kind_problem(old, fresh) == "proposal_number_mismatch"


def test_kinds_the_tagger_confuses_are_let_through():
    team = Typed("organisation", "ORG", False, "Brazil")
    country = Typed("place", "GPE", False, "Argentina")
    assert kind_problem(team, country) is None
    person = Typed("person", "PERSON", False, "Ringo Starr")
    band = Typed("organisation", "ORG", False, "Aerosmith")
    assert kind_problem(person, band) == "proposal_kind_mismatch"


def test_reading_groups():
    assert Typed("person", "PERSON", None, "x").group == "people"
    assert Typed("place", "GPE", None, "x").group == "places and organisations"
    assert Typed("thing", None, False, "x").group == "works and things"
    assert Typed("quantity", "CARDINAL", None, "x").group == "dates and numbers"


def test_stand_in_names_by_surname_frequency():
    assert generic_name("Jane Smith") and generic_name("Alice Johnson")
    assert not generic_name("Lexie Grey") and not generic_name("Smith") and not generic_name("Jane Q. Smith")


def test_the_tagger_refuses_files_that_differ(tmp_path):
    for name in PINNED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"not the model")
    with pytest.raises(TaggerUnavailable, match="refusing to load"):
        verify(tmp_path)


CONTEXT = "Ray Harroun won the first Indianapolis 500 in 1911 . Harroun had retired from racing before the race ."


def test_the_pivot_is_asked_for_the_kind_and_a_refused_kind_is_asked_again():
    lm = dspy.utils.DummyLM(
        [
            {"wrong_answer": "Audi"},  # an organisation for a person: refused
            {"answers": ["Jane Smith", "Joe Dawson"]},  # a stand-in name, then a real driver
        ],
        adapter=dspy.JSONAdapter(),
    )
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=3, distance="near")(
            question="who won the first indianapolis 500", context=CONTEXT, answers=["Ray Harroun"]
        )
    assert [(p["proposal"], p["problem"]) for p in out.proposals] == [
        ("Audi", "proposal_kind_mismatch"),
        ("Jane Smith", "proposal_placeholder"),
        ("Joe Dawson", None),
    ]
    assert out.kind == "person" and out.new_answer == "Joe Dawson" and out.rejection is None
    assert "Joe Dawson won" in out.context and "Dawson had retired" in out.context
    prompt = lm.history[0]["messages"][-1]["content"]
    assert "a person: another real or plausible person" in prompt and "Harroun had retired" in prompt


def test_rules_make_no_place_and_the_pivot_does():
    context = "The river flows through Lyon before it reaches the sea ."
    question = "which city does the river flow through"
    rules = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question=question, context=context, answers=["Lyon"]
    )
    assert rules.rejection == "level_unreachable" and rules.kind == "place"
    lm = dspy.utils.DummyLM([{"wrong_answer": "Grenoble"}], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        pivot = AnswerSwap(max_attempts=1, distance="near")(question=question, context=context, answers=["Lyon"])
    assert pivot.rejection is None and pivot.context == context.replace("Lyon", "Grenoble")


def test_a_year_at_a_code_made_distance_asks_the_pivot_nothing():
    lm = dspy.utils.DummyLM([], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=1, distance="near")(
            question="when was the novel written", context="The novel was written in 1890 in Paris .", answers=["1890"]
        )
    assert out.new_answer in ("1889", "1891") and not lm.history


def test_settings_that_would_be_ignored_are_refused():
    with pytest.raises(ValueError, match="writer: rules"):
        AnswerSwap(distance="proposed", writer="rules")
    with pytest.raises(ValueError, match="name_distance"):
        AnswerSwap(distance="near", writer="pivot", name_distance="near", name_candidates=lambda *a: [])


def test_a_person_the_tagger_reads_as_an_organisation_is_a_person(tag):
    from programs.person_names import is_first_name

    context = "Hilary Banks is played by Karyn Parsons in the sitcom ."
    typed = type_in(tag, context, ["Karyn Parsons"], "who played hilary banks", is_first_name)
    assert typed.kind == "person" and typed.read == "organisation"


def test_a_stand_in_name_inside_a_longer_answer_is_a_placeholder():
    from programs.answer_swap import proposal_problem

    golds = ["composer / lyricist Dave Malloy"]
    assert proposal_problem("composer / lyricist John Doe", golds) == "proposal_placeholder"
    assert proposal_problem("composer / lyricist Anaïs Mitchell", golds) is None
