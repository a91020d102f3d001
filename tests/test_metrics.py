"""Hand-checked examples for metrics/: each would fail on a wrong normalisation or matching rule."""

import math
from types import SimpleNamespace

import pytest

from metrics import (
    CONFLICT_PHRASES,
    UNKNOWN_PHRASES,
    answer_tokens,
    bootstrap_ci,
    contains_answer,
    correct_metric,
    em_metric,
    exact_match,
    f1_metric,
    is_correct,
    keyword_match,
    normalize_answer,
    rate_with_ci,
    seed_cell,
    seed_table,
    token_f1,
    wilson_interval,
)

# --- normalisation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The Beatles", "beatles"),
        ("U.S.", "us"),  # SQuAD deletes punctuation (no space inserted)
        ("  Hello,\tWORLD!\n ", "hello world"),
        ("An apple a day", "apple day"),
        ("theatre another", "theatre another"),  # articles only as whole words
        ("Jean-Paul Sartre", "jeanpaul sartre"),
        ("", ""),
        (None, ""),
    ],
)
def test_normalize_answer(raw, expected):
    assert normalize_answer(raw) == expected


def test_answer_tokens():
    assert answer_tokens("The  quick, brown fox.") == ["quick", "brown", "fox"]
    assert answer_tokens(None) == []


# --- exact match / F1 ---------------------------------------------------------------------------


def test_exact_match_normalises_and_takes_max_over_aliases():
    assert exact_match("The Beatles", ["beatles"]) == 1.0
    assert exact_match("beatles", ["Rolling Stones", "the Beatles!"]) == 1.0
    assert exact_match("US", ["U.S."]) == 1.0
    assert exact_match("Beatles band", ["beatles"]) == 0.0
    assert exact_match("beatles", "The Beatles") == 1.0  # a bare string is one alias


def test_empty_prediction_never_correct():
    # "The" normalises to '' - an empty answer must still not match it.
    for pred in ("", None, "  ", "the", "."):
        assert exact_match(pred, ["The"]) == 0.0
        assert token_f1(pred, ["The"]) == 0.0
        assert not contains_answer(pred, ["The", "x"])
        assert not is_correct(pred, ["The"])


def test_token_f1_hand_values():
    # pred tokens [quick, brown, fox]; vs [quick, fox]: P=2/3, R=1 -> 0.8;
    # vs [brown, dog]: P=1/3, R=1/2 -> 0.4. Max over aliases = 0.8 whatever the order.
    assert token_f1("The quick brown fox", ["brown dog", "quick fox"]) == pytest.approx(0.8)
    assert token_f1("The quick brown fox", ["quick fox", "brown dog"]) == pytest.approx(0.8)
    assert token_f1("The quick brown fox", ["brown dog"]) == pytest.approx(0.4)
    # Multiset overlap: the repeated token counts once. P=1/2, R=1 -> 2/3.
    assert token_f1("paris paris", ["Paris"]) == pytest.approx(2 / 3)
    assert token_f1("The Beatles", ["beatles"]) == 1.0
    assert token_f1("london", ["paris"]) == 0.0
    assert token_f1("london", []) == 0.0


# --- containment --------------------------------------------------------------------------------


def test_contains_gold_in_prediction():
    assert contains_answer("It was the Beatles.", ["Beatles"])
    assert contains_answer("born in May 1990, in Ohio", ["may 1990"])
    assert not contains_answer("1990 May", ["May 1990"])  # contiguous and in order


def test_contains_prediction_in_gold():
    assert contains_answer("1990", ["May 1990"])
    assert contains_answer("the Beatles", ["The Beatles (band)"])


def test_contains_is_token_not_substring():
    assert not contains_answer("19901", ["1990"])
    assert not contains_answer("1990", ["19901"])
    assert not contains_answer("in the 1990s", ["1990"])
    assert not contains_answer("anything at all", ["The"])  # empty gold matches nothing


