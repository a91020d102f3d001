"""Swaps of a person's name: a made-up name of the passage's gender, from the locale that knows the old one."""

from __future__ import annotations

import pytest

from programs.answer_swap import AnswerSwap
from programs.person_names import (
    is_first_name,
    is_person_answer,
    made_up_names,
    made_up_parts,
    name_gender,
    name_locale,
    person_gender,
)

CRICKET = (
    "Sachin Tendulkar is an Indian former cricketer . He has scored the most runs in ODI cricket . In 2001 , "
    "Tendulkar became the first player to score 10,000 runs ."
)
SONG = "Only in My Dreams is a song by American actress Debbie Gibson . It was written by Gibson herself in 1984 ."


@pytest.mark.parametrize(
    "question, answer, person",
    [
        ("who has scored the most runs in odi", "Sachin Tendulkar", True),
        ("who sings reach out i'll be there", "the Four Tops", False),
        ("who won the world cup", "India", False),
        ("where was the treaty signed", "Versailles Palace", False),
        ("who painted it", "Vincent van Gogh", True),
    ],
)
def test_a_person_answer_is_a_who_question_answered_by_a_capitalised_full_name(question, answer, person):
    assert is_person_answer(question, answer) is person


def test_gender_comes_from_the_passage_and_the_first_name_and_is_withheld_when_they_disagree():
    assert person_gender(CRICKET, "Sachin Tendulkar") == "male"
    assert person_gender(SONG, "Debbie Gibson") == "female"
    assert person_gender("Debbie Gibson wrote it . He sang it on tour .", "Debbie Gibson") is None
    assert person_gender("The prize went to Alex Morgan .", "Alex Morgan") is None  # neither says


def test_the_locale_is_the_one_whose_name_lists_hold_the_old_name():
    assert name_locale(CRICKET, "Sachin Tendulkar") == "en_IN"
    assert name_locale("A German painter .", "Qxz Wvvk") == "de_DE"  # unknown name: the passage's nationality
    assert name_locale("A painter .", "Qxz Wvvk") == "en_US"


def test_made_up_names_are_deterministic_avoid_common_surnames_and_names_the_caller_knows():
    first = list(made_up_names(SONG, "who sings only in my dreams", "Debbie Gibson", "key"))
    assert first == list(made_up_names(SONG, "who sings only in my dreams", "Debbie Gibson", "key"))
    assert first and all(len(n.split()) == 2 for n in first)
    assert not any(n.split()[-1] in {"Smith", "Johnson", "Williams", "Brown", "Jones"} for n in first)
    known = set(first[:3])
    assert (
        list(made_up_names(SONG, "who sings only in my dreams", "Debbie Gibson", "key", known.__contains__))[0]
        == first[3]
    )
    # the passage's pronoun disagrees with the first name's lists: no name of either sex is safe
    assert list(made_up_names("The prize went to Debbie Gibson . He kept it .", "who won", "Debbie Gibson", "k")) == []


def test_a_person_swap_at_a_code_level_needs_no_pivot_and_replaces_the_surname_alone_too():
    out = AnswerSwap(distance="near", writer="rules")(
        question="who has scored the most runs in odi", context=CRICKET, answers=["Sachin Tendulkar"]
    )
    new = out.new_answer
    assert out.rejection is None and out.proposals[0]["answer_type"] == "made_up_name"
    assert "Tendulkar" not in out.context and f"{new} is an Indian" in out.context
    assert f", {new.split()[-1]} became" in out.context


def test_a_person_whose_gender_nothing_gives_gets_a_name_the_passage_cannot_contradict():
    from programs.person_names import name_gender

    question, context = "who won the prize", "The prize went to Alex Morgan ."
    out = AnswerSwap(distance="near", writer="rules")(question=question, context=context, answers=["Alex Morgan"])
    assert out.rejection is None and out.proposals[0]["answer_type"] == "made_up_name"
    assert out.context == f"The prize went to {out.new_answer} ."
    # the question's word for the person decides where it says one
    names = list(made_up_names(context, "who is the girl who won the prize", "Alex Morgan", "k"))
    assert names and {name_gender(n) for n in names} <= {"female", None}
    # a passage whose gendered words disagree with the first name's lists still gets none
    clash = "Debbie Gibson wrote it . He sang it on tour ."
    assert list(made_up_names(clash, "who wrote it", "Debbie Gibson", "k")) == []


def test_a_question_asking_who_anywhere_asks_for_a_person():
    assert is_person_answer("actor who plays david platt in coronation street", "Jack Peter Shepherd")
    assert not is_person_answer("area of france where the allied force landed", "Normandy")


def test_a_name_the_shipped_pool_holds_is_known_and_a_made_up_one_is_not():
    from experiments.known_names import known_in_pool

    assert known_in_pool("Barack Obama") and not known_in_pool("Qxzavier Wvvkensen")
    assert not known_in_pool("Barack Obam")  # whole words only


def test_a_person_of_a_nationality_written_in_another_script_gets_no_made_up_name():
    context = "Russian cosmonaut Gennady Padalka spent 878 days in space . He holds the record ."
    assert list(made_up_names(context, "who has spent the most time in space", "Gennady Padalka", "k")) == []


@pytest.mark.parametrize(
    "answer, name",
    [
        ("Bollywood actor Shah Rukh Khan", "Shah Rukh Khan"),
        ("Scottish actor , Ewan McGregor", "Ewan McGregor"),
        ("Boston Celtics center Bill Russell", "Bill Russell"),
        # A band's description, two people and a name with no description are left whole.
        ("Canadian rock band Glass Tiger", "Canadian rock band Glass Tiger"),
        ("Mike Reid and Allen Shamblin", "Mike Reid and Allen Shamblin"),
        ("Sachin Tendulkar", "Sachin Tendulkar"),
    ],
)
def test_only_the_name_after_a_description_is_renamed(answer, name):
    from programs.person_names import named_part

    assert named_part("who is the brand ambassador", answer) == name


def test_a_described_person_keeps_the_description_in_the_passage():
    context = "The brand ambassador of Jio is Bollywood actor Shah Rukh Khan . He appeared in its first advert ."
    out = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question="who is the brand ambassador of reliance jio",
        context=context,
        answers=["Bollywood actor Shah Rukh Khan"],
    )
    assert out.rejection is None, out.proposals
    assert f"Bollywood actor {out.new_answer} ." in out.context and "Khan" not in out.context


def test_a_hyphenated_surname_written_apart_is_a_name():
    assert is_person_answer("who does abby's voice", "Leslie Carrara - Rudolph")


BEE_GEES = "Robin died in May 2012 , leaving Barry as the only surviving member . He still performs ."


def test_a_person_named_by_one_word_gets_a_made_up_word_of_the_same_part():
    firsts = list(made_up_parts(BEE_GEES, "who is still alive of the bee gees", "Barry", "k"))
    assert firsts and all(is_first_name(n) and name_gender(n) == "male" and n != "Barry" for n in firsts)
    golf = "Nicklaus has the most Masters wins , with six ."
    surnames = list(made_up_parts(golf, "who has the most green jackets", "Nicklaus", "k"))
    assert surnames and not any(is_first_name(n) for n in surnames)
    # A given name the lists lack ("named Roxy") and a one-word answer to no "who" question get nothing.
    assert list(made_up_parts("a daughter named Roxy", "who is their daughter", "Roxy", "k")) == []
    assert list(made_up_parts(golf, "what won the most masters", "Nicklaus", "k")) == []


def test_a_one_word_person_is_swapped_in_code():
    out = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question="who is still alive of the bee gees", context=BEE_GEES, answers=["Barry"]
    )
    assert out.rejection is None and out.proposals[-1]["answer_type"] == "made_up_name"
    assert "Barry" not in out.context and f"leaving {out.new_answer} as" in out.context


def test_a_person_described_twice_is_renamed_by_the_name_alone():
    from programs.person_names import named_part

    assert named_part("who does the voice", "actor and comedian Tim Allen") == "Tim Allen"
    assert named_part("who does the voice", "American singer and actress Lady Gaga") == "Lady Gaga"
    assert named_part("who wrote it", "Mike Reid and Allen Shamblin") == "Mike Reid and Allen Shamblin"
