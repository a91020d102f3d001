"""Scoring of target-model evaluation records and the tables built from them.

An *evaluation record* is one target model's answer to one case (original or perturbed) under
one prompt setting and decoding; the harness writes them, this module scores and aggregates
them. Everything here is pure: no LM, no I/O. An NLI model, when wanted, is injected as a
callable ``nli(premise, hypothesis) -> probability of entailment``.

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
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .intervals import bootstrap_ci
from .keywords import TASK_ANSWERS, keyword_match
from .normalize import answer_tokens, normalize_answer
from .qa import MIN_GOLD_COVERAGE, _contains_run, exact_match, is_correct, token_f1

log = logging.getLogger(__name__)

NLI = Callable[[str, str], float]

# Task -> keyword kind for FaithEval's verdict tasks (the expected answer of a perturbed case).
KEYWORD_TASKS: dict[str, str] = {"unanswerable": "unknown", "inconsistent": "conflict"}
ENRICH_TASK = "context_enrich"
ENTAILMENT_THRESHOLD = 0.5
SCORE_FIELDS: tuple[str, ...] = (
    "em",
    "f1",
    "correct",
    "keyword_strict",
    "keyword_nonstrict",
    "mc_correct",
    "entailment",
    "task_correct",
)
# Fields that identify a unit; the fields a table groups by must be among them or be constant
# within a unit (otherwise the unit's value for that field is "mixed").
UNIT_KEY: tuple[str, ...] = ("task", "seed_id", "generator", "variant", "target", "setting", "decoding")
PAIR_KEY: tuple[str, ...] = ("task", "seed_id", "target", "setting", "decoding")
MIXED = "mixed"
# Variants that hold a case's adversarial evidence: a generated perturbation, or a benchmark file's
# row evaluated as given (no original to pair it with).
ADVERSARIAL_VARIANTS: tuple[str, ...] = ("perturbed", "external")
POSITIONS: tuple[str, ...] = ("first", "middle", "last")


def is_error(record: Mapping[str, Any]) -> bool:
    status = record.get("status")
    return isinstance(status, str) and status.startswith("error:")


def error_kind(record: Mapping[str, Any]) -> str | None:
    """'parse' for status 'error:parse'; None for a record that did not fail."""
    if not is_error(record):
        return None
    return record["status"].split(":", 1)[1] or "unknown"


# --- multiple choice --------------------------------------------------------------------------------


def option_labels(options: Sequence[Any]) -> list[tuple[str, str]]:
    """(label, text) pairs. Plain strings are labelled A, B, C, ...; dicts give label/text."""
    pairs = []
    for i, opt in enumerate(options):
        if isinstance(opt, Mapping):
            label = str(opt.get("label") or chr(ord("A") + i))
            text = str(opt.get("text") or "")
        else:
            label, text = chr(ord("A") + i), str(opt)
        pairs.append((label, text))
    return pairs


_FRAME_WORDS = frozenset({"answer", "is", "the", "correct", "option", "choice", "and", "or", "final"})


def _labels_named(prediction: str, labels: Sequence[str]) -> set[str]:
    """Option labels the prediction names explicitly ("B", "(B)", "Answer: B", "B. text", ...).

    Only upper-case letters count as labels, and a bare letter only when the whole answer is
    labels plus framing words ("Answer is B", "B or C"): in running text "A" is an article.
    """
    alt = "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))
    text = prediction.strip()
    found: set[str] = set()
    words = re.findall(r"[A-Za-z0-9]+", text)
    if len(words) == 1 and words[0].upper() in labels and len(text) <= 4:
        return {words[0].upper()}  # "b", "(b)", "b." : a lone letter is a choice in any case
    if words and all(w in labels or w.lower() in _FRAME_WORDS for w in words):
        found.update(w for w in words if w in labels)
        if found:
            return found
    # Leading marker: "B. photosynthesis", "(B) photosynthesis", "B) ..." , "B: ...".
    lead = re.match(rf"^\s*[\(\[]?({alt})(?:[\)\]]|[.:](?=\s|$))", text)
    if lead:
        found.add(lead.group(1))
    # Marked anywhere: "(B)", "[B]", "answer is B", "answer: (B)", "option B".
    found.update(re.findall(rf"[\(\[]({alt})[\)\]]", text))
    found.update(re.findall(rf"(?i:answer(?:\s+is)?|option|choice)\s*[:\-]?\s*[\(\[]?({alt})\b(?![-'])", text))
    return found


def _options_by_text(prediction: str, pairs: Sequence[tuple[str, str]]) -> set[str]:
    """Labels whose option text the prediction gives: equal after normalisation, else contained.

    Containment is on whole normalised tokens; an option whose match lies inside a longer
    matching option ("water" inside "salt water") is not counted as named separately.
    """
    pred_norm = normalize_answer(prediction)
    if not pred_norm:
        return set()
    equal = {label for label, text in pairs if normalize_answer(text) and normalize_answer(text) == pred_norm}
    if equal:
        return equal
    pred_toks = answer_tokens(prediction)
    hits = [(label, answer_tokens(text)) for label, text in pairs]
    hits = [(label, toks) for label, toks in hits if toks and _contains_run(pred_toks, toks)]
    return {
        label
        for label, toks in hits
        if not any(len(other) > len(toks) and _contains_run(other, toks) for _, other in hits)
    }


def _list_items(text: str) -> frozenset[str]:
    """The items of a list answer ("sand, clay, and dead plants"), each normalised."""
    parts = re.split(r",|;|\band\b", text)
    return frozenset(n for n in (normalize_answer(p) for p in parts) if n)


def _options_by_items(prediction: str, pairs: Sequence[tuple[str, str]]) -> set[str]:
    """Labels of list options the prediction gives in another order ("clay, sand, dead plants, dead animals"
    for "sand, clay, dead plants, and dead animals."). Whole items only: a reordering inside an item
    ("low runoff, high evaporation" for "high runoff, low evaporation") is a different answer."""
    items = _list_items(prediction)
    if len(items) < 2:
        return set()
    return {label for label, text in pairs if _list_items(text) == items}


def choice_of(prediction: str | None, options: Sequence[Any]) -> str | None:
    """The single option label a prediction chooses, or None (no option, or several)."""
    if not prediction or not options:
        return None
    pairs = option_labels(options)
    named = _labels_named(prediction, [label for label, _ in pairs])
    if not named:
        named = _options_by_text(prediction, pairs) or _options_by_items(prediction, pairs)
    return next(iter(named)) if len(named) == 1 else None


def mc_correct(prediction: str | None, options: Sequence[Any], answer_label: str) -> bool:
    """The prediction chooses exactly the option `answer_label` (by letter or by option text)."""
    return choice_of(prediction, options) == str(answer_label)


# --- per record -------------------------------------------------------------------------------------


def expected_answers(record: Mapping[str, Any]) -> list[str]:
    """Golds to score a record against. Perturbed (or external) unanswerable/inconsistent cases
    expect the task constant ("unknown"/"conflict") whatever the record's answers field holds."""
    kind = KEYWORD_TASKS.get(record.get("task", ""))
    if kind and record.get("variant") in ADVERSARIAL_VARIANTS:
        return [TASK_ANSWERS[kind]]
    answers = record.get("answers") or []
    return [answers] if isinstance(answers, str) else [str(a) for a in answers if a is not None]


