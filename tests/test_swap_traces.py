"""answer_swap/10's rules: each catches an invalid kind read blind on held-out NQ swaps, and no
archived swap read valid fails one of them. The archived cases are the knowledge-conflict answer swaps
(docs/reviews/knowledge-conflict-quick-0bbe1ce6ed/...); the cases of the run they superseded are rebuilt
from the shipped NQ rows."""

import json
from pathlib import Path

import dspy
import pytest

from metrics.arithmetic import elapsed_years, remainder, share
from metrics.proposal_checks import either_or, is_alternative, other_alternative, translates
from metrics.word_traces import (
    aliases_after,
    anaphors,
    derivations,
    derived_words,
    inflected_forms,
    inflections,
    inside_names,
    letter_counts,
    name_talk,
)
from programs.answer_swap import AnswerSwap, proposal_problem, swap_checks
from programs.span_edit import replace_forms
from scripts.measure_swap_traces import NEW
from tests.shipped import nq_row

REVIEWS = Path(__file__).resolve().parents[1] / "docs" / "reviews"
CONFLICT = REVIEWS / "knowledge-conflict-quick-0bbe1ce6ed" / "conflict.generate.answer_swap.qwen2.5-1.5b"
NEW_RULES = set(NEW)  # the statuses answer_swap/10 added; the measuring script holds the list


def _failures(question: str, context: str, golds: list[str], new: str) -> set[str]:
    """Every check the swap fails (proposal and text), not only the first."""
    failed = set()
    problem = proposal_problem(new, golds, context=context, question=question)
    if problem:
        failed.add(problem)
    edit = replace_forms(context, golds, new)
    checks = swap_checks(context, edit.text, golds, new, 0.9, edit)
    return failed | {name for name, ok in checks.items() if ok is False}


def _read(folder: Path) -> list[tuple[dict, str]]:
    verdicts = {}
    for path in (folder / "review").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            verdicts[record["id"]] = record["verdict"]
    cases = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    return [(c, verdicts[c["id"]]) for c in cases if c["id"] in verdicts and c.get("context")]


ARCHIVED = {c["id"]: (c, v) for c, v in _read(CONFLICT)}
VALID = [
    (c, v)
    for folder in sorted({p.parent for p in REVIEWS.rglob("cases.jsonl")})
    for c, v in _read(folder)
    if v == "valid" and c["task"] == "answer_swap"
]


def _archived_failures(case_id: str) -> set[str]:
    case, _ = ARCHIVED[case_id]
    return _failures(case["question"], case["original_context"], case["original_answers"], case["answers"][0])


@pytest.mark.parametrize(
    "case_id, rule",
    [
        ("1895536179495999916:swap", "old_answer_trace:name_talk"),  # chown: "an abbreviation of change mode"
        ("8978883572638091008:swap", "old_answer_trace:name_talk"),  # Jerry: "a homophone of toe toe"
        ("-8523079077020933100:swap", "old_answer_trace:name_talk"),  # halophiles: Greek "water - loving"
        ("-8523079077020933100:swap", "old_answer_trace:inside_name"),  # "the Great Water Lake in Utah"
        ("3641102951702752329:swap", "old_answer_trace:inflection"),  # "conjunctions" beside "an adverb"
        ("3641102951702752329:swap", "old_answer_trace:code"),  # "( abbreviated CONJ or CNJ )"
        ("612101885390099706:swap", "old_answer_trace:anaphor"),  # "This plexus" after "The brainstem"
        ("-5664830969072794709:swap", "old_answer_trace:elapsed_years"),  # 54 years from 1956 to "2011"
        ("-4425830144367300225:swap", "old_answer_trace:share"),  # 179,948,346 of 308,745,358 is 58.28 %
        ("3585535881204356180:swap", "proposal_translates_answer"),  # Parlement de Bretagne, translated
    ],
)
def test_an_archived_invalid_swap_fails_its_rule(case_id, rule):
    assert ARCHIVED[case_id][1] == "invalid"
    assert rule in _archived_failures(case_id)


@pytest.mark.parametrize("case, verdict", VALID, ids=[c["id"] for c, _ in VALID])
def test_no_new_rule_removes_an_archived_valid_swap(case, verdict):
    failed = _failures(case["question"], case["original_context"], case["original_answers"], case["answers"][0])
    assert not failed & NEW_RULES


