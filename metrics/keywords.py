"""FaithEval's keyword scoring for the unanswerable and inconsistent tasks.

On these tasks the right answer is not a span but a verdict ("unknown" / "conflict"). FaithEval
scores it two ways: strict (the answer is exactly the task's constant) and non-strict (the
answer mentions any of a list of phrases). The phrase lists are kept as data so a report can
print exactly what was matched against.

Non-strict matching is on whole normalised tokens, not raw substrings: "not" must match
"it is not stated" but not "nothing" or "knot". A consequence worth knowing: normalisation
drops apostrophes, so "isn't" becomes "isnt" and does not match "not"; "cannot" does not either.
"""

from typing import Literal

from .normalize import answer_tokens, normalize_answer

KeywordKind = Literal["unknown", "conflict"]

UNKNOWN_PHRASES: tuple[str, ...] = ("unknown", "no answer", "no information", "not", "unclear")
CONFLICT_PHRASES: tuple[str, ...] = (
    "conflict",
    "conflicting",
    "disagreement",
    "inconsistent",
    "contradictory",
    "contradiction",
    "inconsistency",
    "two answers",
    "2 answers",
    "multiple answers",
)

# The answer the task instruction tells the model to give; strict mode accepts only this.
TASK_ANSWERS: dict[str, str] = {"unknown": "unknown", "conflict": "conflict"}
PHRASES: dict[str, tuple[str, ...]] = {"unknown": UNKNOWN_PHRASES, "conflict": CONFLICT_PHRASES}


def _check_kind(kind: str) -> None:
    if kind not in PHRASES:
        raise ValueError(f"unknown keyword kind {kind!r}; expected one of {sorted(PHRASES)}")


def _has_run(tokens: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return n > 0 and any(tokens[i : i + n] == phrase for i in range(len(tokens) - n + 1))


def keyword_match(prediction: str | None, kind: KeywordKind, strict: bool) -> bool:
    """Does the prediction give the task's verdict?

    strict: the normalised prediction equals the task constant ("Unknown." passes,
    "The answer is unknown." does not). Non-strict: any phrase of the kind's list occurs as
    whole word(s) in the normalised prediction.
    """
    _check_kind(kind)
    if strict:
        return normalize_answer(prediction) == TASK_ANSWERS[kind]
    tokens = answer_tokens(prediction)
    # Phrases go through the same normalisation so a phrase with an article or punctuation
    # could never silently fail to match.
    return any(_has_run(tokens, answer_tokens(p)) for p in PHRASES[kind])
