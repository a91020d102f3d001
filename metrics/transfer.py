"""Attack transfer (generator x target) and model rank changes, from scored evaluation records.

ReEval's question "do cases made with one pivot LLM also break other models?" is the transfer
matrix: rows are the generators (pivots that made the cases), columns the targets, cells the
targets' accuracy on those cases (or its drop from the originals). The diagonal, where a model
is attacked with cases it generated itself, is the self-attack; everything else is transfer.
Rank changes show whether the perturbed set reorders models compared to the static set.

Units and error handling are those of metrics.evaluation (Category 2 both-copies rule, errors
counted apart, metric-not-applicable records left out).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from .evaluation import _rate, paired_units, units
from .intervals import bootstrap_ci


def _select(
    scored: Iterable[Mapping[str, Any]], setting: str | None, decoding: str | None, task: str | None
) -> list[Mapping[str, Any]]:
    return [
        r
        for r in scored
        if (setting is None or r.get("setting") == setting)
        and (decoding is None or r.get("decoding") == decoding)
        and (task is None or r.get("task") == task)
    ]


def _ordered(generators: set[str], targets: set[str]) -> tuple[list[str], list[str]]:
    # Models that are both generator and target come first, in the same order on both axes,
    # so the self-attack cells lie on the drawn diagonal.
    both = sorted(generators & targets)
    return both + sorted(generators - targets), both + sorted(targets - generators)


def transfer_matrix(
    scored: Iterable[Mapping[str, Any]],
    metric: str = "correct",
    *,
    value: Literal["perturbed", "drop"] = "perturbed",
    setting: str | None = None,
    decoding: str | None = None,
    task: str | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Generator x target matrix of perturbed accuracy (value="perturbed") or of the paired
    drop original - perturbed (value="drop").

    setting / decoding / task filter the records first (None pools all of them; pooling prompt
    settings mixes different measurements, so reports pass one). Returns::

        {"metric", "value", "setting", "decoding", "task",
         "rows": [generator, ...], "cols": [target, ...],
         "cells": {generator: {target: {"value", "low", "high", "n", "errors", "self_attack"}}},
         "diagonal": [model, ...]}    # models present as both generator and target

    Every (row, col) cell is present; a cell without data has n 0 and value nan.
    Records without a generator (originals, external cases) are not rows.
    """
    if value not in ("perturbed", "drop"):
        raise ValueError(f"value must be 'perturbed' or 'drop', not {value!r}")
    records = _select(scored, setting, decoding, task)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    if value == "perturbed":
        groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for u in units(records, metric):
            if u["variant"] == "perturbed" and u["generator"]:
                groups[(u["generator"], u["target"])].append(u)
        for key, group in groups.items():
            stats = _rate([u["value"] for u in group if not u["error"]], seed)
            found[key] = {
                "value": stats["rate"],
                "low": stats["low"],
                "high": stats["high"],
                "n": stats["n"],
                "errors": sum(u["error"] for u in group),
            }
    else:
        for (gen, target), pairs in paired_units(records, metric, ("generator", "target")).items():
            if not gen:
                continue
            good = [o["value"] - p["value"] for o, p in pairs if not o["error"] and not p["error"]]
            drop, low, high = bootstrap_ci(good, seed=seed)
            found[(gen, target)] = {
                "value": drop,
                "low": low,
                "high": high,
                "n": len(good),
                "errors": len(pairs) - len(good),
            }
    rows, cols = _ordered({g for g, _ in found}, {t for _, t in found})
    empty = {"value": math.nan, "low": math.nan, "high": math.nan, "n": 0, "errors": 0}
    cells = {g: {t: {**found.get((g, t), empty), "self_attack": g == t} for t in cols} for g in rows}
    return {
        "metric": metric,
        "value": value,
        "setting": setting,
        "decoding": decoding,
        "task": task,
        "rows": rows,
        "cols": cols,
        "cells": cells,
        "diagonal": [g for g in rows if g in cols],
    }


def average_ranks(scores: Mapping[str, float]) -> dict[str, float]:
    """Rank 1 = highest score; tied scores share the average of the ranks they span."""
    ordered = sorted(scores, key=lambda k: (-scores[k], k))
    ranks: dict[str, float] = {}
    i = 0
    while i < len(ordered):
        j = i
        # Round so that float noise (0.1 + 0.2 vs 0.3) does not break a real tie.
        while j + 1 < len(ordered) and round(scores[ordered[j + 1]], 12) == round(scores[ordered[i]], 12):
            j += 1
        for k in ordered[i : j + 1]:
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def rank_changes(
    scored: Iterable[Mapping[str, Any]],
    metric: str = "correct",
    *,
    by: Sequence[str] = ("setting", "decoding"),
    task: str | None = None,
) -> list[dict[str, Any]]:
    """Per group (default: each prompt setting and decoding), every target's rank on the
    original cases and on the perturbed cases.

    Rows: the `by` fields, target, original, perturbed (accuracy over scored units),
    n_original, n_perturbed, rank_original, rank_perturbed (1 = best, ties share the average
    rank) and change = rank_perturbed - rank_original (positive: the model fell). Only targets
    with both original and perturbed units in the group are ranked.
    """
    records = _select(scored, None, None, task)
    acc: dict[tuple, dict[str, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: {"original": [], "perturbed": []})
    )
    for u in units(records, metric, by):
        if u["error"] or u["variant"] not in ("original", "perturbed"):
            continue
        acc[tuple(u.get(k) for k in by)][u["target"]][u["variant"]].append(u["value"])
    rows = []
    for key in sorted(acc, key=lambda k: tuple(str(x) for x in k)):
        per_target = {t: v for t, v in acc[key].items() if v["original"] and v["perturbed"]}
        orig = {t: sum(v["original"]) / len(v["original"]) for t, v in per_target.items()}
        pert = {t: sum(v["perturbed"]) / len(v["perturbed"]) for t, v in per_target.items()}
        r_orig, r_pert = average_ranks(orig), average_ranks(pert)
        for target in sorted(per_target, key=lambda t: (r_orig[t], t)):
            row = dict(zip(by, key, strict=True))
            row.update(
                target=target,
                metric=metric,
                original=orig[target],
                perturbed=pert[target],
                n_original=len(per_target[target]["original"]),
                n_perturbed=len(per_target[target]["perturbed"]),
                rank_original=r_orig[target],
                rank_perturbed=r_pert[target],
                change=r_pert[target] - r_orig[target],
            )
            rows.append(row)
    return rows