def test_superseded_runs_arithmetic_and_letter_count():
    """Read invalid in the run these archived cases superseded: "31 teams : 24 in the United States and 8
    in Canada" (31 − 24 gives the old 7) and ".js" with "the four - letter suffix"."""
    nhl = nq_row("how many teams are in the nhl in canada")
    assert "old_answer_trace:remainder" in _failures(nhl["question"], nhl["context"], ["7"], "8")
    java = nq_row("what is the filename extension used for all java source files")
    assert "old_answer_trace:letter_count" in _failures(java["question"], java["context"], [". java"], ".js")
    assert "old_answer_trace:letter_count" not in _failures(java["question"], java["context"], [". java"], ".rust")


def test_an_either_or_question_takes_its_other_alternative():
    """Read invalid: "german or english" → "Spain"; the generator now proposes "English" and no LM call."""
    row = nq_row("aguirre the wrath of god german or english")
    assert (
        proposal_problem("Spain", ["German"], context=row["context"], question=row["question"])
        == "proposal_outside_alternatives"
    )
    assert other_alternative(row["question"], ["German"]) == "English"
    lm = dspy.utils.DummyLM([{"answer_type": "country", "wrong_answer": "Spain"}], adapter=dspy.JSONAdapter())
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        out = AnswerSwap()(question=row["question"], context=row["context"], answers=["German"])
    assert out.new_answer == "English" and out.proposals[0]["answer_type"] == "alternative"
    assert "( English : Aguirre , der Zorn Gottes )" in out.context and not lm.history


def test_either_or_sides():
    question = "which came first battlestar galactica or star trek"
    assert other_alternative(question, ["Star Trek"]) == "Battlestar Galactica"
    assert is_alternative("battlestar galactica", question, ["Star Trek"])
    assert not is_alternative("Doctor Who", question, ["Star Trek"])
    assert other_alternative("who wrote a song for you leon russell or donny hathaway", ["Leon Russell"]) == (
        "Donny Hathaway"
    )
    # "or" that does not stand next to the gold is no either-or.
    assert either_or("who sang or wrote the song hallelujah", ["Leonard Cohen"]) is None
    assert proposal_problem("Bob Dylan", ["Leonard Cohen"], question="who sang or wrote the song hallelujah") is None


@pytest.mark.parametrize(
    "proposal, gold, translated",
    [
        ("The Parliament of Brittany", "The Parlement de Bretagne", True),
        ("Australia", "Austria", False),  # one word: as alike as Roma and Rome, and a real swap
        ("an unnamed senior deputy sheriff", "an unnamed junior deputy sheriff", False),
        ("North Dakota", "North Carolina", False),
        ("Saint Lucia", "Saint Louis", False),
    ],
)
def test_translation_is_word_by_word_cognates(proposal, gold, translated):
    assert bool(translates(proposal, [gold])) is translated


def test_inflections_of_a_one_word_answer_only():
    assert {"conjunctions", "studies", "studied", "drifted", "hiking"} <= {
        *inflections("conjunction"),
        *inflections("study"),
        *inflections("drift"),
        *inflections("hike"),
    }
    text = "Mixed economies vary . The conjunctions join words ."
    assert inflected_forms(text, ["a conjunction"], keep=["an adverb"]) == ["conjunctions"]
    assert inflected_forms(text, ["A mixed economy"], keep=["A communist society"]) == []  # generic head
    assert inflected_forms("In 2012 elections were held .", ["the 2010 election"]) == []
    assert inflected_forms("Rivers flow .", ["river"], keep=["rivers of Spain"]) == []  # the new answer's word


def test_anaphor_needs_a_demonstrative_and_a_head_the_new_answer_lacks():
    text = "The brainstem is a network . This plexus extends to the arm ."
    assert anaphors(text, ["brachial plexus"], keep=["brainstem"]) == ["This plexus"]
    assert anaphors(text, ["brachial plexus"], keep=["cervical plexus"]) == []
    assert anaphors("The plexus extends .", ["brachial plexus"], keep=["brainstem"]) == []


def test_name_talk_is_about_the_passages_topic():
    original = "Toto is a dog in the Oz books . The name is pronounced with a long O ."
    assert name_talk(original, [0]) == ["The name is pronounced with a long O ."]
    # The answer is not the topic, and the statement names its own referent.
    other = "Dubai lies on the Persian Gulf . The name Dubai comes from a local word ."
    assert name_talk(other, [other.index("Persian")]) == []
    # Who coined a term is its history, not its form (read valid: Anthropocene → Neolithic).
    coined = "The term Anthropocene is informal . The term was coined by Paul Crutzen in 2000 ."
    assert name_talk(coined, [coined.index("Anthropocene")]) == []


