"""The name distance of answer swapping with a fake embedder: near takes the person answering the most similar
question, far the least similar; the passage's gender is kept; the seed's own question and a name sharing a
word with the old one are never candidates; an answer that is no person, or whose gender nothing says, is a
counted `level_unreachable`."""

import zlib

import dspy
import numpy as np
import pytest

from programs.answer_swap import AnswerSwap
from programs.name_ladder import NameLadder
from programs.place_bank import place_of


def encode(texts):
    """Unit bag-of-words vectors: two questions are as similar as the words they share."""
    vectors = np.zeros((len(texts), 512), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.casefold().split():
            vectors[row, zlib.crc32(word.encode()) % 512] += 1.0
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


BANK = [
    ("who played the lead actor in the film Alpha", "Tom Hardy"),  # the seed's own question
    ("who scored in the football final", "Paul Pogba"),  # another domain: far
    ("who sang the song about the river", "Carole King"),  # a woman: never for a man's part
    ("who painted the portrait of the city", "Pablo Picasso"),
    ("who played the actor in the film Beta", "American actor John Holmes"),  # no bare name: never
    ("who played the lead actor in the film Gamma", "Bob Hoskins"),  # the same domain: near
    ("where does the river meet the city", "Lyon"),  # no person: never
]
SEED = "who starred as the lead actor in the film Alpha 2"
CONTEXT = "The film Alpha starred Jack Lowden . He played the lead ."


@pytest.fixture
def ladder():
    return NameLadder([q for q, _ in BANK], [a for _, a in BANK], encode)


def test_near_takes_the_most_similar_question_and_far_the_least(ladder):
    near = list(ladder(SEED, CONTEXT, "Jack Lowden", "near"))
    far = list(ladder(SEED, CONTEXT, "Jack Lowden", "far"))
    assert [n for n, _ in near] == ["Tom Hardy", "Bob Hoskins", "Pablo Picasso", "Paul Pogba"]
    assert far == near[::-1] and near[0][1] > far[0][1]  # similarity orders the levels


def test_the_seeds_own_question_and_a_name_sharing_a_word_are_passed_over(ladder):
    question = "who played the lead actor in the film Alpha"  # asked in the bank word for word
    near = [n for n, _ in ladder(question, CONTEXT, "Jack Hardy", "near")]
    assert "Tom Hardy" not in near and near[0] == "Bob Hoskins"


def test_an_answer_that_is_no_person_or_whose_gender_nothing_says_gets_no_candidate(ladder):
    assert list(ladder("where does the film Alpha take place", "Alpha is set in Paris .", "Paris", "near")) == []
    assert list(ladder("who made the film Alpha", "Alpha was made by Lowden Films .", "Lowden Films", "near")) == []
    # the passage says "she", the first name a man's: no gender to keep
    disagree = "The film Alpha starred Jack Lowden . She played the lead ."
    assert list(ladder(SEED, disagree, "Jack Lowden", "near")) == []


def test_a_woman_gets_a_womans_name(ladder):
    context = "The song was sung by Dana Winter . She wrote it too ."
    assert [n for n, _ in ladder("who sang the song about the lake", context, "Dana Winter", "far")] == ["Carole King"]


def test_a_person_swap_at_a_distance_uses_the_bank_and_an_empty_bank_is_counted(ladder):
    lm = dspy.utils.DummyLM([], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(distance="near", writer="rules", name_distance="far", name_candidates=ladder)(
            question=SEED, context=CONTEXT, answers=["Jack Lowden"]
        )
        assert out.rejection is None and out.new_answer == "Paul Pogba"
        assert "Jack Lowden" not in out.context and "Paul Pogba" in out.context
        assert out.proposals[-1]["answer_type"] == "name:far" and "similarity" in out.proposals[-1]
        empty = AnswerSwap(distance="near", writer="rules", name_distance="near", name_candidates=lambda *a: iter(()))
        out = empty(question=SEED, context=CONTEXT, answers=["Jack Lowden"])
        assert out.rejection == "level_unreachable" and out.context is None
        out = AnswerSwap(distance="near", writer="rules", name_distance="near", name_candidates=ladder)(
            question="where does the film Alpha take place", context="Alpha is set in Paris .", answers=["Paris"]
        )
        # A place is no person: the name ladder is not asked; a French city of the GeoNames bank is (answer_swap/31).
        assert out.rejection is None and out.proposals[-1]["answer_type"] == "place_bank"
        assert place_of(out.new_answer).code == "FR" and out.new_answer.replace(" ", "").isalpha()
    assert not lm.history  # no proposal call at a name distance


def test_a_name_distance_the_swap_would_ignore_is_refused():
    with pytest.raises(ValueError, match="name_distance"):
        AnswerSwap(distance="proposed", name_distance="near", name_candidates=lambda *a: iter(()))
    with pytest.raises(ValueError, match="name_distance"):
        AnswerSwap(distance="near", writer="rules", name_distance="near")  # no bank
    with pytest.raises(ValueError, match="name_distance"):
        AnswerSwap(distance="near", writer="rules", name_distance="nearby", name_candidates=lambda *a: iter(()))
