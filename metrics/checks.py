"""Cheap string checks on generated cases, run before any judge LM.

Each check is a pure function returning bool, so a rejected case can name the exact check
that failed (`rejected:<check>`).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable

from .normalize import answer_tokens, normalize_answer
from .qa import _contains_run
from .surface_forms import (
    answer_kind,
    date_parts,
    distinctive_word,
    find_forms,
    mentions_in_any_form,
    name_part_left,
    name_words,
)

_DIGITS = re.compile(r"\d")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


def mentions(text: str, answer: str) -> bool:
    """The normalised answer occurs in the normalised text as whole tokens."""
    return _contains_run(answer_tokens(text), answer_tokens(answer))


def mentions_any(text: str, answers: Iterable[str]) -> bool:
    tokens = answer_tokens(text)
    return any(_contains_run(tokens, answer_tokens(a)) for a in answers)


def mentions_any_form(text: str, answers: str | Iterable[str]) -> bool:
    """Any answer occurs in the text in any form a reader recognises: its own spelling, another
    spelling of its date or number (`metrics.surface_forms`)."""
    return mentions_in_any_form(text, answers)


def old_name_part_left(text: str, answers: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """Distinctive words of multi-word old answers ("Lincoln", "Gupta", "Won") still standing in the
    text outside full forms of the answers in `keep` (the new answer, which may share none of them)."""
    ignore = [(f.start, f.end) for k in keep for f in find_forms(text, k)]
    return [f.text for a in answers for f in name_part_left(text, a, ignore)]


# Proposals that stand for "some answer" rather than being one. Compared after normalisation (so
# "N/A" is "na", "Person A" is "person a"); the pattern catches "Person B", "Company X", "City Y".
PLACEHOLDERS = frozenset(
    normalize_answer(p)
    for p in (
        "John Doe",
        "Jane Doe",
        "John Smith",
        "Joe Bloggs",
        "XYZ",
        "ABC",
        "X",
        "Y",
        "Z",
        "Lorem ipsum",
        "N/A",
        "none",
        "unknown",
        "not known",
        "not applicable",
        "no answer",
        "name",
        "placeholder",
        "TBD",
        "TBA",
        "someone",
        "somebody",
        "something",
        "somewhere",
        "anonymous",
        "example",
        "answer",
        "wrong answer",
        "[name]",
        "<name>",
        "foo",
        "bar",
        "foobar",
    )
)
_PLACEHOLDER_PATTERN = re.compile(
    r"^(person|company|city|country|place|team|actor|author|character|player|"
    r"band|singer|name|location|year|date|entity)\s+([a-z]|\d+|xyz?)$"
)


def _whole_placeholder(proposal: str) -> bool:
    norm = normalize_answer(proposal)
    # Articles are dropped by normalisation ("Person A" → "person"): match the pattern on the raw words.
    raw = " ".join(re.sub(r"[^\w\s]", " ", proposal.lower()).split())
    return norm in PLACEHOLDERS or bool(_PLACEHOLDER_PATTERN.match(raw)) or "lorem ipsum" in norm


_NAME_RUN = re.compile(r"[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)+")


def name_runs(text: str) -> list[str]:
    """Runs of two or more capitalised words: the names inside a longer answer."""
    return [m.group(0) for m in _NAME_RUN.finditer(text)]


def is_placeholder(proposal: str) -> bool:
    """A stand-in, whole or as a name inside a longer answer ("composer / lyricist John Doe")."""
    return _whole_placeholder(proposal) or any(_whole_placeholder(run) for run in name_runs(proposal))


def overlaps_answer(proposal: str, golds: Iterable[str]) -> bool:
    """The proposal's content words contain, or are contained in, a gold's ("Paris" / "Paris, France"),
    or both are names with the same distinctive word ("Gupta Empire" / "Gupta dynasty"). A region
    that includes the original city ("Île-de-France" for "Paris") shares no word and is not caught."""
    own = content_words(proposal)
    head = distinctive_word(proposal) or (proposal.strip() if len(proposal.split()) == 1 else None)
    for gold in golds:
        theirs = content_words(gold)
        if own and theirs and (own <= theirs or theirs <= own):
            return True
        gold_head = distinctive_word(gold) or (gold.strip() if len(gold.split()) == 1 else None)
        if head and gold_head and head.casefold() == gold_head.casefold():
            return True
        # Any shared name word: "The University of Alabama" for "The Alabama Crimson Tide" is the same team.
        if answer_kind(proposal) == answer_kind(gold) == "name" and name_words(proposal) & name_words(gold):
            return True
    return False


def name_part_in(text: str, proposal: str) -> bool:
    """A name word of the proposal occurs in the text (case-insensitive: NQ questions are lower case):
    "Château de Versailles" answers "where did the king live before versailles" with its own word."""
    if answer_kind(proposal) != "name":
        return False
    return bool(name_words(proposal) & {t.casefold() for t in re.findall(r"[^\W\d_][\w'’-]*", text)})


def content_words(text: str) -> set[str]:
    return {t for t in answer_tokens(text) if t not in _FUNCTION_WORDS}


def same_shape(gold: str, proposal: str) -> bool:
    """A date for a date, a number for a number: digits on one side only is a visible type change."""
    return bool(_DIGITS.search(gold)) == bool(_DIGITS.search(proposal))


def same_date_parts(gold: str, proposal: str) -> bool:
    """A full date for a full date, a year for a year: a proposal that drops the day cannot replace the
    old date where it is written in full."""
    a, b = date_parts(gold), date_parts(proposal)
    return a is None or b is None or a == b


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


# A light splitter (pysbd is ~10 ms a passage): good enough to scope "the same sentence".
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[\"'`(\[]*[A-Z0-9])")


_IPA = re.compile(r"[ˈˌːɒəæɑɪʊʃʒθðŋɡɛɔʌɜɐ]")
# A post-nominal may stand between the name and its gloss ("John Locke FRS ( / lɒk / ; …").
# A name's span may stop before the period of its "Jr." ("Theodore Roosevelt Jr. ( / ˈroʊzəvɛlt / …"; read invalid).
_GLOSS = re.compile(r"\.?(?:\s*,?\s*(?:FRS|OBE|KBE|CBE|MBE|PC|QC)\b)*\s*\(([^;)]*)")


def stale_glosses(original: str, spans: Iterable[tuple[int, int, str]], golds: Iterable[str]) -> list[str]:
    """The gloss right after a replaced name that belonged to the old name: its pronunciation or its
    own script, "John Locke FRS ( / lɒk / ; …" → "Thomas Jefferson FRS ( / lɒk / ; …", "Omar Khayyam (
    … ; عمر خیّام ( Persian ) …" (both reviewed invalid). Dates and other glosses ("born …") are kept."""
    if not any(answer_kind(g) == "name" for g in golds):
        return []
    stale = []
    for _, end, _ in spans:
        gloss = _GLOSS.match(original, end)
        if not gloss:
            continue
        body = gloss.group(1)
        foreign = any(ch.isalpha() and not unicodedata.name(ch, "").startswith("LATIN") for ch in body)
        if _IPA.search(body) or foreign or "pronunciation" in body.lower():
            stale.append(body.strip())
    return stale


