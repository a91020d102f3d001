"""Surface forms of answers (metrics.surface_forms) and the span editor that replaces them all.

Regression fixtures are written by hand from the cases a reading found (cases found by reading accepted runs).
"""

import datetime
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.checks import is_placeholder, mentions_any_form, old_name_part_left, overlaps_answer
from metrics.surface_forms import answer_kind, date_parts, distinctive_word, find_forms
from programs.span_edit import replace_forms

# Code Black's season table as NQ's tokenised text writes it.
CODE_BLACK = (
    "Season Episodes Originally aired First aired Last aired 18 September 30 , 2015 ( 2015 - 09 - 30 ) "
    "February 24 , 2016 ( 2016 - 02 - 24 ) 13 April 25 , 2018 ( 2018 - 04 - 25 ) "
    "July 18 , 2018 ( 2018 - 07 - 18 )"
)


@pytest.mark.parametrize(
    "answer", ["July 18 , 2018", "July 18, 2018", "18 July 2018", "2018-07-18", "18th of July 2018", "Jul. 18, 2018"]
)
def test_a_full_date_is_found_in_every_full_date_form_of_the_same_day(answer):
    forms = [f.text for f in find_forms(CODE_BLACK, answer)]
    assert forms == ["July 18 , 2018", "2018 - 07 - 18"]


def test_other_days_and_partial_dates_are_not_the_answer():
    assert not find_forms(CODE_BLACK, "July 19, 2018")
    assert not find_forms("It aired in July 2018.", "July 18, 2018")  # does not say which day
    assert [f.text for f in find_forms("It aired on July 18 that year.", "July 18, 2018")] == ["July 18"]
    assert not find_forms("It aired on 18 July 2017.", "July 18, 2018")


def test_a_year_is_found_where_that_year_is_written_and_nowhere_else():
    assert [f.text for f in find_forms(CODE_BLACK, "2018")] == [
        "April 25 , 2018",
        "2018 - 04 - 25",
        "July 18 , 2018",
        "2018 - 07 - 18",
    ]
    assert not find_forms("It cost 2,018 dollars in 20180 ways, or 2017.", "2018")
    assert not find_forms(CODE_BLACK, "2014")


@pytest.mark.parametrize(
    "answer, text, found",
    [
        ("3", "He had three sons.", "three"),
        ("three", "He had 3 sons.", "3"),
        ("1,000", "about 1000 horses", "1000"),
        ("1,000", "one thousand horses", "one thousand"),
        ("2,500 horses", "two thousand five hundred horses", "two thousand five hundred horses"),
        ("one thousand", "1,000 horses", "1,000"),
        ("22 episodes", "ran for twenty-two episodes", "twenty-two episodes"),
        ("3.5 million", "sold 3,500,000 copies", "3,500,000"),
        ("third", "the 3rd season", "3rd"),
    ],
)
def test_numbers_in_digits_and_words(answer, text, found):
    assert [f.text for f in find_forms(text, answer)] == [found]


def test_cardinals_are_not_ordinals_and_digits_are_whole_tokens():
    assert not find_forms("the third season", "3")
    assert not find_forms("in 1990 and 19901", "199")


@pytest.mark.parametrize(
    "answer, head",
    [
        ("Abraham Lincoln", "Lincoln"),
        ("Gupta Empire", "Gupta"),
        ("Korean Republic Won", "Won"),
        ("Victor Emmanuel II", "Emmanuel"),
        ("University of Oxford", "Oxford"),
        ("Paris", None),
        ("the gravitational force", None),
        ("July 18, 2018", None),
    ],
)
def test_distinctive_word_of_a_multi_word_name(answer, head):
    assert distinctive_word(answer) == head


def test_kinds_and_date_parts():
    assert [answer_kind(a) for a in ["1861", "July 2018", "22 episodes", "Gupta Empire", "carbon dioxide"]] == [
        "date",
        "date",
        "number",
        "name",
        "other",
    ]
    assert date_parts("July 18 , 2018") == (True, True, True) and date_parts("1890") == (True, False, False)


# ------------------------------------------------------------------------------ replacement


