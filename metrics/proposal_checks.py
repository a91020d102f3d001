"""Is a proposed wrong answer a different answer to the question at all?

Read blind on held-out NQ swaps, two kinds of proposal were no swap:

- a translation or transliteration of the gold: "The Parliament of Brittany" for "The Parlement de
  Bretagne" is the same building, so the passage still states the gold. Caught as word-by-word cognates
  (`translates`), and as a proposal written in a script no gold uses ("武士" for "the samurai");
- an answer outside the question's either-or: "aguirre the wrath of god german or english" asks which of
  two; "Spain" answers neither. The other alternative is the only wrong answer the question allows
  (`alternatives`), and it is no giveaway although the question states it.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable

from .normalize import answer_tokens

_FUNCTION = frozenset("a an the of and or in on at to for by with from de del della di da du des la le".split())
# A cognate: the same first letter and most letters in order ("parlement" / "parliament" 0.84); a
# translation's other words are looser ("bretagne" / "brittany" 0.63) but still share their first letter.
COGNATE = 0.8
LOOSE = 0.6


def _fold(word: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", word.lower()) if ch.isalnum())


def _content(answer: str) -> list[str]:
    return [w for w in (_fold(t) for t in re.findall(r"[^\W\d_][\w'’-]*", answer)) if w and w not in _FUNCTION]


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() if a[:1] == b[:1] else 0.0


def _scripts(text: str) -> set[str]:
    """The writing systems of a text's letters: LATIN, CJK, CYRILLIC, HIRAGANA, ..."""
    return {unicodedata.name(ch, "?").split()[0] for ch in text if ch.isalpha()}


def translates(proposal: str, golds: Iterable[str]) -> str | None:
    """The gold a proposal translates, or None. Word by word: both have two or more content words, each
    of the proposal's pairs with its own gold word (same first letter, a similar spelling), and at least
    one pair is a close cognate that is not the same word. One word alone is left out: "Austria" and
    "Australia" are as alike as "Roma" and "Rome". Or whole: the proposal is written in a script no gold
    uses ("武士" for "the samurai"), which for a question asked in the gold's script is its name there."""
    golds = list(golds)
    own_scripts = _scripts(proposal)
    for gold in golds:
        if own_scripts and _scripts(gold) and not own_scripts & _scripts(gold):
            return gold
    own = _content(proposal)
    if len(own) < 2:
        return None
    for gold in golds:
        theirs = _content(gold)
        if len(theirs) < 2:
            continue
        free, close = list(theirs), False
        for word in own:
            best = max(free, key=lambda g: (g == word, _ratio(word, g)))
            score = 1.0 if best == word else _ratio(word, best)
            if score < LOOSE:
                break
            close |= best != word and score >= COGNATE
            free.remove(best)
            if not free and word is not own[-1]:
                break
        else:
            if close:
                return gold
    return None


def _runs(tokens: list[str], run: list[str]) -> list[int]:
    return [i for i in range(len(tokens) - len(run) + 1) if run and tokens[i : i + len(run)] == run]


def truncated(proposal: str) -> bool:
    """A proposal cut off before its noun: "belief of" for "cognitive bias"."""
    words = proposal.split()
    return len(words) > 1 and words[-1].casefold() in _FUNCTION


def spells_part(proposal: str, golds: Iterable[str]) -> bool:
    """A word of the proposal holds a distinctive word of a gold inside it: "Ratnathee" for "The Bharat Ratna"."""
    inside = [_fold(w) for w in proposal.split()]
    for gold in golds:
        for word in _content(gold):
            if len(word) >= 4 and any(word in w and word != w for w in inside):
                return True
    return False


def either_or(question: str, golds: Iterable[str]) -> tuple[list[str], str] | None:
    """The question's words on the other side of "or" from a gold it offers, and the side ("after": the
    gold stands before "or", the alternative runs to the end of the question; "before": the gold stands
    after "or", the alternative ends at it). None when no gold stands next to an "or"."""
    tokens = answer_tokens(question)
    for gold in golds:
        run = answer_tokens(gold)
        for i in _runs(tokens, run):
            end = i + len(run)
            if end < len(tokens) and tokens[end] == "or" and end + 1 < len(tokens):
                return tokens[end + 1 :], "after"
            if i > 1 and tokens[i - 1] == "or":
                return tokens[: i - 1], "before"
    return None


def is_alternative(proposal: str, question: str, golds: Iterable[str]) -> bool:
    """The proposal is the question's other alternative: the words right after "or" when the gold stands
    before it, the words right before "or" when the gold stands after it."""
    found = either_or(question, golds)
    run = answer_tokens(proposal)
    if found is None or not run:
        return False
    other, side = found
    return other[: len(run)] == run if side == "after" else other[-len(run) :] == run


def other_alternative(question: str, golds: list[str]) -> str | None:
    """The other alternative as an answer: the rest of the question after "or", or as many words before
    "or" as the gold has; capitalised like the gold (NQ questions are lower case)."""
    found = either_or(question, golds)
    if found is None:
        return None
    other, side = found
    words = other if side == "after" else other[-len(answer_tokens(golds[0])) :]
    if not words or len(words) > len(answer_tokens(golds[0])) + 2:
        return None
    # The question's own spelling of those words (answer_tokens drops case and punctuation).
    raw = re.findall(r"[\w'’-]+", question)
    for i in range(len(raw) - len(words) + 1):
        if [answer_tokens(w)[0] if answer_tokens(w) else "" for w in raw[i : i + len(words)]] == words:
            words = raw[i : i + len(words)]
    if all(w[:1].isupper() for w in golds[0].split() if w.lower() not in _FUNCTION):
        words = [w if w.lower() in _FUNCTION else w[:1].upper() + w[1:] for w in words]
    return " ".join(words)