def _entailed(nli: NLI, question: str, prediction: str, golds: Sequence[str]) -> bool:
    if not prediction.strip() or not golds:
        return False
    premise = f"{question} {prediction}".strip()
    return max(float(nli(premise, f"{question} {gold}".strip())) for gold in golds) >= ENTAILMENT_THRESHOLD


def score_record(record: Mapping[str, Any], *, nli: NLI | None = None) -> dict[str, Any]:
    """A copy of the record with scores added.

    em, f1 (token F1), correct (EM or token containment; a terse answer inside a longer gold counts
    when it is at least MIN_GOLD_COVERAGE of the gold's tokens, see metrics.qa.contains_answer);
    keyword_strict / keyword_nonstrict for perturbed or external unanswerable ("unknown") and
    inconsistent ("conflict") cases; mc_correct for counterfactual cases (right option letter, or the option's
    text; naming several options is wrong); entailment only when `nli` is given
    (premise "question + prediction", hypothesis "question + gold", prob >= 0.5, best gold).
    task_correct is the task's headline score: keyword_nonstrict on perturbed
    unanswerable/inconsistent cases (FaithEval's default), mc_correct on counterfactual cases,
    correct otherwise. Error records get None for every score.
    """
    out = dict(record)
    for name in SCORE_FIELDS:
        out[name] = None
    out["error"] = is_error(record)
    if out["error"]:
        return out
    prediction = record.get("prediction") or ""
    golds = expected_answers(record)
    task = record.get("task", "")
    out["em"] = exact_match(prediction, golds)
    out["f1"] = token_f1(prediction, golds)
    out["correct"] = is_correct(prediction, golds, MIN_GOLD_COVERAGE)
    out["task_correct"] = out["correct"]
    kind = KEYWORD_TASKS.get(task)
    keyword_case = kind is not None and record.get("variant") in ADVERSARIAL_VARIANTS
    if keyword_case:
        out["keyword_strict"] = keyword_match(prediction, kind, strict=True)
        out["keyword_nonstrict"] = keyword_match(prediction, kind, strict=False)
        out["task_correct"] = out["keyword_nonstrict"]
    if task == "counterfactual" and record.get("options") and record.get("answer_label") is not None:
        out["mc_correct"] = mc_correct(prediction, record["options"], record["answer_label"])
        out["task_correct"] = out["mc_correct"]
    if nli is not None and not keyword_case:
        out["entailment"] = _entailed(nli, str(record.get("question") or ""), prediction, golds)
    return out


def score_records(records: Iterable[Mapping[str, Any]], *, nli: NLI | None = None) -> list[dict[str, Any]]:
    return [score_record(r, nli=nli) for r in records]


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


def metric_applies(record: Mapping[str, Any], metric: str) -> bool:
    """Whether `metric` is defined for this kind of record (decides where an errored record counts)."""
    keyword_case = record.get("task") in KEYWORD_TASKS and record.get("variant") in ADVERSARIAL_VARIANTS
    if metric in ("keyword_strict", "keyword_nonstrict"):
        return keyword_case
    if metric == "mc_correct":
        return record.get("task") == "counterfactual"
    if metric == "entailment":
        return not keyword_case
    return True


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
        if len(records) > 1 and key[0] != ENRICH_TASK:
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
