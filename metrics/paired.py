"""Paired comparisons of two programs on the same units (seeds, or seed x target): did B change a yes/no outcome?

`mcnemar_exact` tests whether the discordant pairs lean one way (the exact binomial form, two-sided);
`paired_difference` gives B's rate minus A's with a percentile bootstrap interval that resamples whole
clusters (a seed's several targets move together), plus the McNemar p-value of the same pairs. A unit
with an unknown outcome on either side (None: an errored case, an unparsed answer) is left out of both.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from typing import Any


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p: under H0 the b + c discordant pairs split Binomial(b + c, 1/2);
    p = min(1, 2 * P(X <= min(b, c))). No discordant pair: p = 1."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def discordant(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int]:
    """(A yes and B no, A no and B yes) over paired outcomes."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes of unequal length: {len(a)} and {len(b)}")
    return sum(x and not y for x, y in zip(a, b, strict=True)), sum(y and not x for x, y in zip(a, b, strict=True))


def paired_difference(
    a: Sequence[bool | None],
    b: Sequence[bool | None],
    clusters: Sequence[Hashable] | None = None,
    *,
    alpha: float = 0.05,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """B's rate minus A's over units known on both sides, a 1 - alpha percentile bootstrap interval over
    clusters (default: each unit its own), and the exact McNemar p of the discordant pairs."""
    if len(a) != len(b) or (clusters is not None and len(clusters) != len(a)):
        raise ValueError("a, b and clusters must be paired: equal lengths")
    keys = list(clusters) if clusters is not None else list(range(len(a)))
    pairs = [(k, bool(x), bool(y)) for k, x, y in zip(keys, a, b, strict=True) if x is not None and y is not None]
    n = len(pairs)
    out: dict[str, Any] = {"n": n, "a": float("nan"), "b": float("nan"), "diff": float("nan")}
    out.update(low=float("nan"), high=float("nan"), p=1.0, a_only=0, b_only=0)
    if not n:
        return out
    xs, ys = [x for _, x, _ in pairs], [y for _, _, y in pairs]
    a_only, b_only = discordant(xs, ys)
    out.update(a=sum(xs) / n, b=sum(ys) / n, a_only=a_only, b_only=b_only, p=mcnemar_exact(a_only, b_only))
    out["diff"] = out["b"] - out["a"]
    out["low"], out["high"] = _bootstrap_interval(pairs, alpha, resamples, seed)
    return out


def _bootstrap_interval(pairs: list[tuple], alpha: float, resamples: int, seed: int) -> tuple[float, float]:
    groups: dict[Hashable, list[int]] = {}
    for key, x, y in pairs:
        group = groups.setdefault(key, [0, 0])  # per cluster: units, and (B - A) summed
        group[0] += 1
        group[1] += int(y) - int(x)
    sums = list(groups.values())
    rng = random.Random(seed)
    diffs = []
    for _ in range(resamples):
        drawn = [sums[rng.randrange(len(sums))] for _ in sums]
        units = sum(g[0] for g in drawn)
        diffs.append(sum(g[1] for g in drawn) / units)
    diffs.sort()
    return _quantile(diffs, alpha / 2), _quantile(diffs, 1 - alpha / 2)


def _quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