def chronology_flips(
    original: str, spans: Iterable[tuple[int, int, str]], reach: int = 1, unmoved: str | None = None
) -> list[str]:
    """Years near a replaced span whose order against the replaced year the edit reverses: "published
    on July 13, 1890, it was first collected in Bierce's 1891 book" swapped to 1900 makes the book
    older than the story; a hiatus "from 2009 to 2012" swapped to "from 2013 to 2014" ends after the
    next sentence's 2013 comeback album (both reviewed invalid). `spans`: (start, end, new text) in
    `original`; a span with several years pairs them in order. Compared: the span's own sentence and
    `reach` sentences either side, where narrative text keeps its order; further years are often
    unrelated. `unmoved`: the passage before its timeline moved (programs/timeline.py keeps every offset), whose
    years the old answer is ordered against; the new one is ordered against the moved ones."""
    flips = []
    unmoved = original if unmoved is None else unmoved
    bounds = [0, *(m.end() for m in SENTENCE_BREAK.finditer(original)), len(original)]
    for start, end, new in spans:
        old_years, new_years = _YEAR.findall(original[start:end]), _YEAR.findall(new)
        if not old_years or len(old_years) != len(new_years):
            continue
        left = max(i for i, b in enumerate(bounds) if b <= start)
        right = min(i for i, b in enumerate(bounds) if b >= end)
        windows = [(bounds[max(0, left - reach)], start), (end, bounds[min(len(bounds) - 1, right + reach)])]
        found = [m for a, b in windows for m in _YEAR.finditer(unmoved, a, b)]
        others = [(int(m.group(1)), int((_YEAR.match(original, m.start()) or m).group(1))) for m in found]
        for before, after in zip(map(int, old_years), map(int, new_years), strict=True):
            for was, now in others:
                if (before - was) * (after - now) < 0:  # strictly reversed; from or to a tie is not judged
                    flips.append(f"{before}->{after} against {now}")
    return flips


