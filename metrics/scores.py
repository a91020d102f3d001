"""The scores of an evaluation record, one declaration each: its name, the records it applies to, how it is
computed and how the report shows it. `score_record` adds every score to a record; the report's tables and
labels, the MLflow metric names and where an errored record counts all read `SCORES`, so adding a score is
one entry here.

An *evaluation record* is one target model's answer to one case (original or perturbed) under one prompt
setting and decoding. A record whose ``status`` starts with ``error:`` gets no scores (None); a score that does
not apply to a record is None too.

Which scores apply is read from the record's ``task_answer``: the kind of answer its task's perturbed cases
expect, "span" (the case's answers), "choice" (an option letter) or a verdict keyword kind ("unknown",
"conflict"). The caller sets it from what it knows of the task; a record without one is scored as a span.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .choices import mc_correct
from .keywords import PHRASES, TASK_ANSWERS, keyword_match
from .qa import MIN_GOLD_COVERAGE, exact_match, is_correct, token_f1

NLI = Callable[[str, str], float]

# Variants that hold a case's adversarial evidence: a generated perturbation, or a benchmark file's
# row evaluated as given (no original to pair it with).
ADVERSARIAL_VARIANTS: tuple[str, ...] = ("perturbed", "external")
ENTAILMENT_THRESHOLD = 0.5


def is_error(record: Mapping[str, Any]) -> bool:
    status = record.get("status")
    return isinstance(status, str) and status.startswith("error:")


def error_kind(record: Mapping[str, Any]) -> str | None:
    """'parse' for status 'error:parse'; None for a record that did not fail."""
    if not is_error(record):
        return None
    return record["status"].split(":", 1)[1] or "unknown"


def task_answer(record: Mapping[str, Any]) -> str:
    """What the record's task expects of a perturbed case: "span", "choice" or a keyword kind."""
    return record.get("task_answer") or "span"


def keyword_case(record: Mapping[str, Any]) -> bool:
    """A verdict task's adversarial case: its right answer is the task's keyword ("unknown", "conflict")."""
    return task_answer(record) in PHRASES and record.get("variant") in ADVERSARIAL_VARIANTS


def expected_answers(record: Mapping[str, Any]) -> list[str]:
    """Golds to score a record against. A verdict task's perturbed (or external) case expects the task
    constant ("unknown"/"conflict") whatever the record's answers field holds."""
    if keyword_case(record):
        return [TASK_ANSWERS[task_answer(record)]]
    answers = record.get("answers") or []
    return [answers] if isinstance(answers, str) else [str(a) for a in answers if a is not None]


@dataclass(frozen=True)
class Answer:
    """What a score reads: the record, its prediction and golds, the scores before it, the NLI if given."""

    record: Mapping[str, Any]
    prediction: str
    golds: list[str]
    scores: Mapping[str, Any]
    nli: NLI | None


@dataclass(frozen=True)
class Score:
    name: str
    label: str  # how the report names it
    value: Callable[[Answer], Any]  # None: not scored on this record
    applies: Callable[[Mapping[str, Any]], bool] = lambda record: True  # where an errored record counts against it


def _keyword(strict: bool) -> Callable[[Answer], bool]:
    return lambda a: keyword_match(a.prediction, task_answer(a.record), strict=strict)


def _mc(a: Answer) -> bool | None:
    record = a.record
    if not record.get("options") or record.get("answer_label") is None:
        return None
    return mc_correct(a.prediction, record["options"], record["answer_label"])


def _entailment(a: Answer) -> bool | None:
    """Premise "question + prediction", hypothesis "question + gold", probability >= 0.5 for the best gold."""
    if a.nli is None:
        return None
    if not a.prediction.strip() or not a.golds:
        return False
    question = str(a.record.get("question") or "")
    premise = f"{question} {a.prediction}".strip()
    return max(float(a.nli(premise, f"{question} {gold}".strip())) for gold in a.golds) >= ENTAILMENT_THRESHOLD


def _task_correct(a: Answer) -> Any:
    """The task's headline score: keyword_nonstrict on a verdict task's adversarial case (FaithEval's default),
    mc_correct on a multiple-choice task's case, correct otherwise."""
    for headline in ("mc_correct", "keyword_nonstrict"):
        if a.scores.get(headline) is not None:
            return a.scores[headline]
    return a.scores["correct"]


def _on_choice(record: Mapping[str, Any]) -> bool:
    return task_answer(record) == "choice"


# In the order the report shows them; a score may read those above it.
SCORES: tuple[Score, ...] = (
    Score("em", "exact match", lambda a: exact_match(a.prediction, a.golds)),
    Score("f1", "token F1", lambda a: token_f1(a.prediction, a.golds)),
    # EM or token containment: a terse answer inside a longer gold counts when it is at least MIN_GOLD_COVERAGE
    # of the gold's tokens (metrics.qa.contains_answer).
    Score(
        "correct",
        "correct (EM or containment; a shorter answer must be half the gold)",
        lambda a: is_correct(a.prediction, a.golds, MIN_GOLD_COVERAGE),
    ),
    Score("keyword_strict", "keyword (strict)", _keyword(strict=True), keyword_case),
    Score("keyword_nonstrict", "keyword (non-strict)", _keyword(strict=False), keyword_case),
    # The right option's letter or text; naming several options is wrong.
    Score("mc_correct", "multiple-choice", _mc, _on_choice),
    Score("entailment", "entailment", _entailment, lambda record: not keyword_case(record)),
    Score("task_correct", "task accuracy", _task_correct),
)
SCORE_NAMES: tuple[str, ...] = tuple(s.name for s in SCORES)
LABELS: dict[str, str] = {s.name: s.label for s in SCORES}
_BY_NAME: dict[str, Score] = {s.name: s for s in SCORES}


def score_record(record: Mapping[str, Any], *, nli: NLI | None = None) -> dict[str, Any]:
    """A copy of the record with every score added (None where it is not scored) and `error`."""
    out = dict(record)
    out.update(dict.fromkeys(SCORE_NAMES))
    out["error"] = is_error(record)
    if out["error"]:
        return out
    prediction = record.get("prediction") or ""
    golds = expected_answers(record)
    scores: dict[str, Any] = {}
    for score in SCORES:
        if score.applies(record):
            scores[score.name] = score.value(Answer(record, prediction, golds, scores, nli))
    out.update(scores)
    return out


def score_records(records: Iterable[Mapping[str, Any]], *, nli: NLI | None = None) -> list[dict[str, Any]]:
    return [score_record(r, nli=nli) for r in records]


def metric_applies(record: Mapping[str, Any], metric: str) -> bool:
    """Whether `metric` is defined for this kind of record (decides where an errored record counts)."""
    score = _BY_NAME.get(metric)
    return score is None or score.applies(record)
