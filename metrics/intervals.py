"""Confidence intervals for per-case scores and success rates.

Case sets here are small (tens to hundreds of perturbed cases per target), so every reported
rate carries an interval; otherwise rank changes between models are read into noise.
"""

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Literal

import numpy as np

# Resampling is done in row blocks so memory stays bounded for large case sets
# (n_resamples x n indices at once would be 80 MB for 10k cases).
_BLOCK_CELLS = 1_000_000

NAN = float("nan")


def bootstrap_ci(
    values: Sequence[float], *, n_resamples: int = 1000, alpha: float = 0.05, seed: int = 0
) -> tuple[float, float, float]:
    """(mean, low, high): the sample mean and a percentile-bootstrap (1 - alpha) interval.

    Deterministic for a given seed (its own Generator, no global state), so a rerun of a report
    prints the same numbers. Empty input gives (nan, nan, nan): there is nothing to estimate,
    and 0 would be read as a measured value.
    """
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return (NAN, NAN, NAN)
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    mean = float(data.mean())
    rng = np.random.default_rng(seed)
    n = data.size
    rows_per_block = max(1, _BLOCK_CELLS // n)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, rows_per_block):
        stop = min(start + rows_per_block, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = data[idx].mean(axis=1)
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (mean, float(low), float(high))


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval for a binomial rate; (nan, nan) when n == 0."""
    if n == 0:
        return (NAN, NAN)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # Clamp float error at the edges (0/n and n/n) so the bounds stay within [0, 1].
    return (max(0.0, centre - half), min(1.0, centre + half))


def rate_with_ci(
    successes: Sequence[bool],
    *,
    method: Literal["wilson", "bootstrap"] = "wilson",
    alpha: float = 0.05,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, float | int]:
    """{"rate", "n", "low", "high"} for a list of per-case successes.

    Wilson is the default because a percentile bootstrap collapses to [1, 1] (or [0, 0]) when
    every case succeeds (or fails), which on 20 cases claims a certainty we do not have.
    method="bootstrap" uses bootstrap_ci for consistency with non-binary scores.
    """
    flags = [bool(s) for s in successes]
    n = len(flags)
    if method == "bootstrap":
        rate, low, high = bootstrap_ci([float(f) for f in flags], n_resamples=n_resamples, alpha=alpha, seed=seed)
    elif method == "wilson":
        k = sum(flags)
        rate = k / n if n else NAN
        low, high = wilson_interval(k, n, alpha)
    else:
        raise ValueError(f"unknown method {method!r}; expected 'wilson' or 'bootstrap'")
    return {"rate": rate, "n": n, "low": low, "high": high}
