"""Answer kinds read by the shipped spaCy pipeline, and the swap's pivot path that uses them."""

import dspy
import pytest

from programs.answer_kinds import KINDS, Typed, kind_problem, type_in
from programs.answer_swap import AnswerSwap
from programs.entity_tagger import PINNED, TaggerUnavailable, tagger, verify
from programs.person_names import generic_name
from programs.place_bank import place_of
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
        # `proposed`: at a code-made distance a person is given a made-up name without asking the pivot.
        out = AnswerSwap(max_attempts=3, distance="proposed")(
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


def test_rules_make_a_city_of_the_bank_and_the_pivot_a_place_outside_it():
    context = "The river flows through Lyon before it reaches the sea ."
    question = "which city does the river flow through"
    rules = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question=question, context=context, answers=["Lyon"]
    )
    assert rules.rejection is None and rules.kind == "place" and rules.proposals[-1]["answer_type"] == "place_bank"
    assert place_of(rules.new_answer).code == "FR"
    river = "The Harlem River separates Manhattan from the Bronx ."
    question = "what river separates manhattan from the bronx"
    rules = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question=question, context=river, answers=["the Harlem River"]
    )
    assert rules.rejection == "level_unreachable" and rules.kind == "place"
    # The pivot names a place GeoNames and WordNet lack, unless its kinds leave places out.
    lm = dspy.utils.DummyLM([{"wrong_answer": "the Hudson River"}], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        unasked = AnswerSwap(max_attempts=1, distance="near", pivot_kinds=["work"])(
            question=question, context=river, answers=["the Harlem River"]
        )
        pivot = AnswerSwap(max_attempts=1, distance="near")(
            question=question, context=river, answers=["the Harlem River"]
        )
    assert unasked.rejection == "level_unreachable" and unasked.proposals[-1]["problem"] == "kind_not_written"
    assert pivot.rejection is None and pivot.context == river.replace("Harlem River", "Hudson River")


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


# Read invalid by two blind readers on fresh rows when answer_swap/28 accepted them (docs/results/every_kind.md).
MOVE = "`` I Can Hear the Grass Grow '' is the second single by The Move . It reached number five on the UK chart ."
HIRSCHMAN = "The theory is generally associated with Hirschman . He presented a complete formulation of the strategy ."
SWINDELL = "The song was recorded by Cole Swindell . It was the lead single of his second album ."
SPIKE = "Spike Bulldog ( called Killer in four episodes ) is portrayed as an American bulldog , a loving father ."
PITTSBURGH = (
    "Filming used 20 locations all within the Pittsburgh metropolitan area . The studio had also shot "
    "She 's Out of My League in Pittsburgh in 2008 ."
)


def _swap_with(proposal: str, question: str, context: str, answers: list[str]):
    # Every kind written, so that the checks on what the pivot proposes are what is tested.
    lm = dspy.utils.DummyLM([{"wrong_answer": proposal}], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return AnswerSwap(max_attempts=1, pivot_kinds=KINDS)(question=question, context=context, answers=answers)


def test_a_common_word_never_replaces_what_the_passage_writes_as_a_name():
    from programs.answer_kinds import common_for_name, written_as_name

    assert written_as_name(MOVE, "The Move") and common_for_name(MOVE, "The Move", "singer")
    assert not common_for_name(MOVE, "The Move", "The Kinks")
    # A year's form is its whole date, capitalised by its month: no name.
    assert not written_as_name("It was published on July 13 , 1890 in a paper .", "1890")
    out = _swap_with("singer", "who sang i can hear the grass grow", MOVE, ["The Move"])
    assert out.rejection == "proposal_kind_mismatch"


@pytest.mark.parametrize(
    "proposal, question, context, answers, problem",
    [
        ("The British", "who has given the theory of unbalanced growth", HIRSCHMAN, ["Hirschman"], "gender_unknown"),
        ("Taylor Swift", "who sings the song", SWINDELL, ["Cole Swindell"], "gender_unknown"),
        ("Joanne Rowling", "who sings the song", SWINDELL, ["Cole Swindell"], "gender_mismatch"),
    ],
)
def test_a_new_name_must_take_the_passages_pronouns(proposal, question, context, answers, problem):
    assert _swap_with(proposal, question, context, answers).rejection == f"proposal_{problem}"


def test_a_name_of_the_passages_sex_passes():
    out = _swap_with("Brad Paisley", "who sings the song", SWINDELL, ["Cole Swindell"])
    assert out.rejection is None and "recorded by Brad Paisley" in out.context


def test_the_old_answers_head_left_in_the_passage_rejects_the_case():
    out = _swap_with("a German shepherd", "what kind of dog was spike", SPIKE, ["an American bulldog"])
    assert out.new_answer == "a German shepherd" and out.rejection == "old_answer_trace:head"
    assert out.checks["old_answer_trace:head"] is False


def test_heads_left_reads_the_head_not_its_plural():
    from metrics.word_traces import heads_left

    assert heads_left("Spike Bulldog is a German shepherd .", ["an American bulldog"], ["a German shepherd"])
    assert not heads_left("It blends market economies .", ["A mixed economy"], ["A communist society"])
    assert not heads_left("a German shepherd", ["an American bulldog", "1890"], ["a German shepherd"])


def test_a_places_name_part_takes_the_whole_new_name():
    out = _swap_with("Los Angeles", "where was the movie filmed", PITTSBURGH, ["the Pittsburgh metropolitan area"])
    assert (
        "shot She 's Out of My League in Los Angeles in 2008"
        in replace_forms(PITTSBURGH, ["the Pittsburgh metropolitan area"], "Los Angeles", whole_name=True).text
    )
    assert "in Angeles" not in (out.context or "")
    # A person's surname still stands for the person: "Foster" becomes "Rowling", not the full name.
    assert replace_forms("Song by Stephen Foster . Foster wrote it .", ["Stephen Foster"], "Jo Rowling").text == (
        "Song by Jo Rowling . Rowling wrote it ."
    )


def test_at_a_code_made_distance_a_person_gets_a_made_up_name_and_the_pivot_is_not_asked():
    lm = dspy.utils.DummyLM([{"wrong_answer": "Tom Cruise"}], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=3, distance="near")(
            question="who won the first indianapolis 500", context=CONTEXT, answers=["Ray Harroun"]
        )
    assert out.rejection is None and out.kind == "person" and not lm.history
    assert out.proposals[-1]["answer_type"] == "made_up_name" and out.new_answer != "Tom Cruise"


@pytest.mark.parametrize(
    "question, context, answers, kind, new",
    [
        # A "who" answer the passage calls he: a person, whom code names, though the tagger reads a group.
        (
            "who sang i'm going back to cali",
            "`` Going Back to Cali '' is a single by LL Cool J from the Less Than Zero soundtrack . He recorded it "
            "in 1987 and his label released it .",
            ["LL Cool J"],
            "person",
            True,
        ),
        # A title with its year is a work, not the year the tagger reads; code has no work to give here.
        (
            "what was the first movie thanos was in",
            "Thanos first appeared on film in The Avengers ( 2012 ) , in a scene after the credits .",
            ["The Avengers ( 2012 )"],
            "work",
            False,
        ),
        # A decade moves by a decade.
        (
            "when was the term social justice first used",
            "The term social justice was first used in the 1840s by a Jesuit priest .",
            ["1840s"],
            "date",
            True,
        ),
    ],
)
def test_what_the_small_tagger_misreads_is_typed_by_the_question_and_the_passage(question, context, answers, kind, new):
    lm = dspy.utils.DummyLM([], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
            question=question, context=context, answers=answers
        )
    assert out.kind == kind and not lm.history
    assert (out.rejection is None and out.new_answer not in answers) if new else out.rejection == "level_unreachable"


def test_a_person_with_a_known_first_name_stays_a_person_in_a_where_question(tag):
    from programs.person_names import is_first_name

    context = "The Kentucky Fried Chicken name was coined by Don Anderson , a sign painter hired by Harman ."
    question = "where did the name kentucky fried chicken come from"
    typed = type_in(tag, context, ["Don Anderson"], question, is_first_name)
    assert typed.kind == "person"
    # A name the lists do not know as a first name is still read as the place the question asks for.
    river = type_in(tag, "The Rhone flows through Lyon .", ["Lyon"], "where does the rhone flow", is_first_name)
    assert river.kind == "place"


@pytest.mark.parametrize(
    "question, context, answer",
    [
        # Read invalid when the pivot wrote another kind in their place: "Transnet" for Cecil Rhodes, "The
        # Kingdom of Life" for Aristotle.
        (
            "who wanted to create a railroad from cape town to cairo",
            "This plan was initiated at the end of the 19th century , largely under the vision of Cecil Rhodes , "
            "in the attempt to connect adjacent African possessions of the British Empire .",
            "Cecil Rhodes",
        ),
        (
            "who divided up the living world into just plants and animals",
            "The division goes back at least as far as Aristotle ( 384 BC -- 322 BC ) , who distinguished between "
            "plants , which generally do not move , and animals , which often are mobile to catch their food .",
            "Aristotle",
        ),
        (
            "which mountain man rediscovered south pass and brought back important information about this trail",
            "Jedediah Strong Smith ( January 6 , 1799 -- May 27 , 1831 ) , was a clerk , frontiersman , hunter , "
            "trapper , author , cartographer , and explorer of the Rocky Mountains .",
            "Jedediah Strong Smith",
        ),
    ],
)
def test_a_person_read_as_another_name_is_a_person(question, context, answer):
    typed = AnswerSwap(3, writer="pivot")._typed(question, context, [answer])
    assert typed.kind == "person", typed


@pytest.mark.parametrize(
    "question, context, answer",
    [
        ("who sang the song", "The song was recorded by Arctic Monkeys in 2006 .", "Arctic Monkeys"),
        ("who won the battle", "It ended in a victory of the Allied Powers over the German armies .", "Allied Powers"),
        ("where did immigrants enter new york", "Immigrants entered at Castle Clinton before 1890 .", "Castle Clinton"),
    ],
)
def test_a_band_or_an_alliance_is_not_made_a_person(question, context, answer):
    typed = AnswerSwap(3, writer="pivot")._typed(question, context, [answer])
    assert typed.kind != "person", typed