def test_code_black_every_form_of_the_date_is_swapped():
    """ "July 18 , 2018" was swapped while "( 2018 - 07 - 18 )" survived."""
    result = replace_forms(CODE_BLACK, ["July 18 , 2018"], "March 2, 2015")
    assert result.text.endswith("March 2, 2015 ( 2015 - 03 - 02 )")
    assert not mentions_any_form(result.text, ["July 18 , 2018"]) and not result.unreplaced
    assert "April 25 , 2018 ( 2018 - 04 - 25 )" in result.text  # other dates untouched


def test_a_year_for_a_full_date_is_refused_where_the_date_is_written_in_full():
    result = replace_forms(CODE_BLACK, ["July 18 , 2018"], "2015")
    assert [f.text for f in result.unreplaced] == ["2018 - 07 - 18"]


def test_a_year_answer_changes_only_the_year_inside_dates():
    result = replace_forms("It opened on July 18 , 2018 ( 2018 - 07 - 18 ), in 2018.", ["2018"], "2015")
    assert result.text == "It opened on July 18 , 2015 ( 2015 - 07 - 18 ), in 2015."


def test_numbers_keep_their_spelling():
    result = replace_forms("He had three sons and 1,000 horses; one thousand in all.", ["1,000"], "2,500")
    assert result.text == "He had three sons and 2,500 horses; two thousand five hundred in all."


def test_gupta_empire_distinctive_word_is_swapped_too():
    text = (
        "The Gupta Empire produced large numbers of gold coins depicting the Gupta kings performing various rituals ."
    )
    result = replace_forms(text, ["Gupta Empire"], "Maurya Empire")
    assert "Gupta" not in result.text and "the Maurya kings" in result.text
    assert not old_name_part_left(result.text, ["Gupta Empire"], keep=["Maurya Empire"])
    # Had the editor missed it, the check names the surviving word.
    assert old_name_part_left(
        text.replace("The Gupta Empire", "The Maurya Empire"), ["Gupta Empire"], keep=["Maurya Empire"]
    ) == ["Gupta"]


def test_korean_republic_won_survives_only_as_the_verb():
    text = "The Korean Republic Won is the currency . The Won replaced the hwan . Korea won the match ."
    result = replace_forms(text, ["Korean Republic Won"], "Japanese Yen")
    assert result.text == "The Japanese Yen is the currency . The Yen replaced the hwan . Korea won the match ."
    assert old_name_part_left(
        "The Yen is used . The Won replaced the hwan .", ["Korean Republic Won"], keep=["Japanese Yen"]
    ) == ["Won"]


def test_any_name_part_left_standing_is_caught_and_no_article_doubles():
    # Reviewed invalid (bench, inconsistent): the modified document still said Alabama came back to win.
    text = (
        "The Alabama Crimson Tide defeated the Georgia Bulldogs 26 -- 23 in overtime . Alabama overcame a "
        "13 -- 0 deficit at halftime ."
    )
    result = replace_forms(text, ["The Alabama Crimson Tide"], "The Florida Gators")
    assert result.text.startswith("The Florida Gators defeated the Georgia Bulldogs")
    assert old_name_part_left(result.text, ["The Alabama Crimson Tide"], keep=["The Florida Gators"]) == ["Alabama"]
    assert (
        replace_forms(
            "Fans of the Alabama Crimson Tide cheered .", ["The Alabama Crimson Tide"], "The Florida Gators"
        ).text
        == "Fans of the Florida Gators cheered ."
    )


def test_a_currency_sign_is_not_doubled():
    # Reviewed (answer swap, 80 seeds): "gross national debt of $$20 trillion".
    text = "giving a combined total gross national debt of $19.8 trillion or about 106 % of GDP ."
    assert "debt of $20 trillion or" in replace_forms(text, ["$19.8 trillion"], "$20 trillion").text
    spaced = replace_forms("It cost $ 19.8 trillion .", ["$19.8 trillion"], "$20 trillion")
    assert spaced.text == "It cost $ 20 trillion ."


def test_surname_alone_is_replaced_unless_part_of_another_name():
    text = "Abraham Lincoln was president. Lincoln was shot. The Lincoln Memorial honours him."
    result = replace_forms(text, ["Abraham Lincoln"], "George Washington")
    assert result.text.startswith("George Washington was president. Washington was shot.")
    assert [f.text for f in result.unreplaced] == ["Lincoln"]  # the memorial: rejected, not rewritten


