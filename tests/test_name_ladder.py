"""The name distance of answer swapping with a fake embedder: near takes the answer of the most similar
question of the same kind, far the least similar; a person keeps the passage's gender; the seed's own
question, a name sharing a word with the old one and a noisy bank answer are never candidates; a seed
whose kind cannot be told, or with no candidate left, is a counted `level_unreachable`."""

import zlib

import dspy
import numpy as np
import pytest

from programs.answer_swap import AnswerSwap
from programs.name_ladder import NameLadder, is_clean_name, question_head


def encode(texts):
    """Unit bag-of-words vectors: two questions are as similar as the words they share."""
    vectors = np.zeros((len(texts), 512), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.casefold().split():
            vectors[row, zlib.crc32(word.encode()) % 512] += 1.0
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


BANK = [
    ("who played the lead actor in the film Alpha", "Tom Hardy"),  # film actor: near for a film actor seed
    ("who scored in the football final", "Paul Pogba"),  # football: far
    ("who sang the song about the river", "Carole King"),  # a woman: never for a man's part
    ("who painted the painter portrait of the city", "Claude Monet"),
    ("who played the actor in the film Beta", "American actor John Holmes"),  # noisy: never a candidate
    ("who played the lead actor in the film Gamma", "Bob Hoskins"),  # shares no word, a near candidate too
    ("where does the river meet the city", "Lyon"),  # another kind
]
SEED = "who played the lead actor in the film Alpha"  # the bank holds the seed's own question too
CONTEXT = "The film Alpha starred Jack Lowden . He played the lead ."


@pytest.fixture
def ladder():
    return NameLadder([q for q, _ in BANK], [a for _, a in BANK], encode)


def test_question_heads_tell_the_kind_of_answer():
    assert question_head("Who played Pete") == "who"
    assert question_head("where is the tower") == "where"
    assert question_head("what team won the cup") == "what team"
    assert question_head("which is the country with") == "what country"
    assert question_head("In what country is Normandy located?") == "what country"
    assert question_head("Antigone was a play made by whom?") == "who"
    assert question_head("name of the dog in the wizard of oz") == ""


def test_bank_answers_must_read_as_a_bare_name():
    assert is_clean_name("Rio de Janeiro , Brazil") and is_clean_name("Queen")
    assert not is_clean_name("American porn actor John Holmes")
    assert not is_clean_name(". Justin Timberlake") and not is_clean_name("the hero Jason")


def test_near_takes_the_most_similar_question_and_far_the_least(ladder):
    near = list(ladder("who starred as the lead actor in the film Alpha 2", CONTEXT, "Jack Lowden", "near"))
    far = list(ladder("who starred as the lead actor in the film Alpha 2", CONTEXT, "Jack Lowden", "far"))
    assert [n for n, _ in near][:2] == ["Tom Hardy", "Bob Hoskins"]
    assert far[0][0] in {"Paul Pogba", "Claude Monet"}
    assert near[0][1] > far[0][1]  # the similarity is what orders the levels
    names = {n for n, _ in near} | {n for n, _ in far}
    assert "Carole King" not in names  # a woman's name for a man's part
    assert "Lyon" not in names and "American actor John Holmes" not in names


def test_two_names_never_stand_in_for_one():
    ladder = NameLadder(["where is the city Alpha", "where is the city Beta"], ["Spain and Portugal", "France"], encode)
    assert [n for n, _ in ladder("where is the city Gamma", "Gamma is in Japan .", "Japan", "near")] == ["France"]
    both = [n for n, _ in ladder("where is the city Gamma", "Gamma is in Chile and Peru .", "Chile and Peru", "near")]
    assert sorted(both) == ["France", "Spain and Portugal"]


def test_the_seeds_own_question_and_a_name_sharing_a_word_are_passed_over(ladder):
    near = [n for n, _ in ladder(SEED, CONTEXT, "Jack Hardy", "near")]
    assert "Tom Hardy" not in near  # same question (similarity 1) and a shared word
    assert near[0] == "Bob Hoskins"


def test_a_seed_whose_kind_or_gender_the_ladder_cannot_tell_gets_no_candidate(ladder):
    assert list(ladder("name of the actor in the film Alpha", CONTEXT, "Jack Lowden", "near")) == []
    # the passage says "she", the first name a man's: no gender to keep
    disagree = "The film Alpha starred Jack Lowden . She played the lead ."
    assert list(ladder("who starred in the film Alpha 2", disagree, "Jack Lowden", "near")) == []
    # neither says: mostly a team or an office, which no person's name stands in for
    assert list(ladder("who starred in the film Alpha 2", "Alpha starred Alex Morgan .", "Alex Morgan", "near")) == []


def test_a_name_swap_at_a_distance_uses_the_bank_and_an_empty_bank_is_counted(ladder):
    lm = dspy.utils.DummyLM([], adapter=dspy.JSONAdapter())
    question = "who starred as the lead actor in the film Alpha 2"
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap(distance="near", name_distance="far", name_candidates=ladder)(
            question=question, context=CONTEXT, answers=["Jack Lowden"]
        )
        assert out.rejection is None and out.new_answer in {"Paul Pogba", "Claude Monet"}
        assert "Jack Lowden" not in out.context and out.new_answer in out.context
        assert out.proposals[-1]["answer_type"] == "name:far" and "similarity" in out.proposals[-1]
        empty = AnswerSwap(distance="near", name_distance="near", name_candidates=lambda *a: iter(()))
        out = empty(question=question, context=CONTEXT, answers=["Jack Lowden"])
        assert out.rejection == "level_unreachable" and out.context is None
    assert not lm.history  # no proposal call at a name distance


def test_a_name_distance_the_swap_would_ignore_is_refused():
    with pytest.raises(ValueError, match="name_distance"):
        AnswerSwap(distance="proposed", name_distance="near", name_candidates=lambda *a: iter(()))
    with pytest.raises(ValueError, match="name_distance"):
        AnswerSwap(distance="near", name_distance="near")  # no bank
    with pytest.raises(ValueError, match="name_distance"):
        AnswerSwap(name_distance="nearby", name_candidates=lambda *a: iter(()))
