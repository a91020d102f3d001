"""Cheap string checks on generated cases, run before any judge LM.

Each check is a pure function returning bool, so a rejected case can name the exact check
that failed (`rejected:<check>`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from .normalize import answer_tokens
from .qa import _contains_run

_DIGITS = re.compile(r"\d")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


def mentions(text: str, answer: str) -> bool:
    """The normalised answer occurs in the normalised text as whole tokens."""
    return _contains_run(answer_tokens(text), answer_tokens(answer))


def mentions_any(text: str, answers: Iterable[str]) -> bool:
    tokens = answer_tokens(text)
    return any(_contains_run(tokens, answer_tokens(a)) for a in answers)


def same_shape(gold: str, proposal: str) -> bool:
    """A date for a date, a number for a number: digits on one side only is a visible type change."""
    return bool(_DIGITS.search(gold)) == bool(_DIGITS.search(proposal))


def similarity_outside(original: str, edited: str, removed: Iterable[str], added: Iterable[str]) -> float:
    """How much of the text besides the swapped spans survived (1.0 = untouched)."""
    a, b = original, edited
    for span in removed:
        a = re.sub(re.escape(span), " ", a, flags=re.IGNORECASE)
    for span in added:
        b = re.sub(re.escape(span), " ", b, flags=re.IGNORECASE)
    return difflib.SequenceMatcher(None, " ".join(a.split()), " ".join(b.split()), autojunk=False).ratio()


def years(text: str) -> set[str]:
    return set(_YEAR.findall(text))
