"""Properties of span replacement and the string checks on arbitrary text: every check returns its type on
any Unicode (lone surrogates, huge numbers, other scripts' digits included) and never raises; a replacement
changes nothing outside the spans it reports, leaves the new answer in the text and, when it reports no
form it could not rewrite, none of the old one. Cases the properties found are kept as explicit examples."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from metrics import checks
from metrics import surface_forms as sf
from metrics.normalize import answer_tokens
from programs.span_edit import replace_forms, replace_spans

SLOW_OK = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

any_text = st.text(st.characters(exclude_categories=()), max_size=40)
# Pieces the parsers react to: dates in NQ's spacing, numbers as digits and words, ordinals, names, other
# scripts' digits, and digit runs long enough to break int() and Decimal's default precision.
pieces = (
    st.sampled_from(
        [
            "July 18 , 2018",
            "18 July 2018",
            "( 2018 - 07 - 18 )",
            "July 2018",
            "March",
            "may",
            "2018",
            "1,000",
            "1000",
            "one thousand",
            "3.5 million",
            "third",
            "3rd",
            "Abraham Lincoln",
            "Lincoln",
            "Gupta Empire",
            "Won",
            "the",
            "of",
            ",",
            ".",
            "'s",
            "n't",
            "٣",
            "١٩٩٩",
            "ß",
            "İ",
            "Ǆ",
            "\u0301",
            "\ufeff",
        ]
    )
    | st.integers(30, 6000).map(lambda n: "1" * n)
    | st.integers(30, 6000).map(lambda n: "1" * n + "st")
)
texts = st.lists(pieces | any_text, max_size=10).map(" ".join) | any_text
answers = st.lists(pieces | any_text, min_size=1, max_size=3).map(" ".join) | any_text


@SLOW_OK
@given(texts, st.lists(answers, max_size=3), answers)
# Found: an ordinal or word-number too large for num2words raised OverflowError.
@example("the third time", ["3rd"], "1" + "0" * 50 + "th")
@example("one thousand and one nights", ["1001"], "1" * 70)
def test_a_replacement_changes_only_the_spans_it_reports(text, olds, new):
    result = replace_forms(text, olds, new)
    rebuilt, position = [], 0
    for edit in result.replacements:  # sorted, disjoint, each the text it says it replaced
        assert position <= edit.start <= edit.end <= len(text) and text[edit.start : edit.end] == edit.old
        rebuilt += [text[position : edit.start], edit.new]
        position = edit.end
    assert "".join(rebuilt) + text[position:] == result.text
    for form in result.unreplaced:
        assert text[form.start : form.end] == form.text
    assert replace_spans(text, olds, new) == (result.text, result.count)


# Words from disjoint alphabets (with letters whose case changes their length or meaning: "ß", "ẞ", "Ǆ",
# the Kelvin sign), so the old answer cannot hide in the filler or in the new answer.
old_words = st.text(st.sampled_from("qxzQXZǄǅǆẞß"), min_size=1, max_size=6)
new_words = st.text(st.sampled_from("bkvBKVKßẞ"), min_size=1, max_size=6)
filler = st.text(st.sampled_from(string.ascii_lowercase[:8].replace("b", "")), min_size=1, max_size=6)


@given(
    st.lists(filler, max_size=6),
    st.lists(old_words, min_size=1, max_size=3),
    st.lists(new_words, min_size=1, max_size=3),
    st.lists(st.integers(0, 6), min_size=1, max_size=3),
    st.sampled_from([" ", ". ", " , "]),
)
# Found: a new answer opening with "ß" in front of a capital became "SS…", another word.
@example([], ["Xq"], ["ßk"], [0], " ")
def test_a_replaced_answer_leaves_the_new_one_and_none_of_the_old(fill, old, new, where, joint):
    old, new = " ".join(old), " ".join(new)
    assume(not set(answer_tokens(old)) & set(answer_tokens(new)))
    words = list(fill)
    for i in sorted(where, reverse=True):
        words.insert(min(i, len(words)), old)
    text = joint.join(words)
    result = replace_forms(text, [old], new)
    assert result.count >= 1
    assert checks.mentions(result.text, new)
    if not result.unreplaced:
        assert not checks.mentions(result.text, old), result.text


@given(st.integers(0, 10**40), st.integers(0, 10**40))
# Found: numbers past 28 digits were compared after rounding (Decimal's default precision): these were "equal".
@example(10**29 + 1, 10**29 + 2)
def test_a_number_is_found_only_where_the_same_value_is_written(written, asked):
    found = sf.find_forms(f"it counted {written} of them", str(asked))
    assert bool(found) == (written == asked)


@SLOW_OK
@given(texts, answers, st.lists(answers, max_size=3))
# Found: an ordinal of more than 4,300 digits broke int() inside the reader of every text.
@example("the " + "1" * 5000 + "st time", "1st", [])
@example("١٩٩٩ and 1999", "1999", ["٣"])
def test_the_string_checks_answer_any_text_without_raising(text, answer, others):
    for check in (
        checks.mentions,
        checks.same_shape,
        checks.same_date_parts,
        checks.name_part_in,
        checks.echoes_option,
    ):
        assert isinstance(check(text, answer), bool)
    assert isinstance(checks.mentions_any(text, others), bool)
    assert isinstance(checks.mentions_any_form(text, [answer, *others]), bool)
    assert isinstance(checks.is_placeholder(answer), bool)
    assert isinstance(checks.overlaps_answer(answer, others), bool)
    assert all(isinstance(w, str) for w in checks.old_name_part_left(text, others, [answer]))
    assert 0.0 <= checks.similarity_outside(text, answer, others, [answer]) <= 1.0
    assert all(year in text for year in checks.years(text))
    assert isinstance(checks.talks_about_the_test(text), bool)
    assert sf.answer_kind(answer) in ("date", "number", "name", "other")
    for form in sf.find_forms(text, answer):
        assert 0 <= form.start < form.end <= len(text) and text[form.start : form.end] == form.text
