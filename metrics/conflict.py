"""Knowledge conflict (ReEval's argument): does a model that knows an answer keep it when the evidence
states another?

Two pure pieces: `knows` decides whether a closed-book answer counts as knowing the gold (stricter
than seed selection's lenient `is_correct`, whose prediction-inside-gold direction would let "Party"
know "the Democratic Party"); `classify` puts an answer to perturbed evidence in one of three
classes — the answer the evidence states, the target's own memory, or something else — and
`conflict_table` turns classified answers into shares with 95% intervals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from .intervals import wilson_interval
from .normalize import answer_tokens, normalize_answer
from .qa import _aliases, _contains_run
from .surface_forms import mentions_in_any_form

Label = Literal["evidence", "memory", "other"]
LABELS: tuple[str, ...] = ("evidence", "memory", "other")
# A prediction inside a longer gold counts only when it covers more than this share of the gold's tokens:
# "New York" for "New York City" knows it; "Party" for "the Democratic Party" does not, and neither does
# "Washington" for "George Washington" (a known answer that is a sliver of the gold would let a guess in).
MIN_COVER = 0.5


def matches(prediction: str | None, answers: str | Iterable[str] | None) -> bool:
    """The prediction gives one of the answers: equal after normalisation, or the answer appears in it
    in any surface form (dates and numbers spelt otherwise), or it is most of a longer answer."""
    pred = answer_tokens(prediction)
    if not pred:
        return False
    for answer in _aliases(answers):
        gold = answer_tokens(answer)
        if not gold:
            continue
        if pred == gold or _contains_run(pred, gold) or mentions_in_any_form(str(prediction), answer):
            return True
        if _contains_run(gold, pred) and len(pred) > MIN_COVER * len(gold):
            return True
    return False


def knows(closed_answer: str | None, golds: Sequence[str], question: str = "") -> bool:
    """A closed-book answer that counts as knowing the gold. A gold the question itself states ("name a movie
    with dinosaurs": Dinosaurs; "a 72 oz steak": $72) is not knowledge: repeating the question gives it."""
    return matches(closed_answer, golds) and not matches(question, golds)


# Closed-book replies that say the model does not know: no memory to keep.
ABSTENTIONS = frozenset(
    {
        "unknown",
        "i dont know",
        "i do not know",
        "no idea",
        "not sure",
        "none",
        "conflict",
        "no answer",
        "cannot answer",
        "not known",
    }
)


def is_abstention(answer: str | None) -> bool:
    return normalize_answer(answer) in ABSTENTIONS


def memory_answers(closed_answer: str | None, golds: Sequence[str], known: bool) -> list[str]:
    """What the target would say from memory: its closed-book answer (unless it declined to answer), and
    the gold's aliases when that answer was the gold (a memorised answer may come back in any spelling)."""
    out = (
        [closed_answer]
        if closed_answer and normalize_answer(closed_answer) and not is_abstention(closed_answer)
        else []
    )
    return out + (list(golds) if known else [])


def memory_agrees(evidence_answers: Sequence[str], memory: Sequence[str]) -> bool:
    """The target's memory already says what the evidence says (a wrong closed-book guess equal to the swapped
    answer): there is nothing to choose between. An empty memory agrees with nothing."""
    return any(matches(m, evidence_answers) or matches(e, [m]) for m in memory for e in evidence_answers)


# Words that choose no side between two answers ("in" of "in the liver"); the question's own words are
# dropped too, per call.
_FUNCTION = frozenset("in on at of to for by from with into during and or its it is was were".split())


def _distinctive(text: str | None, question: str = "") -> set[str]:
    return set(answer_tokens(text)) - _FUNCTION - set(answer_tokens(question))


def _partial_side(prediction: str | None, evidence_answers: Sequence[str], memory: Sequence[str], question: str):
    """The side whose answers hold every distinctive word of a short answer the other side's answers share
    none of: "liver" for "in the liver" against "in the bone marrow", "sensorimotor" for "the sensorimotor
    stage" against "the preoperational stage". Words of the question choose nothing ("anemia" asked about
    "a form of anemia" is neither "scurvy" nor "pernicious anemia")."""
    words = _distinctive(prediction, question)
    if not words:
        return None
    evidence = set().union(*(_distinctive(a) for a in evidence_answers)) if evidence_answers else set()
    remembered = set().union(*(_distinctive(a) for a in memory)) if memory else set()
    if words <= evidence and not words & remembered:
        return "evidence"
    if words <= remembered and not words & evidence:
        return "memory"
    return None


def classify(
    prediction: str | None, evidence_answers: Sequence[str], memory: Sequence[str], question: str = ""
) -> Label:
    """evidence: gives what the perturbed evidence states and not the memorised answer; memory: gives the
    target's own closed-book answer and not the evidence's; other: neither, or both at once (a hedge
    such as "Paris, not London" is no choice). An answer that matches neither in full is placed by its
    distinctive words when only one side holds them (`_partial_side`)."""
    evidence = matches(prediction, evidence_answers)
    remembered = matches(prediction, memory)
    if evidence and not remembered:
        return "evidence"
    if remembered and not evidence:
        return "memory"
    if not evidence and not remembered:
        return _partial_side(prediction, evidence_answers, memory, question) or "other"
    return "other"


def conflict_table(
    records: Iterable[Mapping[str, Any]], by: Sequence[str] = ("target", "known", "setting"), alpha: float = 0.05
) -> list[dict[str, Any]]:
    """One row per group: n and, per label, the share with a Wilson interval. Records carry `label`
    (errors and cases without a conflict carry none and are counted apart)."""
    groups: dict[tuple, dict[str, Any]] = {}
    for record in records:
        key = tuple(record.get(k) for k in by)
        row = groups.setdefault(
            key,
            {
                **dict(zip(by, key, strict=True)),
                "n": 0,
                "errors": 0,
                "no_conflict": 0,
                **{label: 0 for label in LABELS},
            },
        )
        label = record.get("label")
        if label in LABELS:
            row["n"] += 1
            row[label] += 1
        elif label == "no_conflict":
            row["no_conflict"] += 1
        else:
            row["errors"] += 1
    out = []
    for row in groups.values():
        for label in LABELS:
            low, high = wilson_interval(row[label], row["n"], alpha)
            row[f"{label}_share"] = row[label] / row["n"] if row["n"] else float("nan")
            row[f"{label}_low"], row[f"{label}_high"] = low, high
        out.append(row)
    return sorted(out, key=lambda r: tuple(str(r[k]) for k in by))
