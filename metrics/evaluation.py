"""The tables built from scored evaluation records (`metrics.scores` declares and adds the scores).

Everything here is pure: no LM, no I/O.

Rules that every table below follows:

- A record whose ``status`` starts with ``error:`` gets no scores (None). It is counted in
  ``errors`` and never enters a rate as a wrong answer.
- A metric that does not apply to a record (keywords on an answer-swap case, ``mc_correct``
  outside counterfactual, ``entailment`` without an NLI callable) is None and the record is
  left out of that metric's tables (neither in ``n`` nor in ``errors``).
- Rates are computed over *units*, not records. A unit is one seed for one
  (task, generator, variant, target, setting, decoding). For every task but Category 2 a unit
  is one record. For Category 2 (``context_enrich``) the two perturbed copies of a seed
  (``<seed>:enrich-question`` and ``<seed>:enrich-evidence``) form one unit that is correct only
  if both copies are (ReEval's rule); with real-valued metrics (F1) the unit takes the minimum.
  A unit with one errored copy is wrong if the other copy is wrong (its outcome is then known)
  and an error otherwise. If validation kept only one copy, the unit is that copy.
- Intervals are 95% percentile-bootstrap intervals from ``metrics.intervals.bootstrap_ci``
  with a fixed seed, so a re-run prints the same numbers.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .intervals import bootstrap_ci
from .scores import error_kind, is_error, metric_applies

log = logging.getLogger(__name__)

# Fields that identify a unit; the fields a table groups by must be among them or be constant
# within a unit (otherwise the unit's value for that field is "mixed").
UNIT_KEY: tuple[str, ...] = ("task", "seed_id", "generator", "variant", "target", "setting", "decoding")
PAIR_KEY: tuple[str, ...] = ("task", "seed_id", "target", "setting", "decoding")
MIXED = "mixed"
POSITIONS: tuple[str, ...] = ("first", "middle", "last")


def answer_position(context: str | None, answer: str | None, answer_start: int | None = None) -> str | None:
    """Which third of the context ("first", "middle", "last") the answer span starts in.

    Uses `answer_start` when it is a valid offset, else the first case-insensitive occurrence
    of the answer; None when the answer is not in the context (or either is empty).
    Thirds are by character offset: start < len/3 is first, < 2·len/3 middle, else last.
    """
    if not context or not answer:
        return None
    if answer_start is None or not 0 <= answer_start < len(context):
        answer_start = context.lower().find(answer.lower())
        if answer_start < 0:
            return None
    third = len(context) / 3
    if answer_start < third:
        return "first"
    return "middle" if answer_start < 2 * third else "last"


# --- units ------------------------------------------------------------------------------------------


def _value(record: Mapping[str, Any], metric: str) -> Any:
    if metric not in record:
        raise KeyError(f"record {record.get('case_id')!r} has no {metric!r}: score records with score_record first")
    value = record[metric]
    return None if value is None else float(value)


def units(scored: Iterable[Mapping[str, Any]], metric: str, fields: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Collapse records into units (see the module docstring).

    Each unit: the UNIT_KEY fields, any extra `fields` (a value that differs between a unit's
    records becomes "mixed"), "value" (float, or None when the unit errored), "error" (bool),
    "records" (count). Units where the metric does not apply are dropped.
    """
    groups: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for record in scored:
        groups[tuple(record.get(k) for k in UNIT_KEY)].append(record)
    out = []
    for key, records in groups.items():
        ok = [v for r in records if not is_error(r) and (v := _value(r, metric)) is not None]
        errored = sum(is_error(r) and metric_applies(r, metric) for r in records)
        if not ok and not errored:
            continue  # metric not applicable
        if ok and min(ok) == 0.0:
            value, error = 0.0, False  # one wrong copy decides, whatever the others did
        elif errored:
            value, error = None, True
        else:
            value, error = min(ok), False
        unit = dict(zip(UNIT_KEY, key, strict=True))
        for field in fields:
            if field in unit:
                continue
            seen = {r.get(field) for r in records}
            unit[field] = seen.pop() if len(seen) == 1 else MIXED
        unit.update(value=value, error=error, records=len(records))
        if len(records) > 1:  # a seed with several copies (context enriching makes two) is one unit
            log.debug("unit %s has %d records; combined by the all-correct rule", key, len(records))
        out.append(unit)
    return out


