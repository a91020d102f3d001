"""The code edit of an answer swap: the indefinite article before a replaced span agrees with the new answer."""

import pytest

from programs.span_edit import replace_forms


@pytest.mark.parametrize(
    "text, olds, new, expected",
    [
        # read invalid on held-out swaps: the article kept from the old answer's first sound
        (
            "An astronaut or cosmonaut is a person.",
            ["An astronaut or cosmonaut"],
            "scientist",
            "A scientist is a person.",
        ),
        ("He was an folk singer .", ["folk singer"], "protest singer", "He was a protest singer ."),
        ("It took a day .", ["day"], "hour", "It took an hour ."),
        ("She met a writer .", ["writer"], "university lecturer", "She met a university lecturer ."),
        ("She met a writer .", ["writer"], "engineer", "She met an engineer ."),
        ("He was a CIA officer .", ["CIA officer"], "FBI agent", "He was a FBI agent ."),  # letter names: left alone
        ("The band played .", ["band"], "orchestra", "The orchestra played ."),
    ],
)
def test_an_indefinite_article_agrees_with_the_new_answer(text, olds, new, expected):
    assert replace_forms(text, olds, new).text == expected


def test_a_new_answers_article_is_capitalised_only_where_a_sentence_starts():
    text = "She was head of Starfleet Medical in 2365 . Starfleet Medical is in San Francisco ."
    assert replace_forms(text, ["Starfleet Medical"], "the hospital").text == (
        "She was head of the hospital in 2365 . The hospital is in San Francisco ."
    )
    # a lower-case proposal without an article still takes the old name's capital
    assert replace_forms("He joined Starfleet in 2360 .", ["Starfleet"], "navy").text == "He joined Navy in 2360 ."


@pytest.mark.parametrize(
    "text, old, new, expected",
    [
        # read invalid in the bench at 110 rows: checks and judge passed "mid-mid-2062"
        ("and will next appear in mid-2061 .", "mid-2061", "mid-2062", "and will next appear in mid-2062 ."),
        ("A 22-year-old man .", "22-year-old", "30-year-old", "A 30-year-old man ."),
        ("It cost US$5 million .", "US$5 million", "US$6 million", "It cost US$6 million ."),
        ("the A-10 jet", "A-10", "F-16", "the F-16 jet"),
        # a new answer without attached text goes inside the text's
        ("A 22-year-old man .", "22-year-old", "30", "A 30-year-old man ."),
        # quotes and spaced words are not attached: the passage keeps its quotes
        ("In `` Classy Christmas '' , Holly", "`` Classy Christmas ''", "Suits", "In `` Suits '' , Holly"),
    ],
)
def test_text_attached_to_an_answers_number_is_replaced_with_it(text, old, new, expected):
    assert replace_forms(text, [old], new).text == expected