def test_letter_count_and_inside_name():
    original = "It needs the four - letter suffix . java for source files ."
    start = original.index("java")
    assert letter_counts(original, [(start, start + 4, "js")]) == ["four - letter"]
    assert letter_counts(original, [(start, start + 4, "kt2c")]) == []  # the count fits the new one too
    lake = "They thrive in salt . They live in the Great Salt Lake ."
    spans = [
        (lake.index("salt"), lake.index("salt") + 4, "water"),
        (lake.index("Salt"), lake.index("Salt") + 4, "Water"),
    ]
    assert len(inside_names(lake, spans, ["salt"])) == 1
    starts = "Salt is needed . They live here ."
    assert inside_names(starts, [(0, 4, "Water")], ["salt"]) == []  # a sentence's first word
    # A gold the data lower-cases but the passage only capitalises is a name, not a common noun.
    assert inside_names("It runs on the Java platform .", [(15, 19, "Kotlin")], ["java"]) == []


def test_arithmetic_that_still_gives_the_old_answer():
    assert remainder("It has 31 teams : 24 in the US and 8 in Canada .", "7", "8") == "31 − 24 = 7"
    assert remainder("It has 31 teams : 23 in the US and 8 in Canada .", "7", "8") is None
    assert remainder("It has 31 teams . 24 are in the US and 8 in Canada .", "7", "8") is None  # other sentence
    aired = "It aired for 54 years from April 2 , 1956 , to September 17 , 2011 ."
    assert elapsed_years(aired, "2010", "2011") == "1956 + 54 years = 2010"
    assert elapsed_years(aired.replace("54", "55"), "2010", "2011") is None
    # Read invalid on held-out rows: the span in words, counted from the sentence before.
    fathers = (
        "In 1966 , President Lyndon B. Johnson issued the first presidential proclamation honoring fathers . "
        "Six years later , the day was made a permanent national holiday when President Richard Nixon signed "
        "it into law in 1971 ."
    )
    assert elapsed_years(fathers, "1972", "1971") == "1966 + 6 years = 1972"
    assert elapsed_years(fathers.replace("Six years later", "Years later"), "1972", "1971") is None
    assert elapsed_years("In 1966 , it began . It passed in 1971 after six years of work .", "1972", "1971") is None
    population = "They had 179,948,346 or 62.5 % of the total population of 308,745,358 ."
    assert share(population, "58.28 %", "62.5")
    assert share(population, "58.29 %", "62.5") is None  # matched to the answer's precision
    assert share("Of 3 towns , 2 voted , 62 % .", "67 %", "62 %") is None  # small counts reach a whole % by chance


def test_the_archive_holds_the_cases_these_tests_read():
    assert len(ARCHIVED) == 40 and len(VALID) >= 50


def test_a_proposal_in_a_script_no_gold_uses_translates_it():
    assert translates("武士", ["the samurai"]) == "the samurai"  # read invalid on the knowledge-conflict run
    assert translates("Tokyo", ["the samurai"]) is None
    assert translates("Zürich", ["Tokyo"]) is None  # accents are the same script
    assert translates("Москва", ["Москва"]) is None


def test_the_greek_plural_of_a_one_word_old_answer_is_an_inflection():
    assert "ellipses" in inflections("ellipsis")
    text = "A comma is three dots . Style guides have rules on the use of ellipses ."
    assert inflected_forms(text, ["an ellipsis"], keep=["a comma"]) == ["ellipses"]


def test_a_word_derived_from_a_proper_noun_old_answer_is_a_trace():
    assert {"christian", "christians"} <= derivations("Christianity")
    assert {"pantheist", "korean", "japanese", "bulgarian"} <= derivations("Pantheism") | derivations(
        "Korea"
    ) | derivations("Japan") | derivations("Bulgaria")
    assert "chin" not in derivations("China") and "chinese" in derivations("China")
    text = "Islam is the largest religion . In 2016 legally registered Christians comprised 69.9 % ."
    assert derived_words(text, ["Christianity"], keep=["Islam"]) == ["Christians"]
    assert derived_words("Historians disagree .", ["history"], keep=["geography"]) == []  # a common noun
    assert derived_words("Korean is spoken .", ["South Korea"], keep=["Japan"]) == []  # a longer answer
    assert derived_words("Korean is spoken .", ["Korea"], keep=["the Korean Empire"]) == []  # the new answer's word


KNOWLEDGE_CONFLICT = REVIEWS / "knowledge-conflict-9eb7a0a1c6" / "conflict.generate.answer_swap.qwen2.5-1.5b"


