"""Background sentences that a context-enriched copy drops because a reader would take them as part of
the answer's evidence, or as another answer (issue 30's invalid copies).

The copy sets the kept evidence first and the background after it (`programs.context_enrich`), so a
background sentence is read against the evidence before it. Three kinds are dropped:

- *leaning*: a sentence whose subject is the evidence's, not its own: the background's first sentence
  opening on a pronoun ("It was recorded ..."), or any sentence opening on "The <noun>" where the noun
  is one the evidence uses and the background has not introduced ("The season is set for release in
  2019" after "The sixth and final season ... premiered on January 4 , 2018"; "The single was recorded
  in Los Angeles by ... the Wrecking Crew" after Procol Harum's single);
- *priority*: for a question asking who or what was first (first, oldest, earliest, original), a sentence
  claiming priority for a name that is not the answer ("The oldest known recording of the song ... is
  by Clarence Ashley and Gwen Foster"; "The Satavahanas are among the earliest Indian rulers to issue
  their own coins");
- *date*: a sentence naming a question name of the evidence ("Nashville") with a year the evidence's
  own dates do not hold, when the evidence dates something.

Not caught: a sentence with no subject of its own that does not open on a definite description
("Instrumental backing was provided by session musicians known as the Wrecking Crew").
"""

from __future__ import annotations

import re

from .checks import SENTENCE_BREAK, _stem, content_stems, mentions_any_form
from .evidence_checks import opens_with_pronoun

_PRIORITY = re.compile(r"\b(first|oldest|earliest|original|originally|pioneer\w*|invent\w*)\b", re.IGNORECASE)
_ASKS_PRIORITY = re.compile(r"\b(first|oldest|earliest|original|originally)\b", re.IGNORECASE)
_DEFINITE_OPENING = re.compile(r"^\W*The\s+([a-z][\w-]*)")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_NAME = re.compile(r"[A-Z][\w'’-]*")
_NOT_NAMES = frozenset(
    "the a an in on at of by for with from as and but or this that these those it its he she his "
    "her they their there".split()
)


def _sentences(text: str) -> list[str]:
    return [s for s in SENTENCE_BREAK.split(text) if s.strip()]


def _names(sentence: str) -> list[str]:
    """Capitalised words past the sentence's first word, and the first when "The" stands before it."""
    words = list(_NAME.finditer(sentence))
    lead = sentence.lstrip("`'\" ")
    skip_first = bool(words) and sentence.find(words[0].group()) == len(sentence) - len(lead)
    found = [m.group() for i, m in enumerate(words) if not (i == 0 and skip_first)]
    return [w for w in found if w.lower() not in _NOT_NAMES]


def leans_on_evidence(sentence: str, before: list[str], evidence: str, first: bool) -> bool:
    if first and opens_with_pronoun(sentence):
        return True
    opening = _DEFINITE_OPENING.match(sentence)
    if not opening:
        return False
    noun = _stem(opening.group(1).lower())
    introduced = set().union(*(content_stems(s) for s in before)) if before else set()
    return noun in content_stems(evidence) and noun not in introduced


def claims_priority(sentence: str, question: str, answers: list[str]) -> bool:
    if not _ASKS_PRIORITY.search(question) or not _PRIORITY.search(sentence) or mentions_any_form(sentence, answers):
        return False
    own = content_stems(question) | {w for a in answers for w in content_stems(a)}
    return any(_stem(name.lower()) not in own for name in _names(sentence))


def contradicts_dates(sentence: str, evidence: str, names: list[frozenset[str]]) -> bool:
    held = set(_YEAR.findall(evidence))
    if not held or not names:
        return False
    stems = content_stems(sentence)
    return any(name <= stems for name in names) and bool(set(_YEAR.findall(sentence)) - held)


def background_drops(
    background: str, evidence: str, question: str, answers: list[str], names: list[frozenset[str]] = ()
) -> list[tuple[str, str]]:
    """(rule, sentence) for every background sentence to drop; rules: leaning, priority, date."""
    drops, kept = [], []
    for sentence in _sentences(background):
        rule = (
            "leaning"
            if leans_on_evidence(sentence, kept, evidence, first=not kept)
            else "priority"
            if claims_priority(sentence, question, answers)
            else "date"
            if contradicts_dates(sentence, evidence, list(names))
            else None
        )
        if rule:
            drops.append((rule, sentence))
        else:
            kept.append(sentence)
    return drops


def without(background: str, drops: list[tuple[str, str]]) -> str:
    dropped = {s for _, s in drops}
    return " ".join(s.strip() for s in _sentences(background) if s not in dropped)