def test_existing_behaviour_is_kept():
    out = replace_forms("Paris is big. I love paris. Parisian food.", ["paris"], "lyon")
    assert out.text == "Lyon is big. I love lyon. Parisian food." and out.count == 2
    assert (
        replace_forms("Born 13 July 1890 and in 1890 again.", ["1890", "13 July 1890"], "1901").text
        == "Born 1901 and in 1901 again."
    )


# ------------------------------------------------------------------------------ proposals


@pytest.mark.parametrize(
    "proposal", ["John Doe", "jane doe", "XYZ", "Lorem ipsum", "N/A", "unknown", "Name", "Person A", "Company X"]
)
def test_placeholders(proposal):
    assert is_placeholder(proposal)


@pytest.mark.parametrize("proposal", ["John Adams", "Xavier", "Naming Rights", "Personal Jesus"])
def test_real_answers_are_not_placeholders(proposal):
    assert not is_placeholder(proposal)


@pytest.mark.parametrize(
    "proposal, gold, overlaps",
    [
        ("Paris", "Paris, France", True),
        ("Paris, France", "Paris", True),
        ("Gupta dynasty", "Gupta Empire", True),  # the distinctive word survives in the proposal
        ("Benjamin Lincoln", "Abraham Lincoln", True),
        ("Maurya Empire", "Gupta Empire", False),
        ("Île-de-France", "Paris", False),  # a region holding the city: no shared word, not catchable here
        ("July 19, 2018", "July 18, 2018", False),
    ],
)
def test_proposal_overlapping_the_old_answer(proposal, gold, overlaps):
    assert overlaps_answer(proposal, [gold]) is overlaps


# ------------------------------------------------------------------------------ properties

_WORDS = st.sampled_from(["the", "river", "was", "built", "in", "a", "town", "and", "it", "rained", "Paris", ","])
_DATES = st.dates(min_value=datetime.date(1800, 1, 1), max_value=datetime.date(2099, 12, 28))
_STYLES = [
    lambda d: f"{d:%B} {d.day} , {d.year}",
    lambda d: f"{d.day} {d:%B} {d.year}",
    lambda d: f"( {d.year} - {d.month:02d} - {d.day:02d} )",
    lambda d: f"{d:%B} {d.day}, {d.year}",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_WORDS, min_size=1, max_size=12), st.lists(st.integers(0, 3), min_size=1, max_size=3), _DATES, _DATES)
def test_date_replacement_invariants(words, styles, old, new):
    """The new date present, no form of the old left, nothing outside the replaced spans changed."""
    if (old.year, old.month, old.day) == (new.year, new.month, new.day):
        return
    pieces = [" ".join(words)]
    for s in styles:
        pieces += [_STYLES[s](old), " ".join(words)]
    text = " ; ".join(pieces)
    answer = f"{old:%B} {old.day}, {old.year}"
    proposal = f"{new:%B} {new.day}, {new.year}"
    result = replace_forms(text, [answer], proposal)
    assert not result.unreplaced
    assert not find_forms(result.text, answer)
    assert len(find_forms(result.text, proposal)) == len(styles)
    # Outside the replaced spans the text is byte for byte the original.
    outside_old = re.split("|".join(re.escape(r.old) for r in result.replacements), text)
    outside_new = re.split("|".join(re.escape(r.new) for r in result.replacements), result.text)
    assert outside_old == outside_new


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_WORDS, min_size=1, max_size=10),
    st.integers(2, 999_999),
    st.integers(2, 999_999),
    st.lists(st.sampled_from(["digits", "commas", "words"]), min_size=1, max_size=3),
)
def test_number_replacement_invariants(words, old, new, spellings):
    from num2words import num2words

    if old == new or any(1000 <= n <= 2100 for n in (old, new)):
        return  # four digits in that range are read as years, which are only written in digits
    spell = {"digits": str, "commas": lambda n: f"{n:,}", "words": lambda n: num2words(n).replace(",", "")}
    filler = " ".join(words)
    text = " ; ".join([filler, *(f"{spell[s](old)} boats ; {filler}" for s in spellings)])
    result = replace_forms(text, [str(old)], str(new))
    assert not find_forms(result.text, str(old))
    assert len(find_forms(result.text, str(new))) == len(spellings)
    assert result.text.count(";") == text.count(";") and result.text.count("boats") == text.count("boats")


