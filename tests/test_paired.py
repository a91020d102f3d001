"""Paired comparisons (metrics/paired.py) against values computed by hand."""

import math

import pytest

from metrics.paired import discordant, mcnemar_exact, paired_difference


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),  # no discordant pair: nothing to test
        (0, 6, 2 / 64),  # 2 * P(X <= 0), X ~ Bin(6, 1/2)
        (1, 5, 2 * (1 + 6) / 64),  # 2 * (C(6,0) + C(6,1)) / 2^6 = 0.21875
        (5, 1, 2 * (1 + 6) / 64),  # symmetric
        (3, 3, 1.0),  # 2 * 42/64 > 1: capped
        (2, 8, 2 * (1 + 10 + 45) / 1024),  # 0.109375
        (0, 1, 1.0),  # one pair cannot be significant: 2 * 1/2
    ],
)
def test_mcnemar_exact_matches_hand_computed_binomial_tails(b, c, p):
    assert mcnemar_exact(b, c) == pytest.approx(p)


def test_mcnemar_exact_agrees_with_scipy_where_installed():
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(4, 11), (7, 7), (0, 9), (13, 2), (20, 35)]:
        assert mcnemar_exact(b, c) == pytest.approx(stats.binomtest(min(b, c), b + c, 0.5).pvalue)


def test_mcnemar_refuses_negative_counts():
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar_exact(-1, 2)


def test_discordant_counts_each_direction():
    a = [True, True, False, False, True]
    b = [True, False, True, True, False]
    assert discordant(a, b) == (2, 2)
    with pytest.raises(ValueError, match="unequal"):
        discordant([True], [True, False])


def test_paired_difference_rates_pairs_and_p():
    # 10 seeds: uncompiled succeeds on 2, compiled on 7; 1 uncompiled-only, 6 compiled-only, 1 both.
    a = [True, True] + [False] * 8
    b = [True, False] + [True] * 6 + [False] * 2
    d = paired_difference(a, b, resamples=500)
    assert d["n"] == 10 and d["a"] == pytest.approx(0.2) and d["b"] == pytest.approx(0.7)
    assert d["diff"] == pytest.approx(0.5)
    assert (d["a_only"], d["b_only"]) == (1, 6)
    assert d["p"] == pytest.approx(2 * (1 + 7) / 128)  # 0.125
    assert d["low"] <= d["diff"] <= d["high"] and d["low"] > 0  # every resample gains: 6 of 7 discordant
    assert -1 <= d["low"] and d["high"] <= 1


def test_paired_difference_leaves_unknown_outcomes_out_of_both_sides():
    d = paired_difference([True, None, False, True], [True, True, None, False], resamples=200)
    assert d["n"] == 2 and (d["a_only"], d["b_only"]) == (1, 0) and d["diff"] == pytest.approx(-0.5)


def test_identical_programs_differ_by_exactly_nothing():
    a = [True, False, True, False, False]
    d = paired_difference(a, list(a), resamples=300)
    assert d["diff"] == 0 and d["low"] == 0 and d["high"] == 0 and d["p"] == 1.0


def test_the_bootstrap_resamples_clusters_and_is_deterministic():
    # two units per seed; the interval over 4 seeds draws whole seeds
    a = [False] * 8
    b = [True, True, True, True, False, False, True, True]
    seeds = ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"]
    first = paired_difference(a, b, seeds, resamples=400, seed=3)
    assert first == paired_difference(a, b, seeds, resamples=400, seed=3)
    assert first["diff"] == pytest.approx(0.75)
    assert 0 <= first["low"] < first["diff"] < first["high"] <= 1
    # drawn by seed, the resamples only ever hold 0 to 4 gaining seeds: at most 1 (every seed gains), and a
    # draw of only s3 (no gain) is possible, so the interval reaches below what units drawn one by one give
    units = paired_difference(a, b, resamples=400, seed=3)
    assert first["high"] - first["low"] > units["high"] - units["low"]


def test_no_pairs_gives_nan_not_zero():
    d = paired_difference([None], [True])
    assert d["n"] == 0 and math.isnan(d["diff"]) and d["p"] == 1.0
    with pytest.raises(ValueError, match="paired"):
        paired_difference([True], [True, False])
