"""Background sentences that a context-enriched copy drops because a reader would take them as part of
the answer's evidence, or as another answer (issue 30's invalid copies).

The copy sets the kept evidence first and the background after it (`programs.context_enrich`), so a
background sentence is read against the evidence before it. Four kinds are dropped:

- *leaning*: a sentence whose subject is the evidence's, not its own: the background's first sentence
  opening on a pronoun ("It was recorded ..."), or any sentence opening on "The <noun>" where the noun
  is one the evidence uses and the background has not introduced ("The season is set for release in
  2019" after "The sixth and final season ... premiered on January 4 , 2018"; "The single was recorded
  in Los Angeles by ... the Wrecking Crew" after Procol Harum's single);
- *priority*: for a question asking who or what was first (first, oldest, earliest, original), a sentence
  claiming priority for a name that is not the answer ("The oldest known recording of the song ... is
  by Clarence Ashley and Gwen Foster"; "The Satavahanas are among the earliest Indian rulers to issue
  their own coins");
- *work*: a sentence referring to a work — "the single / the lyrics / the song / the album / the show /
  the film", "its lyrics", "Springfield 's version" — before any background sentence kept ahead of it,
  or its own words ahead of the reference, named a work of its own (a quoted title or a work noun).
  Read after a song's evidence, another song's facts become this one's: "Springfield 's version ... her
  first album", "The single became a gold record ... from 1969", "The lyrics were written by ... the song
  was performed by Thurl Ravenscroft", "In a later interview , Hendrix commented that the lyrics
  represent ..." (issue 30, read invalid on held-out rows). Unlike *leaning* it applies anywhere in the
  sentence and whether or not the evidence uses the noun: the evidence is a work the reference can take
  ("the show" after Dr. Crusher's evidence reads as her series). A reference followed by its own name
  ("the film Pat Garrett", "the season of Game of Thrones") is not one;
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
# Nouns naming a work, whose definite reference a reader resolves to the work the evidence is about.
_WORK_NOUNS = (
    "song|songs|single|lyrics|lyric|record(?!\\s+(?:for|of)\\b)|recording|album|version|track|show|series|film|"
    "movie|episode|season|novel|book|musical|sitcom|soundtrack|poem|opera|video|sequel|remake"
)
_MODIFIER = r"(?!(?:a|an|the)\b)[a-z][\w-]*"
_WORK_REFERENCE = re.compile(
    r"(?:\b(?:[Tt]he|[Tt]his|[Tt]hat|[Tt]hese|[Ii]ts)|\b[A-Z][\w.-]*\s?'s)"
    rf"(?:\s+(?:{_MODIFIER}|'s))??(?:\s+{_MODIFIER})??"
    rf"\s+(?:{_WORK_NOUNS})\b(?!\s+(?:of\s+)?(?:[A-Z]|``|\"|“|'[A-Z]))"
)
_PREDICATE_BEFORE = re.compile(r"\b(?:is|was|are|were|be|been|as|became|becomes|remains)\s*$", re.IGNORECASE)
_WORK_NAMED = re.compile(rf"``|\"|“|'[A-Z]|\b(?:{_WORK_NOUNS})\b", re.IGNORECASE)
_DEFINITE_OPENING = re.compile(r"^\W*The\s+([a-z][\w-]*)")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_NAME = re.compile(r"[A-Z][\w'’-]*")
_NOT_NAMES = frozenset(
    "the a an in on at of by for with from as and but or this that these those it its he she his "
    "her they their there".split()
)


# A break after an initial or a title's abbreviation is not a sentence's end: dropping "The lyrics were
# written by Theodor `` Dr." left "Seuss '' Geisel , ... the song was performed by" to be read alone.
_ABBREVIATION_END = re.compile(
    r"(?:\b[A-Z]|\b(?:No|Nos|Dr|Mr|Mrs|Ms|St|Ste|Jr|Sr|Mt|Ft|vs|Inc|Co|Ltd|Gen|Col|Lt|Sgt|Rev|Prof))\.$"
)


def _sentences(text: str) -> list[str]:
    joined: list[str] = []
    for piece in SENTENCE_BREAK.split(text):
        if not piece.strip():
            continue
        if joined and _ABBREVIATION_END.search(joined[-1].rstrip()):
            joined[-1] = f"{joined[-1]} {piece}"
        else:
            joined.append(piece)
    return joined


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


def refers_to_unintroduced_work(sentence: str, before: list[str]) -> bool:
    if any(_WORK_NAMED.search(s) for s in before):
        return False
    for reference in _WORK_REFERENCE.finditer(sentence):
        if _WORK_NAMED.search(sentence[: reference.start()]):
            return False
        # A predicate names what its subject is ("Slasher was the first original series"), it does not refer.
        if not _PREDICATE_BEFORE.search(sentence[: reference.start()]):
            return True
    return False


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
    """(rule, sentence) for every background sentence to drop; rules: leaning, work, priority, date."""
    drops, kept = [], []
    for sentence in _sentences(background):
        rule = (
            "leaning"
            if leans_on_evidence(sentence, kept, evidence, first=not kept)
            else "work"
            if refers_to_unintroduced_work(sentence, kept)
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
