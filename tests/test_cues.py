"""Cues read off the shipped Wikipedia pool: phrases left in a swap that stand beside the old answer there."""

from experiments.cues import cues, phrases

ORIGINAL = "Ray Harroun won the first Indianapolis 500 in 1911 driving the Marmon Wasp , a car he helped design ."
QUESTION = "who won the first indianapolis 500"


def test_a_phrase_the_pool_ties_to_the_old_answer_is_a_cue():
    edited = ORIGINAL.replace("Ray Harroun", "Joe Dawson")
    assert cues(QUESTION, ORIGINAL, edited, ["Ray Harroun"], "Joe Dawson") == ["Marmon Wasp"]


def test_words_of_the_question_and_phrases_beside_the_new_answer_too_are_not_cues():
    edited = ORIGINAL.replace("Ray Harroun", "Joe Dawson")
    assert "Indianapolis" not in cues(QUESTION, ORIGINAL, edited, ["Ray Harroun"], "Joe Dawson")
    # The pool's passages on the Marmon Wasp name Harroun: with Harroun as the new answer nothing is tied away.
    swapped_back = ORIGINAL.replace("Ray Harroun", "Ray Harroun")
    assert cues(QUESTION, ORIGINAL, swapped_back, ["Joe Dawson"], "Ray Harroun") == []


def test_phrases_are_names_titles_and_full_dates():
    found = phrases("Born on October 6 , 1824 , he wrote `` The Long Road '' for the Boston Herald .")
    assert "October 6 , 1824" in found and "The Long Road" in found and "Boston Herald" in found
