"""Traces of a swapped answer in the words around it (read blind on held-out NQ swaps).

`metrics.traces` sees what a gloss or an apposition keeps of the old answer. These finders see what the
rest of the passage keeps, each a kind of its own (`rejected:old_answer_trace:<kind>`):

- `inflection`: another form of a one-word old answer ("conjunctions" after "a conjunction" became
  "an adverb"); not of a longer answer's last word, often a generic noun ("economies" beside "a mixed
  economy"), so "drifted" after "Continental drift" became "Volcanic activity" stays;
- `anaphor`: a demonstrative that takes the old answer's head noun back ("The brachial plexus is a network
  of nerves ... This plexus extends" with "brainstem" swapped in);
- `name_talk`: a sentence about the form of the name (its abbreviation, pronunciation, spelling or
  origin) in a passage whose topic is the swapped answer ("chown is the command ... The name is an
  abbreviation of change mode"; "Jerry is a fictional dog ... The name is pronounced with a long O , a
  homophone of toe toe");
- `letter_count`: a count of letters beside the swapped span that fits the old answer, not the new
  ("the four - letter suffix . js");
- `derived_word`: a word derived from a one-word proper-noun old answer ("Christians" after
  "Christianity" became "Islam", "Pantheist belief" after "Pantheism" was swapped, "Korean" beside
  "Korea"): the adjective or the follower's name still says which answer the passage was about;
- `inside_name`: a common-noun answer replaced inside a proper name ("the Great Salt Lake" → "the Great
  Water Lake"): the name still says the old answer, and the new one makes a place that does not exist;
- `head`: the last word of a multi-word old answer still in the passage when the new answer does not share
  it ("a state college" → "a university" beside "the largest college in the Florida College System", "an
  American bulldog" → "a German shepherd" beside "Spike Bulldog", "the flower called the gynoecium" beside
  "The ovary of the gynoecium"). Read blind, such swaps were invalid: the passage still says what the old
  answer was. A generic head ("the area") is refused too; the pivot's next proposal does not help, so the
  case is rejected rather than proposed again.

All of them read the original text at the offsets of the code edit's replacements: a sentence without a
replacement is unchanged in the edited text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .arithmetic import numbers_in
from .checks import SENTENCE_BREAK
from .normalize import answer_tokens
from .surface_forms import single_value, units_of

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_FUNCTION = frozenset("a an the of and or in on at to for by with from de del la le du des".split())
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve first second third fourth fifth".split()
)
MIN_HEAD = 4  # shorter heads ("art", "sea") inflect into too many unrelated words


def _content_words(answer: str) -> list[str]:
    return [w for w in _WORD.findall(answer) if w.lower() not in _FUNCTION]


def _content_count(answer: str) -> int:
    # Numbers count here: "the 2010 election" is more than its noun.
    return len([w for w in re.findall(r"[\w'’-]+", answer) if w.lower() not in _FUNCTION])


def _head(answer: str) -> str | None:
    """The answer's last content word, when it is a word worth following (not a numeral, not short)."""
    words = _content_words(answer)
    if not words or len(words[-1]) < MIN_HEAD or words[-1].lower() in _NUMBER_WORDS:
        return None
    return words[-1]


def inflections(word: str) -> set[str]:
    """Regular inflections of a word (plural, past, participle), lower-cased, the word itself left out."""
    w = word.lower()
    forms = {w + "s", w + "es", w + "ed", w + "ing", w + "'s", w + "’s"}
    if w.endswith("e"):
        forms |= {w + "d", w[:-1] + "ing"}
    if w.endswith("y") and len(w) > 1 and w[-2] not in "aeiou":
        forms |= {w[:-1] + "ies", w[:-1] + "ied"}
    if w.endswith("is"):  # the Greek plural: "ellipsis" / "ellipses", "analysis" / "analyses"
        forms.add(w[:-2] + "es")
    return forms - {w}


def _kept_words(keep: Iterable[str]) -> set[str]:
    return {w.lower() for k in keep for w in _WORD.findall(k)}


