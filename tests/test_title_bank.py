"""Works, bands, teams and rivers named in code from the subjects a passage pool's openings type."""

from __future__ import annotations

import dspy

from programs.answer_swap import AnswerSwap
from programs.title_bank import TitleBank, is_title, opening_type

POOL = [
    "Help ! is the fifth studio album by English rock band the Beatles .",
    "Abbey Road is the eleventh studio album by English rock band the Beatles , released in 1969 .",
    "Thriller is the sixth studio album by American singer Michael Jackson .",
    "Lady Bird is a 2017 American coming-of-age comedy-drama film written and directed by Greta Gerwig .",
    "Pearl Jam is an American rock band formed in Seattle , Washington , in 1990 .",
    "Imagine Dragons is an American pop rock band from Las Vegas , Nevada .",
    "The Rhine is a European river that begins in the Swiss canton of Graubünden .",
    "The immediate family is a defined group of relations , used in rules or laws .",
    "In humans , a single transverse palmar crease is a single crease that extends across the palm .",
]
BANK = TitleBank(POOL)


def test_an_opening_types_its_subject_and_a_description_is_no_title():
    album = opening_type(POOL[0])
    assert (album.name, album.noun) == ("Help !", "album") and {"fifth", "studio"} <= album.mods
    assert opening_type(POOL[3]).noun == "film"  # "film written": the noun ends the type
    assert opening_type(POOL[7]) is None and opening_type(POOL[8]) is None
    assert is_title("The Dark Knight") and not is_title("in northwest Washington") and not is_title("the last episode")


def test_the_old_answer_is_typed_by_its_own_passage_the_seed_passage_or_the_question():
    assert BANK.type_of("what album", "", "Abbey Road").noun == "album"
    seed = "Glass Tiger is a Canadian rock band from Newmarket , Ontario ."
    assert BANK.type_of("who sings don't forget me", seed, "Glass Tiger").noun == "band"
    assert BANK.type_of("which river flows through basel", "It flows past Basel .", "The Aare").noun == "river"
    assert BANK.type_of("who wrote it", "It was written in 1990 .", "Glass Tiger") is None


def test_mates_sharing_the_describing_words_come_first():
    mates = list(BANK("what album", "", "Abbey Road", "key"))
    assert mates[0] == "Help !" and "Abbey Road" not in mates and set(mates) == {"Help !", "Thriller"}


def test_code_swaps_a_band_the_pivot_is_never_asked_for():
    context = "`` Don't Forget Me ( When I'm Gone ) '' is a song by Canadian rock band Glass Tiger , released in 1986 ."
    lm = dspy.utils.DummyLM([{"wrong_answer": "PIVOT"}] * 4)
    with dspy.context(lm=lm):
        out = AnswerSwap(max_attempts=1, distance="near", title_candidates=BANK)(
            question="who sings don't forget me when i'm gone", context=context, answers=["Glass Tiger"]
        )
    assert out.rejection is None, out.proposals
    assert out.proposals[-1]["answer_type"] == "title_bank"
    assert out.new_answer in ("Pearl Jam", "Imagine Dragons") and "Glass Tiger" not in out.context