def test_is_correct():
    assert is_correct("The Beatles", ["beatles"])
    assert is_correct("I think it was the Beatles", ["Beatles"])
    assert not is_correct("The Rolling Stones", ["Beatles"])


# --- DSPy metric convention ---------------------------------------------------------------------


def test_metric_wrappers_float_without_trace_bool_with_trace():
    ex = SimpleNamespace(answers=["Quick fox"])
    pred = SimpleNamespace(answer="the quick brown fox")  # F1 = 0.8, EM = 0
    assert em_metric(ex, pred) == 0.0 and isinstance(em_metric(ex, pred), float)
    assert em_metric(ex, pred, trace=[]) is False
    assert f1_metric(ex, pred) == pytest.approx(0.8) and isinstance(f1_metric(ex, pred), float)
    assert f1_metric(ex, pred, trace=[]) is True  # 0.8 >= 0.5
    assert f1_metric(ex, SimpleNamespace(answer="brown dog cat"), trace=[]) is False
    # "quick fox" is not a contiguous run of "quick brown fox": not correct despite F1 0.8.
    assert correct_metric(ex, pred) == 0.0 and isinstance(correct_metric(ex, pred), float)
    assert correct_metric(ex, pred, trace=[]) is False
    verbose = SimpleNamespace(answer="It was the quick fox.")
    assert correct_metric(ex, verbose) == 1.0 and correct_metric(ex, verbose, trace=[]) is True
    good = SimpleNamespace(answer="Quick fox.")
    assert em_metric(ex, good) == 1.0 and em_metric(ex, good, trace=[]) is True


def test_metric_wrappers_accept_dicts_and_missing_answer():
    ex = {"answers": ["Paris"]}
    assert em_metric(ex, {"answer": "paris"}) == 1.0
    assert em_metric(ex, SimpleNamespace()) == 0.0  # no answer field: not correct


def test_metric_wrappers_with_dspy_objects():
    dspy = pytest.importorskip("dspy")
    ex = dspy.Example(question="q", answers=["The Beatles"]).with_inputs("question")
    pred = dspy.Prediction(answer="beatles")
    assert em_metric(ex, pred) == 1.0
    assert f1_metric(ex, pred, trace=object()) is True


# --- keywords -----------------------------------------------------------------------------------


def test_phrase_lists_are_faitheval_data():
    assert UNKNOWN_PHRASES == ("unknown", "no answer", "no information", "not", "unclear")
    assert "two answers" in CONFLICT_PHRASES and "2 answers" in CONFLICT_PHRASES
    assert len(CONFLICT_PHRASES) == 10


@pytest.mark.parametrize(
    ("prediction", "kind", "strict", "expected"),
    [
        ("The answer is unknown.", "unknown", False, True),
        ("The answer is unknown.", "unknown", True, False),
        ("unknown", "unknown", True, True),
        ("Unknown.", "unknown", True, True),
        ("knot", "unknown", False, False),
        ("nothing", "unknown", False, False),
        ("It is not stated in the passage", "unknown", False, True),
        ("There is no information about this.", "unknown", False, True),
        ("Paris", "unknown", False, False),
        ("", "unknown", False, False),
        (None, "unknown", True, False),
        ("Conflict", "conflict", True, True),
        ("The passages are conflicting.", "conflict", True, False),
        ("The passages are conflicting.", "conflict", False, True),
        ("There are 2 answers here", "conflict", False, True),
        ("Two answers are possible", "conflict", False, True),
        ("answers two", "conflict", False, False),  # phrase words must be contiguous, in order
        ("nonconflicting", "conflict", False, False),
        ("unknown", "conflict", False, False),
    ],
)
def test_keyword_match(prediction, kind, strict, expected):
    assert keyword_match(prediction, kind, strict) is expected


def test_keyword_match_rejects_unknown_kind():
    with pytest.raises(ValueError, match="unknown keyword kind"):
        keyword_match("x", "unknwon", strict=False)


