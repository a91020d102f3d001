"""Cues: phrases left in a swapped passage that the shipped Wikipedia pool ties to the old answer.

A swap replaces the answer and leaves the rest; what is left may still identify the old answer to a reader
who knows the subject ("driving the Marmon Wasp" beside a swapped winner of the first Indianapolis 500, life
dates beside a swapped person). Such a case is valid as a text but a harder conflict than one without, so it
is recorded. A phrase is a cue when, in pool passages other than the seed's own article, it stands mostly
beside the old answer (at least `TIE` of the passages holding it name the old answer, and at least one does)
and never beside the new answer. Phrases are capitalised word runs, quoted titles and full dates.
"""

from __future__ import annotations

import bisect
import re

from experiments.known_names import pool_text

TIE = 0.5
# A pool passage sharing this many of the seed passage's word 5-grams is the seed's own article (or a copy):
# whatever it ties to the old answer, the passage itself says.
OWN_SHARE = 0.2
MAX_PHRASES = 40
# A phrase in more pool passages than this is too common to identify anything ("United States").
MAX_HOLDING = 200
_CAPITALISED = re.compile(r"(?<![\w'])(?:[A-Z][\w'’.-]*\s+){0,4}[A-Z][\w'’-]*[\w]")
_QUOTED = re.compile(r"(?:``|\")\s*([^`\"]{3,60}?)\s*(?:''|\")")
_FULL_DATE = re.compile(
    r"\b(?:\d{1,2}\s+)?(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"(?:\s+\d{1,2})?\s*,?\s*\d{4}\b"
)
_STOP = frozenset("The A An In On At Of For And But It He She They His Her Its This That These Those".split())


def _passages_with(phrase: str) -> dict[int, tuple[int, int]]:
    """Pool passages holding the phrase as whole words, by index, with each passage's bounds."""
    text, starts = pool_text()
    found = {}
    for m in re.finditer(rf"(?<!\w){re.escape(phrase)}(?!\w)", text):
        i = bisect.bisect_right(starts, m.start()) - 1
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(text)
        found[i] = (starts[i], end)
    return found


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + 5]) for i in range(len(words) - 4)}


def phrases(text: str) -> list[str]:
    found = [m.group(0) for m in _CAPITALISED.finditer(text)]
    found += [m.group(1) for m in _QUOTED.finditer(text)]
    found += [m.group(0) for m in _FULL_DATE.finditer(text)]
    out = []
    for phrase in found:
        phrase = " ".join(phrase.split())
        if phrase in _STOP or len(phrase) < 4 or phrase in out:
            continue
        out.append(phrase)
    return out[:MAX_PHRASES]


def cues(question: str, original: str, edited: str, olds: list[str], new: str) -> list[str]:
    """Phrases of the edited passage the pool ties to an old answer and not to the new one."""
    text, _ = pool_text()
    own = _shingles(original)
    mentions_old = [re.compile(rf"(?<!\w){re.escape(o)}(?!\w)", re.IGNORECASE) for o in olds if o.strip()]
    mentions_new = re.compile(rf"(?<!\w){re.escape(new)}(?!\w)", re.IGNORECASE)
    found = []
    for phrase in phrases(edited):
        low = phrase.lower()
        if low in question.lower() or low in new.lower() or new.lower() in low:
            continue
        holding, with_old = 0, 0
        spans = _passages_with(phrase)
        if len(spans) > MAX_HOLDING:
            continue
        for start, end in spans.values():
            passage = text[start:end]
            shingles = _shingles(passage)
            if own and shingles and len(shingles & own) >= OWN_SHARE * min(len(shingles), len(own)):
                continue
            if mentions_new.search(passage):
                holding = -1
                break
            holding += 1
            with_old += any(p.search(passage) for p in mentions_old)
        if holding > 0 and with_old >= 1 and with_old >= TIE * holding:
            found.append(phrase)
    return found
