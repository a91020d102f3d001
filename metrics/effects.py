"""Setting effects: how one prompt setting or decoding changes accuracy against another, on the same
cases (the task instruction, the opinion prompt, chain of thought, sampled decoding, adversarial
versus clean demonstrations).

Pure: scored evaluation records in (see metrics.evaluation for records, units and error rules),
rows out. A case counts only where both settings scored it; the difference is paired per unit
(one seed for one task, generator, target and variant) with a percentile-bootstrap interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .evaluation import units
from .intervals import bootstrap_ci

Spec = tuple[str, str]  # (setting, decoding)


def paired_effect(
    scored: Iterable[Mapping[str, Any]],
    base: Spec,
    alt: Spec,
    metric: str = "task_correct",
    *,
    variant: str = "perturbed",
    by: Sequence[str] = ("task", "target"),
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per `by` group: base and alt accuracy over units scored in both, change = alt - base with its
    95% bootstrap interval, n (pairs where neither errored) and errors (pairs where one did)."""
    pair_key = ("task", "seed_id", "generator", "target")
    found: dict[tuple, dict[Spec, dict]] = defaultdict(dict)
    for unit in units(scored, metric, tuple(by)):
        spec = (unit["setting"], unit["decoding"])
        if unit["variant"] != variant or spec not in (base, alt):
            continue
        found[tuple(unit[k] for k in pair_key)][spec] = unit
    groups: dict[tuple, list[tuple[dict, dict]]] = defaultdict(list)
    for pair in found.values():
        if base in pair and alt in pair:
            groups[tuple(pair[base].get(k) for k in by)].append((pair[base], pair[alt]))
    rows = []
    for key, pairs in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        good = [(a["value"], b["value"]) for a, b in pairs if not a["error"] and not b["error"]]
        change, low, high = bootstrap_ci([b - a for a, b in good], seed=seed)
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "metric": metric,
                "variant": variant,
                "base": f"{base[0]}/{base[1]}",
                "alt": f"{alt[0]}/{alt[1]}",
                "base_rate": _mean([a for a, _ in good]),
                "alt_rate": _mean([b for _, b in good]),
                "change": change,
                "low": low,
                "high": high,
                "n": len(good),
                "errors": len(pairs) - len(good),
            }
        )
    return rows


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan
