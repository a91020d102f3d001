"""Generators compared on the units they share: paired differences between every two of them, and how many of
one generator's cases another made word for word.

A unit is one case slot (a seed, or a seed's copy for a generator that makes several); each generator has an
outcome per unit it covers (True, False, or None when unknown: an errored or unparsed answer). Two generators
are compared only on the units both cover with a known outcome, so a pivot that selects other seeds, or makes
cases of other seeds valid, is not compared on seeds it never attacked.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations
from typing import Any

from .paired import paired_difference


def paired_on_shared(
    a: Mapping[Hashable, bool | None], b: Mapping[Hashable, bool | None], *, seed: int = 0
) -> dict[str, Any]:
    """B's rate minus A's over the units both know (`paired_difference`: bootstrap interval and exact McNemar p),
    the two rates as `a_rate` and `b_rate`, and the count of units each covers alone."""
    shared = sorted((u for u in a.keys() & b.keys() if a[u] is not None and b[u] is not None), key=str)
    out = paired_difference([a[u] for u in shared], [b[u] for u in shared], seed=seed)
    out["a_rate"], out["b_rate"] = out.pop("a"), out.pop("b")
    out["a_alone"] = sum(1 for u, v in a.items() if v is not None and (u not in b or b[u] is None))
    out["b_alone"] = sum(1 for u, v in b.items() if v is not None and (u not in a or a[u] is None))
    return out


def pairwise(outcomes: Mapping[str, Mapping[Hashable, bool | None]], *, seed: int = 0) -> list[dict[str, Any]]:
    """One row per unordered pair of generators, in the order given: `a`, `b` and `paired_on_shared(a, b)`."""
    return [
        {"a": x, "b": y, **paired_on_shared(outcomes[x], outcomes[y], seed=seed)} for x, y in combinations(outcomes, 2)
    ]


def identical_shares(
    cases: Mapping[str, Mapping[Hashable, Hashable]], among: Mapping[str, Sequence[Hashable]] | None = None
) -> dict[str, dict[str, Any]]:
    """Per generator: how many of its cases (`among[g]`, default all of them) another generator made identically
    on the same unit, the share, and which generators those were.

    `cases[g]` maps a unit to what makes a case what it is (its text and expected answers, hashable)."""
    out: dict[str, dict[str, Any]] = {}
    for name, mine in cases.items():
        units = list(among[name]) if among is not None else list(mine)
        with_whom: dict[str, int] = {}
        same = 0
        for unit in units:
            twins = [other for other, theirs in cases.items() if other != name and theirs.get(unit) == mine.get(unit)]
            same += bool(twins)
            for other in twins:
                with_whom[other] = with_whom.get(other, 0) + 1
        out[name] = {
            "n": len(units),
            "identical": same,
            "share": same / len(units) if units else float("nan"),
            "with": with_whom,
        }
    return out