def inflected_forms(text: str, answers: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """Words of the text that inflect an old answer's last word, outside the new answer's words."""
    kept = _kept_words(keep)
    found = []
    for answer in answers:
        head = _head(answer)
        # One content word only: the head of a longer answer is often generic ("economies" beside "mixed
        # economy" swapped for "communist society" names no answer).
        if head is None or _content_count(answer) > 1 or head.lower() in kept:
            continue
        forms = inflections(head)
        found += [w for w in _WORD.findall(text) if w.lower() in forms and w.lower() not in kept]
    return list(dict.fromkeys(found))


# Suffixes a proper noun sheds before taking another ("Christian|ity", "Panthe|ism", "Kore|a"), and those
# it takes ("Christian|s", "Panthe|ist", "Kore|an", "Japan|ese").
_SHED = ("ity", "ism", "ist", "ics", "ic", "ia", "y", "e", "a")
_TAKEN = ("ist", "ists", "ism", "ic", "ics", "ical", "ian", "ians", "an", "ans", "ese", "ite", "ites", "ity")
MIN_STEM = 4  # "Chin|a" still makes "Chinese"; a three-letter stem makes too many unrelated words


def derivations(word: str) -> set[str]:
    """Words derived from a word by a change of suffix, lower-cased; the word and its inflections left out.
    The stem left after a shed suffix counts too, with its plural, when it is a word's length
    ("Christian" from "Christianity")."""
    w = word.lower()
    stems = {w} | {w[: -len(s)] for s in _SHED if w.endswith(s) and len(w) - len(s) >= MIN_STEM}
    forms = {stem + t for stem in stems for t in _TAKEN}
    forms |= {f for stem in stems - {w} if len(stem) > MIN_STEM for f in (stem, stem + "s")}
    return forms - {w} - inflections(w)


def derived_words(text: str, answers: Iterable[str], keep: Iterable[str] = (), common: bool = False) -> list[str]:
    """Capitalised words of the text derived from a one-word proper-noun old answer ("Christians" for
    "Christianity"), outside the new answer's words. Common nouns are left alone unless `common`: "historian"
    beside "history" swapped out names no answer, but beside a removed "history" it still hints at it."""
    kept = _kept_words(keep)
    found = []
    for answer in answers:
        words = _content_words(answer)
        proper = words and words[0][:1].isupper()
        if len(words) != 1 or _content_count(answer) > 1 or not (proper or common) or len(words[0]) < 5:
            continue
        forms = derivations(words[0]) - kept
        found += [w for w in _WORD.findall(text) if (w[:1].isupper() or common) and w.lower() in forms]
    return list(dict.fromkeys(found))


def _multiword_heads(answers: Iterable[str], keep: Iterable[str]) -> list[str]:
    """The head nouns of the multi-word old answers that the new answer does not share."""
    kept = _kept_words(keep)
    heads = [_head(a) for a in answers if len(_content_words(a)) >= 2]
    return [h for h in heads if h is not None and h.lower() not in kept]


def heads_left(text: str, answers: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """The head noun of a multi-word old answer anywhere in the text outside the new answer's words (any
    case: "Bulldog" in a name still says "bulldog"). Not its plural: "market economies" beside "a mixed
    economy" swapped for "a communist society" is about economies in general, and read valid."""
    heads = {h.lower() for h in _multiword_heads(answers, keep)}
    return list(dict.fromkeys(w for w in _WORD.findall(text) if w.lower() in heads))


_DEMONSTRATIVE = r"(?:this|that|these|those|such)"


def anaphors(text: str, answers: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """A demonstrative before the head noun of a multi-word old answer, or its plural ("This plexus" for
    "brachial plexus"); the head itself anywhere is `heads_left`."""
    found = []
    for head in _multiword_heads(answers, keep):
        forms = "|".join(re.escape(f) for f in sorted({head.lower(), *inflections(head)}, key=len, reverse=True))
        pattern = re.compile(rf"\b{_DEMONSTRATIVE}\s+(?:{forms})\b", re.IGNORECASE)
        found += [m.group() for m in pattern.finditer(text)]
    return list(dict.fromkeys(found))


def _sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of the text."""
    bounds, start = [], 0
    for m in SENTENCE_BREAK.finditer(text):
        bounds.append((start, m.start()))
        start = m.end()
    bounds.append((start, len(text)))
    return bounds


def _with_spans(text: str, starts: Iterable[int]) -> tuple[list[tuple[int, int]], set[int]]:
    sentences = _sentences(text)
    holding = {i for i, (s, e) in enumerate(sentences) for start in starts if s <= start < e}
    return sentences, holding


# "The name is an abbreviation of ...", "Its name comes from the Greek word for ...": a statement about the
# form of a word. "The term" and "The word" count; a subject that names its referent ("The name Dubai")
# is about that referent, not about the passage's topic.
_NAME_SUBJECT = re.compile(r"\b(?:[Tt]he|[Ii]ts|[Hh]is|[Hh]er|[Tt]heir)\s+(?:name|term|word)\b(?!\s+(?:[A-Z]|``|\"|'))")
_FORM_TALK = re.compile(
    r"\b(?:abbreviat\w*|acronym|initialism|contraction|short\s+for|stands\s+for|pronounced|pronunciation"
    r"|homophone|rhymes?|spelled|spelt|spelling|derives?|derived|comes?\s+from|came\s+from|means|meaning"
    r"|literally|etymology)\b",
    re.IGNORECASE,
)


def name_talk(original: str, starts: Iterable[int]) -> list[str]:
    """Sentences about the form of a name ("The name is pronounced ...") where the name is the swapped
    answer: the passage's first sentence holds a replaced span (the answer is its topic), or the
    statement itself does ("The name comes from the Greek word for salt - loving" with salt swapped)."""
    sentences, holding = _with_spans(original, list(starts))
    if not holding:
        return []
    found = []
    for i, (s, e) in enumerate(sentences):
        sentence = original[s:e]
        subject = _NAME_SUBJECT.search(sentence)
        if subject and _FORM_TALK.search(sentence, subject.end()) and (0 in holding or i in holding):
            found.append(sentence.strip())
    return found


_LETTER_COUNT = re.compile(r"(\S+(?:\s*-\s*\w+)?)\s*-?\s*(?:letter|character)s?\b", re.IGNORECASE)


def _letters(span: str) -> int:
    return sum(ch.isalnum() for ch in span)


def letter_counts(original: str, spans: Iterable[tuple[int, int, str]]) -> list[str]:
    """ "N-letter" (or "N letters", "N characters") anywhere in the passage, where N is a replaced span's
    length in letters and not the new one's: the count still spells the old answer ("At 14 characters , his
    last name is the longest" a sentence after the name; read invalid)."""
    found = []
    for start, end, new in spans:
        old_count, new_count = _letters(original[start:end]), _letters(new)
        for m in _LETTER_COUNT.finditer(original):
            values = numbers_in(m.group(1))
            if values and values[-1] == old_count != new_count:
                found.append(m.group().strip())
    return list(dict.fromkeys(found))


def inside_names(original: str, spans: Iterable[tuple[int, int, str]], answers: Iterable[str]) -> list[str]:
    """Replaced spans of a lower-case answer (a common noun: "salt"; not "the British government") written
    with a capital mid-sentence, i.e. as a word of a proper name ("the Great Salt Lake")."""
    # A common noun in this passage too: written in lower case somewhere in it ("high salt concentrations"),
    # so that a name the gold list happens to lower-case ("java" for Java alone) is not taken for one.
    common = {
        tuple(answer_tokens(a))
        for a in answers
        if _content_words(a)
        and all(map(str.islower, _content_words(a)))
        and re.search(rf"(?<!\w){re.escape(_content_words(a)[-1])}(?!\w)", original)
    }
    sentence_starts = {s for s, _ in _sentences(original)}
    found = []
    for start, end, _ in spans:
        word = original[start:end]
        before = original[:start].rstrip()
        opening = start in sentence_starts or not before or before[-1] in ".!?:;`'\"(["
        if tuple(answer_tokens(word)) in common and word[:1].isupper() and not opening:
            found.append(original[max(0, start - 20) : min(len(original), end + 20)].strip())
    return found


# Capitalised at a sentence's start or as a title's opening, without being a name's word.
_NOT_NAME_WORDS = frozenset(
    "the a an this that these those his her its their in on at by for from with after before during when while "
    "since as of and or but".split()
)


_SAINT = re.compile(r"\b(?:St\.|Saint|San|Santa|Sant'|São)\s+$")


def split_names(original: str, spans: Iterable[tuple[int, int, str]], person: bool = False) -> list[str]:
    """Replaced spans of a name that were one part of a longer name in the original: "Colts" in "Indianapolis
    Colts" (the swap leaves "Indianapolis Chicago Bears"), "Nevada" in "University of Nevada". A name word
    right before the span (not opening its sentence), or a name word and "of" before it, or a name word right
    after it. Spans with digits are dates and numbers, whose neighbours are months and units. A person's name may
    follow a title ("President Lincoln"), so for a person only a saint's title counts ("St. Florian" made
    "St. Erich Wende")."""
    sentence_starts = {s for s, _ in _sentences(original)}
    found = []
    for start, end, _ in spans:
        word = original[start:end]
        if re.search(r"\d", word) or not word[:1].isupper():
            continue
        if person:
            if _SAINT.search(original[:start]):
                found.append(original[max(0, start - 25) : min(len(original), end + 25)].strip())
            continue
        before = re.search(r"([A-Z][\w'’.&-]*)\s+(?:of\s+(?:the\s+)?)?$", original[:start])
        after = re.match(r"\s+([A-Z][\w'’.&-]*)", original[end:])
        name_before = (
            before is not None
            and before.start(1) not in sentence_starts
            and before.group(1).casefold() not in _NOT_NAME_WORDS
            and not re.search(r"[.!?:;]\s*$", original[: before.start(1)])
        )
        name_after = after is not None and after.group(1).casefold() not in _NOT_NAME_WORDS
        if name_before or name_after:
            found.append(original[max(0, start - 25) : min(len(original), end + 25)].strip())
    return found


def ordinals_of(text: str, answers: Iterable[str]) -> list[str]:
    """Ordinals of an old count left in the text: "now in its fifth edition" beside a count swapped from 5
    to 4 still says 5."""
    values = [single_value(a) for a in answers]
    counts = {
        int(u.value)
        for u in values
        if u is not None and u.kind == "num" and u.value == int(u.value) and 1 < u.value < 100
    }
    return [text[u.start : u.end] for u in units_of(text) if u.kind == "ord" and u.value in counts]


_ALIAS = re.compile(r"\s*[,(]\s*(?:also |otherwise |commonly |formerly )?(?:known as|called|a\.k\.a\.)\s+[^,;.)]+")


def aliases_after(original: str, spans: Iterable[tuple[int, int, str]]) -> list[str]:
    """Another name of the old answer glossed right after a replaced span ("adenoid , also known as a pharyngeal
    tonsil"): the edit renames the thing, the gloss still names the old one (read invalid)."""
    return [m.group().strip(" ,(") for _, end, _ in spans if (m := _ALIAS.match(original, end))]


# A list the count introduces: "( Luigi , Captain Falcon , Ness , and Jigglypuff )", ": red , green and blue".
_LIST_AFTER = re.compile(r"^[^.;()]{0,60}?(?:\(\s*|:\s*)(?P<items>[^.;()]{1,300}?)(?:\s*\)|\s*[.;]|$)")
_ITEM_BREAK = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")


def listed_counts(original: str, spans: Iterable[tuple[int, int, str]]) -> list[str]:
    """Lists after a replaced count that still hold the old count's number of items: "three unlockable
    characters ( Luigi , Captain Falcon , Ness , and Jigglypuff )" keeps the four it listed (read invalid)."""
    found = []
    for start, end, new in spans:
        old_values, new_values = numbers_in(original[start:end]), numbers_in(new)
        if len(old_values) != 1 or len(new_values) != 1 or old_values[0] == new_values[0]:
            continue
        m = _LIST_AFTER.match(original[end:])
        if m is None:
            continue
        items = [i for i in _ITEM_BREAK.split(m.group("items")) if i.strip()]
        if len(items) >= 2 and len(items) == old_values[0]:
            found.append(original[start : end + m.end()].strip())
    return found