# -- invalid answer-swap cases found in the blind review of nq-answer-swap ------------------------


def test_review_a_proposal_naming_the_same_team_is_no_swap():
    from metrics.checks import overlaps_answer

    assert overlaps_answer("The University of Alabama", ["The Alabama Crimson Tide"])
    assert not overlaps_answer("The Georgia Bulldogs", ["The Alabama Crimson Tide"])


def test_review_a_proposal_whose_name_word_is_in_the_question_is_refused():
    from programs.answer_swap import proposal_problem

    question = "where did the king of france live before versailles"
    assert proposal_problem("Château de Versailles", ["Tuileries Palace"], question=question) == "proposal_in_question"
    assert proposal_problem("Palais du Louvre", ["Tuileries Palace"], question=question) is None


def test_a_swapped_name_keeps_no_gloss_of_the_old_one():
    """Reviewed invalid (answer swap, 80 seeds): the pronunciation and the Persian script of the old
    name stayed beside the new one. A birth name or dates in the same place are no gloss of the old name."""
    from metrics.checks import stale_glosses

    def glosses(text: str, old: str, new: str) -> list[str]:
        edit = replace_forms(text, [old], new)
        return stale_glosses(text, [(r.start, r.end, r.new) for r in edit.replacements], [old])

    locke = "John Locke FRS ( / lɒk / ; 29 August 1632 -- 28 October 1704 ) was an English philosopher ."
    assert glosses(locke, "John Locke", "Thomas Jefferson") == ["/ lɒk /"]
    khayyam = "Omar Khayyam ( Persian pronunciation : ( xæjˈjɑːm ) ; عمر خیّام ( Persian ) ; 18 May 1048 ) was a poet ."
    assert glosses(khayyam, "Omar Khayyam", "Abraham Lincoln")
    coltrane = "Robbie Coltrane , OBE ( born Anthony Robert McMillan ; 30 March 1950 ) is a Scottish actor ."
    assert glosses(coltrane, "Robbie Coltrane , OBE", "Tom Cruise") == []
    assert glosses("It opened in 1890 ( / x / ) .", "1890", "1891") == []  # a date has no name gloss
    # A span that stops before the period of "Jr." still has the gloss after it.
    junior = "Theodore Roosevelt Jr. ( / ˈroʊzəvɛlt / ROH - zə - velt ; born 1858 ) was a statesman ."
    assert glosses(junior, "Theodore Roosevelt Jr.", "Tony Morton") == ["/ ˈroʊzəvɛlt / ROH - zə - velt"]


def test_an_ism_answer_is_still_told_by_its_family():
    """Reviewed invalid (unanswerable, 75 seeds): "social Darwinists" was left after "social Darwinism" went."""
    text = "The majority of those who have been categorized as social Darwinists did not use the label ."
    assert old_name_part_left(text, ["social Darwinism"]) == ["Darwinists"]
    assert old_name_part_left("Charles Darwin sailed on the Beagle .", ["social Darwinism"]) == []


@pytest.mark.parametrize(
    "text, answer, found",
    [
        ("the Carthaginian general Hannibal 's conquest", "Hannibal", "Hannibal"),  # NQ's tokenised possessive
        ("Hannibal's conquest", "Hannibal", "Hannibal"),
        ("drawn on the bank 's own funds", "a bank", "bank"),
        ("They ate at McDonald's today", "McDonald's", "McDonald's"),  # an answer that is a possessive keeps it
        ("They ate at McDonald 's today", "McDonald's", "McDonald 's"),
    ],
)
def test_an_answer_standing_as_a_possessive_is_found(text, answer, found):
    assert [f.text for f in find_forms(text, answer)] == [found]
    assert mentions_any_form(text, [answer])


def test_a_possessive_is_rewritten_and_keeps_its_clitic():
    edited = replace_forms(
        "The war began with Hannibal 's conquest . Hannibal surprised Rome .", ["Hannibal"], "Marcus Aurelius"
    )
    assert edited.text == "The war began with Marcus Aurelius 's conquest . Marcus Aurelius surprised Rome ."
    assert (
        replace_forms("They ate at McDonald's today", ["McDonald's"], "Burger King").text
        == "They ate at Burger King today"
    )