# --- seed table ---------------------------------------------------------------------------------


def test_seed_cell():
    assert seed_cell(True, True) == "open_correct__closed_correct"
    assert seed_cell(True, False) == "open_correct__closed_wrong"
    assert seed_cell(False, True) == "open_wrong__closed_correct"
    assert seed_cell(False, False) == "open_wrong__closed_wrong"


def test_seed_table_counts_and_excludes_errors():
    records = [
        {"open_correct": True, "closed_correct": False, "status": "accepted"},
        {"open_correct": True, "closed_correct": False},
        {"open_correct": True, "closed_correct": True},
        {"open_correct": False, "closed_correct": False, "status": "rejected:short"},
        # errored cases are counted apart even when they carry (stale) flags
        {"open_correct": True, "closed_correct": False, "status": "error:parse"},
        {"status": "error:lm_timeout"},
        {"status": "accepted"},  # not scored: skipped
    ]
    assert seed_table(records) == {
        "open_correct__closed_correct": 1,
        "open_correct__closed_wrong": 2,
        "open_wrong__closed_correct": 0,
        "open_wrong__closed_wrong": 1,
        "errors": 2,
    }


def test_seed_table_empty_has_all_keys():
    assert seed_table([]) == {
        "open_correct__closed_correct": 0,
        "open_correct__closed_wrong": 0,
        "open_wrong__closed_correct": 0,
        "open_wrong__closed_wrong": 0,
        "errors": 0,
    }


# --- intervals ----------------------------------------------------------------------------------


def test_bootstrap_deterministic_and_brackets_mean():
    values = [0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0.5, 0.25]
    a = bootstrap_ci(values, seed=7)
    assert a == bootstrap_ci(values, seed=7)
    assert a != bootstrap_ci(values, seed=8)
    mean, low, high = a
    assert mean == pytest.approx(sum(values) / len(values))
    assert 0.0 <= low < mean < high <= 1.0


def test_bootstrap_edge_cases():
    assert all(math.isnan(x) for x in bootstrap_ci([]))
    assert bootstrap_ci([0.3]) == (0.3, 0.3, 0.3)
    # Narrower alpha -> narrower interval.
    values = list(range(20))
    _, lo95, hi95 = bootstrap_ci(values, alpha=0.05)
    _, lo50, hi50 = bootstrap_ci(values, alpha=0.5)
    assert lo95 <= lo50 and hi50 <= hi95


def test_wilson_hand_value():
    # Wilson 95% for 5/10 is [0.2366, 0.7634] (standard table value).
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4)
    assert high == pytest.approx(0.7634, abs=1e-4)


def test_rate_with_ci():
    r = rate_with_ci([True, True, False, False, True, False, True, False, True, False])
    assert r["rate"] == 0.5 and r["n"] == 10
    assert r["low"] == pytest.approx(0.2366, abs=1e-4) and r["high"] == pytest.approx(0.7634, abs=1e-4)
    # All successes: the interval must not collapse to [1, 1].
    all_ok = rate_with_ci([True] * 20)
    assert all_ok["rate"] == 1.0 and all_ok["high"] == 1.0 and all_ok["low"] < 0.9
    boot = rate_with_ci([True, False, True, True], method="bootstrap", seed=3)
    assert boot == rate_with_ci([True, False, True, True], method="bootstrap", seed=3)
    assert boot["low"] <= boot["rate"] == 0.75 <= boot["high"]
    empty = rate_with_ci([])
    assert empty["n"] == 0 and math.isnan(empty["rate"]) and math.isnan(empty["low"])


def test_tokenised_clitics_match_untokenised_text():
    from metrics import exact_match, normalize_answer

    assert normalize_answer("the fund 's realized earnings") == normalize_answer("The fund's realized earnings")
    assert normalize_answer("do n't") == normalize_answer("don't")
    assert exact_match("the fund's realized earnings", ["the fund 's realized earnings"]) == 1.0