def _rate(values: Sequence[float], seed: int) -> dict[str, float | int]:
    mean, low, high = bootstrap_ci(values, seed=seed)
    return {"rate": mean, "n": len(values), "low": low, "high": high}


def _sort_key(row: Mapping[str, Any], by: Sequence[str]) -> tuple:
    order = {"original": 0, "perturbed": 1, "external": 2, "first": 0, "middle": 1, "last": 2}
    return tuple((order.get(row[k], 9) if isinstance(row[k], str) else 9, str(row[k])) for k in by)


# --- tables -----------------------------------------------------------------------------------------


def accuracy_table(
    scored: Iterable[Mapping[str, Any]],
    *,
    metric: str = "correct",
    by: Sequence[str] = ("target", "setting", "decoding", "variant"),
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Rate of `metric` per group: rows with the `by` fields, metric, rate, n, low, high, errors.

    n counts scored units, errors counts units that errored (not in n). Category 2 perturbed
    copies count as one unit per seed (both must be right).
    """
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for unit in units(scored, metric, by):
        groups[tuple(unit.get(k) for k in by)].append(unit)
    rows = []
    for key, group in groups.items():
        values = [u["value"] for u in group if not u["error"]]
        row = dict(zip(by, key, strict=True))
        row.update(metric=metric, **_rate(values, seed), errors=sum(u["error"] for u in group))
        rows.append(row)
    return sorted(rows, key=lambda r: _sort_key(r, by))


def paired_units(
    scored: Iterable[Mapping[str, Any]], metric: str, by: Sequence[str]
) -> dict[tuple, list[tuple[dict, dict]]]:
    """(original unit, perturbed unit) pairs grouped by `by`, over seeds that have both.

    The original of a perturbed unit is the original unit with the same task, seed, target,
    setting and decoding; if the harness stored originals under another task name, a unique
    match on seed, target, setting and decoding is used instead.
    """
    us = units(scored, metric, by)
    originals: dict[tuple, dict] = {}
    loose: dict[tuple, list[dict]] = defaultdict(list)
    for u in us:
        if u["variant"] == "original":
            originals[tuple(u[k] for k in PAIR_KEY)] = u
            loose[tuple(u[k] for k in PAIR_KEY[1:])].append(u)
    grouped: dict[tuple, list[tuple[dict, dict]]] = defaultdict(list)
    for u in us:
        if u["variant"] != "perturbed":
            continue
        orig = originals.get(tuple(u[k] for k in PAIR_KEY))
        if orig is None:
            candidates = loose.get(tuple(u[k] for k in PAIR_KEY[1:]), [])
            orig = candidates[0] if len(candidates) == 1 else None
        if orig is None:
            continue
        grouped[tuple(u.get(k) for k in by)].append((orig, u))
    return grouped


def normalised_accuracy(
    scored: Iterable[Mapping[str, Any]],
    metric: str = "correct",
    *,
    by: Sequence[str] = ("task", "target", "setting", "decoding"),
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Perturbed accuracy over the seeds whose original the same target got right.

    Per group: rate, n (perturbed units whose original was right and that did not error),
    low, high, errors (such perturbed units that errored), originals (paired seeds with a
    scored original) and originals_right. ReEval's "normalised" accuracy: a failure on a seed
    the model never knew is not an effect of the perturbation.
    """
    rows = []
    for key, pairs in paired_units(scored, metric, by).items():
        scored_orig = [(o, p) for o, p in pairs if not o["error"]]
        right = [(o, p) for o, p in scored_orig if o["value"] == 1.0]
        values = [p["value"] for _, p in right if not p["error"]]
        row = dict(zip(by, key, strict=True))
        row.update(
            metric=metric,
            **_rate(values, seed),
            errors=sum(p["error"] for _, p in right),
            originals=len(scored_orig),
            originals_right=len(right),
        )
        rows.append(row)
    return sorted(rows, key=lambda r: _sort_key(r, by))


def paired_drop(
    scored: Iterable[Mapping[str, Any]],
    metric: str = "correct",
    *,
    by: Sequence[str] = ("task", "target", "setting", "decoding"),
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Original vs perturbed accuracy on the same seeds, and the drop between them.

    Per group: original, perturbed, drop (= original - perturbed; positive means the attack
    hurt), low/high (bootstrap over paired seeds of the per-seed difference), n (pairs where
    neither side errored), errors (pairs where either side errored). Category 2 perturbed units
    use the both-copies rule.
    """
    rows = []
    for key, pairs in paired_units(scored, metric, by).items():
        row = dict(zip(by, key, strict=True))
        row.update(_paired_summary(pairs, metric, seed, names=("original", "perturbed"), diff="drop", sign=-1))
        rows.append(row)
    return sorted(rows, key=lambda r: _sort_key(r, by))


def _paired_summary(pairs, metric: str, seed: int, *, names: tuple[str, str], diff: str, sign: int) -> dict:
    """Means of both sides over pairs where neither errored, and the paired difference
    (second - first when sign=1, first - second when sign=-1) with its bootstrap interval."""
    good = [(a["value"], b["value"]) for a, b in pairs if not a["error"] and not b["error"]]
    value, low, high = bootstrap_ci([sign * (b - a) for a, b in good], seed=seed)
    return {
        "metric": metric,
        names[0]: _mean([a for a, _ in good]),
        names[1]: _mean([b for _, b in good]),
        diff: value,
        "low": low,
        "high": high,
        "n": len(good),
        "errors": len(pairs) - len(good),
    }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def breakdown(
    scored: Iterable[Mapping[str, Any]],
    key: str,
    *,
    metric: str = "correct",
    by: Sequence[str] = ("target", "setting", "decoding", "variant"),
    seed: int = 0,
) -> list[dict[str, Any]]:
    """accuracy_table split further by `key` ("source" or "answer_position").

    A record without an answer_position field gets one computed from its context and first
    expected answer. Category 2 units whose two copies fall in different buckets are "mixed".
    """
    if key not in ("source", "answer_position"):
        raise ValueError(f"breakdown key must be 'source' or 'answer_position', not {key!r}")
    records: Iterable[Mapping[str, Any]] = scored
    if key == "answer_position":
        records = [_with_position(r) for r in scored]
    return accuracy_table(records, metric=metric, by=(*by, key), seed=seed)


def _with_position(record: Mapping[str, Any]) -> Mapping[str, Any]:
    if "answer_position" in record:
        return record
    answers = record.get("answers") or []
    first = answers if isinstance(answers, str) else (answers[0] if answers else None)
    return {**record, "answer_position": answer_position(record.get("context"), first)}


def sycophancy(
    scored: Iterable[Mapping[str, Any]],
    metric: str = "correct",
    *,
    by: Sequence[str] = ("task", "target", "decoding"),
    baseline: str = "open_book",
    instructed: str = "task_instruction",
    seed: int = 0,
) -> list[dict[str, Any]]:
    """How the task instruction ("say unknown/conflict if ...") changes accuracy on ORIGINAL
    contexts, where the answer is present and the instruction should change nothing.

    Per group: open_book and task_instruction accuracy over seeds evaluated in both settings,
    change (= instructed - baseline; negative means the instruction made the model abstain
    or cry conflict on normal evidence), low/high (bootstrap over seeds), n, errors.
    """
    originals = [u for u in units(scored, metric, by) if u["variant"] == "original"]
    base = {tuple(u[k] for k in PAIR_KEY if k != "setting"): u for u in originals if u["setting"] == baseline}
    grouped: dict[tuple, list[tuple[dict, dict]]] = defaultdict(list)
    for u in originals:
        if u["setting"] != instructed:
            continue
        b = base.get(tuple(u[k] for k in PAIR_KEY if k != "setting"))
        if b is not None:
            grouped[tuple(u.get(k) for k in by)].append((b, u))
    rows = []
    for key, pairs in grouped.items():
        row = dict(zip(by, key, strict=True))
        row.update(_paired_summary(pairs, metric, seed, names=(baseline, instructed), diff="change", sign=1))
        rows.append(row)
    return sorted(rows, key=lambda r: _sort_key(r, by))


def error_counts(records: Iterable[Mapping[str, Any]], by: Sequence[str] = ("target",)) -> list[dict[str, Any]]:
    """Records per group with their error kinds: rows with the `by` fields, records, errors, kinds."""
    groups: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        groups[tuple(r.get(k) for k in by)].append(r)
    rows = []
    for key, group in groups.items():
        kinds: dict[str, int] = defaultdict(int)
        for r in group:
            if is_error(r):
                kinds[error_kind(r)] += 1
        row = dict(zip(by, key, strict=True))
        row.update(records=len(group), errors=sum(kinds.values()), kinds=dict(sorted(kinds.items())))
        rows.append(row)
    return sorted(rows, key=lambda r: _sort_key(r, by))