def test_the_derived_word_rule_on_the_archived_swaps():
    """What the rule removes among archived accepted swaps: the full knowledge-conflict run's "Pantheist
    belief", "Christians", "Bulgarian : София" (accepted under answer_swap/14); among every swap read
    valid, only "Christianity" → "Evangelical", where "Christians" fits the new answer too (its cost)."""
    accepted = [json.loads(line) for line in (KNOWLEDGE_CONFLICT / "cases.jsonl").read_text().splitlines()]
    accepted = [c for c in accepted if c["status"] == "accepted"]
    removed = {
        c["original_answers"][0]
        for c in accepted
        if "old_answer_trace:derived_word"
        in _failures(c["question"], c["original_context"], c["original_answers"], c["answers"][0])
    }
    assert {"Pantheism", "Christianity", "Bulgaria", "Serbia", "Australia"} == removed
    valid_removed = [
        (c["original_answers"][0], c["answers"][0])
        for c, _ in VALID
        if "old_answer_trace:derived_word"
        in _failures(c["question"], c["original_context"], c["original_answers"], c["answers"][0])
    ]
    assert valid_removed == [("Christianity", "Evangelical")]


def test_the_season_the_swapped_year_opens_ends_a_year_later_too():
    from programs.timeline import shift_timeline

    context = "He joined in the ( 2002 -- 03 ) season ."
    start = context.index("2002")
    moved, moves = shift_timeline(context, "when did he join", 2002, 2003, [(start, start + 4)])
    assert moved == "He joined in the ( 2002 -- 04 ) season ." and [m["new"] for m in moves] == ["04"]


def test_a_figure_with_a_unit_is_no_year_the_timeline_moves():
    from programs.timeline import shift_timeline

    context = "It opened on January 8 , 1863 . The gauge is 5 ft ( 1524 mm ) , and it closed in 1864 in winter ."
    start = context.index("1863")
    moved, _ = shift_timeline(context, "when did it open", 1863, 1862, [(start, start + 4)])
    assert "( 1524 mm )" in moved and "closed in 1863 in winter" in moved


def test_a_letter_count_in_another_sentence_still_spells_the_old_name():
    original = "Saltalamacchia holds the record . At 14 characters , his last name is the longest ."
    assert letter_counts(original, [(0, 14, "Barese")]) == ["14 characters"]


def test_an_alias_glossed_after_the_swapped_span_names_the_old_answer():
    original = "The adenoid , also known as a pharyngeal tonsil , is the top of the tonsils ."
    start = original.index("adenoid")
    assert aliases_after(original, [(start, start + 7, "spleen")]) == ["also known as a pharyngeal tonsil"]
    assert aliases_after("The adenoid is the top of the tonsils .", [(4, 11, "spleen")]) == []


@pytest.mark.parametrize(
    "proposal, problem",
    [
        ("Ratnathee", "proposal_overlaps_answer"),  # a distinctive word of the gold inside one of its words
        ("belief of", "proposal_truncated"),  # cut off before its noun
        ("Padma Shri", None),
    ],
)
def test_a_proposal_spelling_the_gold_inside_a_word_or_cut_short_is_refused(proposal, problem):
    assert proposal_problem(proposal, ["The Bharat Ratna"]) == problem


def test_a_list_after_a_swapped_count_still_holds_the_old_number_of_items():
    from metrics.word_traces import listed_counts

    original = "It has four unlockable characters ( Luigi , Captain Falcon , Ness , and Jigglypuff ) to find ."
    start = original.index("four")
    assert listed_counts(original, [(start, start + 4, "three")]) == [
        "four unlockable characters ( Luigi , Captain Falcon , Ness , and Jigglypuff )"
    ]
    assert listed_counts(original, [(start, start + 4, "four")]) == []  # the count did not move
    colours = "The flag has three colours : red , green and blue ."
    start = colours.index("three")
    assert listed_counts(colours, [(start, start + 5, "four")]) == ["three colours : red , green and blue ."]
    # A parenthesis that is no list ("( 2001 )") and a list of another length say nothing.
    other = "The band has four members ( 2001 ) and toured ( Oslo , Bergen ) twice ."
    start = other.index("four")
    assert listed_counts(other, [(start, start + 4, "five")]) == []
    edit = replace_forms(original, ["four"], "three")
    checks = swap_checks(original, edit.text, ["four"], "three", 0.9, edit)
    assert checks["old_answer_trace:list_count"] is False
