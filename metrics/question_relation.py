"""The words of a question that qualify its answer — which one of several candidates the gold is — and
whether a kept run of evidence still holds them.

"who was longest serving prime minister of india" is answered by "Serving until his death ... Nehru
remains India 's longest - serving prime minister", not by "The first was Jawaharlal Nehru", though
both hold the gold; "when did toronto maple leafs last win the stanley cup" by "The Maple Leafs ended up
winning the series ... this is Toronto 's most recent Stanley Cup championship", not by "The 1967 Stanley
Cup Finals was ... between the Montreal Canadiens and the Toronto Maple Leafs" (read invalid
on held-out rows). A qualifier is a superlative ("longest", "most points"), an ordinal or a word of
sequence ("first", "second", "last", "latest", "next", "original"), together with the question word it
qualifies ("serving", "win", "points"). Words of one sense count as one: "last" is held by "most recent",
"latest" or "final"; "first" by "earliest" or "original"; an inflection by its stem ("win" by "winning").
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .checks import _FUNCTION_WORDS, _stem

_WORD = re.compile(r"[a-z][a-z'’]*|\d+(?:st|nd|rd|th)")
# Words of sequence or rank that pick one candidate out of several, and the words that say the same.
_SAME_SENSE = (
    frozenset({"last", "latest", "recent", "final", "lately"}),
    frozenset({"first", "earliest", "original", "originally", "firstly"}),
    frozenset({"next", "following", "subsequent"}),
    frozenset({"previous", "preceding", "prior"}),
)
_ORDINALS = frozenset(
    "second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth penultimate only "
    "best worst most least".split()
)
# Words ending in "est" that are not superlatives.
_NOT_SUPERLATIVE = frozenset(
    "west midwest southwest northwest forest interest contest protest request quest conquest guest test rest "
    "nest chest honest modest harvest digest suggest everest budapest pest priest arrest invest manifest "
    "behest bequest inquest unrest crest zest vest attest detest infest molest wrest".split()
)
# Too general to ask of the kept evidence when they follow a qualifier ("for the first time").
_VAGUE = frozenset("time times one ones person people thing things year years".split())


def _words(text: str) -> list[str]:
    return [w.replace("’", "'").rstrip("'") for w in _WORD.findall(text.lower())]


def _qualifier(word: str) -> bool:
    if word in _ORDINALS or any(word in sense for sense in _SAME_SENSE) or re.fullmatch(r"\d+(st|nd|rd|th)", word):
        return True
    return len(word) > 5 and word.endswith("est") and word not in _NOT_SUPERLATIVE


_NUMBERED = dict(
    zip(
        "1st 2nd 3rd 4th 5th 6th 7th 8th 9th 10th 11th 12th".split(),
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split(),
        strict=True,
    )
)


class Relation(NamedTuple):
    """A question word and what holds it: these words as they stand (a qualifier: "Finals" does not hold
    "final"), or a word of these stems (the word a qualifier qualifies: "winning" holds "win")."""

    words: frozenset[str]
    stems: frozenset[str] = frozenset()


def _qualifier_forms(word: str) -> Relation:
    spelled = _NUMBERED.get(word, word)
    for sense in _SAME_SENSE:
        if spelled in sense:
            return Relation(sense | ({"1st"} if spelled == "first" else set()))
    numbered = {n for n, w in _NUMBERED.items() if w == spelled}
    return Relation(frozenset({spelled, *numbered}))


def relation_words(question: str) -> list[Relation]:
    """Each qualifier of the question and the content word right after it; "most", "least" and "only"
    count only through the word they qualify ("most recent", "most points")."""
    words = _words(question)
    found: list[Relation] = []
    for i, word in enumerate(words):
        if not _qualifier(word):
            continue
        if word not in {"most", "least", "only"}:
            found.append(_qualifier_forms(word))
        following = words[i + 1] if i + 1 < len(words) else ""
        if not following or following in _FUNCTION_WORDS or following in _VAGUE:
            continue
        if not _qualifier(following):
            found.append(Relation(frozenset(), frozenset({_stem(following)})))
        elif word in {"most", "least"}:
            found.append(_qualifier_forms(following))
    return list(dict.fromkeys(found))


def holds(text: str, relation: Relation) -> bool:
    words = set(_words(text))
    return bool(relation.words & words) or bool(relation.stems & {_stem(w) for w in words})


def missing_relation(span: str, required: list[Relation]) -> list[Relation]:
    return [relation for relation in required if not holds(span, relation)]