# Words that say nothing about which option a text points at.
_FUNCTION_WORDS = frozenset(
    """
a an the and or but of to in on at by for with from as into onto over under about after before during up down out
off is are was were be been being am it its this that these those there their them they he she his her we you i
not no nor can will would could should may might must do does did has have had than then so such which what who
whom whose when where why how more most less least very also only just one some any all each other
""".split()
)
# Talk about the test instead of the topic: "the target option", "the given question", "another option".
_TASK_TALK = re.compile(
    r"\b(options?|correct answer|multiple[- ]choice|answer choices?|(this|given|above) question)\b", re.IGNORECASE
)


def _stem(token: str) -> str:
    """Crude suffix stripping, enough for "running" ~ "run", "flosses" ~ "floss", "diseases" ~ "disease"."""
    if token.endswith(("ing", "ed")):
        stem = token[:-3] if token.endswith("ing") else token[:-2]
        if len(stem) < 3:
            return token
        return stem[:-1] if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "ls" else stem
    if token.endswith("es") and token[:-2].endswith(("ss", "x", "z", "ch", "sh")) and len(token) > 4:
        return token[:-2]
    if token.endswith("s") and not token.endswith("ss") and len(token) > 3:
        return token[:-1]
    return token


def content_stems(text: str) -> set[str]:
    return {_stem(t) for t in answer_tokens(text) if t not in _FUNCTION_WORDS}


def echoes_option(passage: str, option: str, *shared: str) -> bool:
    """The passage names the option, or uses at least two and at least half of the words that set it
    apart from the texts in `shared` (the question, the option the passage is meant to support): a
    paraphrase ("a river running through it" for "A river used to run through this area") points at
    it too. One shared word alone ("day", "liquid") is too weak a sign to reject on."""
    if mentions(passage, option):
        return True
    own = content_stems(option) - set().union(*(content_stems(s) for s in shared))
    hits = len(own & content_stems(passage))
    return hits >= 2 and 2 * hits >= len(own)


def talks_about_the_test(passage: str) -> bool:
    return bool(_TASK_TALK.search(passage))


# A rewrite that explains itself instead of rewriting: "The question asks about …", "The sentence does not
# provide any information about the pitcher …" (pasted into passages by a compiled unanswerable generator).
_REWRITE_TALK = re.compile(
    r"\b(unanswerable|(the|this) (given |above |original )?(question|sentence) (asks|does|is|provides|mentions|"
    r"states|gives|no longer))\b",
    re.IGNORECASE,
)


def talks_about_the_rewrite(text: str) -> bool:
    return bool(_REWRITE_TALK.search(text))


def shares_topic(rewrite: str, sentence: str, answers: list[str]) -> bool:
    """The rewrite keeps a content word of the sentence it replaces, the answer's aside: a compiled generator
    put "The child-resistant locking closure for containers was invented in 1967." in place of sentences
    about a field goal and a track list."""
    answer_words = set().union(*(content_words(a) for a in answers)) if answers else set()
    return bool((content_words(rewrite) & content_words(sentence)) - answer_words)
