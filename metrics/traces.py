"""Traces of an old answer that a removed or swapped answer leaves behind.

Each finder returns what it found, so a check can name its kind in the case's status
(`rejected:old_answer_trace:<kind>`) and a run's rejection table counts the swaps each one removes:

- `description`: a phrase that described the answer in apposition to it ("her brother , Brian" → "her
  brother" still answers "who killed Missy"; "Gibraltar , a British Overseas Territory , located at the
  southern tip of the Iberian Peninsula" swapped to "Ireland , a British Overseas Territory , ..."),
  or the rest of a gold alias that is the answer plus its description;
- `pronunciation`, `script`, `symbol`, `code`: the parenthetical gloss after the replaced answer ("The
  won ( / wʌn / ; Korean : 원 ; symbol : ₩ ; code : KRW )");
- `inside_word`: a name part of the old answer inside a longer capitalised word ("Chandragupta II" after
  "Gupta kings" became "British kings");
- `date_year`: the year of a full-date answer left in the text ("on [-1-] March 1994" for "1 March 1994"):
  a "when" question is still answered at the year's granularity. Outside the rewritten sentence a full
  date of another day is not counted, so "It was then ratified in … San José on November 1 , 1821" (for
  "October 29 , 1821", read invalid) is not caught.

What these do not see: a description that fits only the old answer without standing in apposition to
it or in a gold alias ("the only territory on the Iberian Peninsula ruled from London").
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Iterable
from datetime import date

from .normalize import answer_tokens
from .qa import _contains_run
from .surface_forms import _year_like, date_parts, find_forms, name_parts, units_of

# A description in apposition: a determiner- or possessive-led phrase of up to six words right before
# ", <answer>" or right after "<answer> ,".
_DETERMINER = r"(?:the|a|an|her|his|their|its|[A-Z]?[\w-]+ 's|[\w-]+’s)"
_BEFORE = re.compile(rf"(?:^|(?<=[\s,;(]))({_DETERMINER}(?:\s+[\w'’-]+){{1,5}})\s*,\s*$", re.IGNORECASE)
_AFTER = re.compile(r"^\s*,\s*((?:the|a|an)\s+[^,;()]+?)\s*(?:,|\.|;|$)", re.IGNORECASE)
_FUNCTION = frozenset("the a an her his their its of and or in on at to for by with from".split())


def _meaningful(phrase: str) -> bool:
    return len([w for w in answer_tokens(phrase) if w not in _FUNCTION]) >= 1


def appositive_descriptions(original: str, answers: Iterable[str]) -> list[str]:
    """Phrases of the original text standing in apposition to an answer, and the description part of an
    alias that is another alias plus more ("Gibraltar , a British Overseas Territory , ...")."""
    answers = [a for a in answers if a and a.strip()]
    found: list[str] = []
    for answer in answers:
        for form in find_forms(original, answer):
            before = _BEFORE.search(original[: form.start])
            if before and _meaningful(before.group(1)) and len(before.group(1).split()) >= 2:
                found.append(before.group(1).strip())
            after = _AFTER.match(original[form.end :])
            if after and _meaningful(after.group(1)):
                found.append(after.group(1).strip())
    found.extend(alias_descriptions(answers))
    return list(dict.fromkeys(found))


def alias_descriptions(answers: Iterable[str]) -> list[str]:
    """The rest of a gold alias that is a shorter alias plus a description."""
    answers = [a for a in answers if a and a.strip()]
    found = []
    for alias in answers:
        for short in answers:
            if short != alias and alias.lower().startswith(short.lower()) and len(alias) > len(short) + 10:
                rest = alias[len(short) :].strip(" ,;")
                if _meaningful(rest):
                    found.append(rest)
    return found


def _identifies(phrase: str) -> bool:
    # "her brother", "the band 's lead singer": one person or thing; "an American actress" is one of many.
    return not re.match(r"(?:a|an)\s", phrase, re.IGNORECASE)


def _names_things(phrase: str) -> bool:
    # "a British Overseas Territory": two capitalised words past the first; "an American actress" has one.
    return len(re.findall(r"(?<=\s)[A-Z][\w'’-]*", phrase)) >= 2


def descriptions_left(edited: str, original: str, answers: Iterable[str], which: str = "identifying") -> list[str]:
    """The answer's descriptions (`appositive_descriptions`) still standing in the edited text.
    `which`: "identifying" (what an unanswerable rewrite may not leave: a definite or possessive phrase, "her
    brother", which still answers "who") or "naming" (what a swap may not keep beside the new answer: a
    phrase with names in it, "a British Overseas Territory , located at ... the Iberian Peninsula", which
    fits the old answer; "an American actress" fits many and stays). A gold alias's description counts
    for both."""
    tokens = answer_tokens(edited)
    keep = _identifies if which == "identifying" else _names_things
    aliases = set(alias_descriptions(answers))
    return [
        d
        for d in appositive_descriptions(original, answers)
        if (d in aliases or keep(d)) and _contains_run(tokens, answer_tokens(d))
    ]


_IPA = re.compile(r"[ˈˌːɒəæɑɪʊʃʒθðŋɡɛɔʌɜɐ]|/\s*[^/\s][^/]*/")
_CODE = re.compile(r"\b(?:code|ISO|abbreviation|abbreviated|abbr\.?|symbol|ticker)\s*:?\s*([A-Z]{2,5})\b")


def _parenthetical(text: str, start: int) -> str | None:
    """The bracketed text opening right after `start` (nested brackets included), or None. A closing quote
    between comes first: a title's gloss follows its quotes ("`` Auld Lang Syne '' ( Scots pronunciation …")."""
    m = re.match(r"(?:\s*(?:''|\"|”|’|'))?\s*\(", text[start:])
    if not m:
        return None
    depth, i = 0, start + m.end() - 1
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1 : j]
    return text[i + 1 :]


def gloss_traces(original: str, ends: Iterable[int]) -> list[tuple[str, str]]:
    """(kind, text) for what the gloss after each replaced span (its end offset in `original`) says about
    the old answer: a pronunciation, its own script, a currency or other symbol, a code."""
    found = []
    for end in ends:
        body = _parenthetical(original, end)
        if body is None:
            continue
        if _IPA.search(body) or "pronunciation" in body.lower():
            found.append(("pronunciation", body))
        if any(ch.isalpha() and not unicodedata.name(ch, "").startswith("LATIN") for ch in body):
            found.append(("script", body))
        if any(unicodedata.category(ch) in ("Sc", "So") for ch in body):
            found.append(("symbol", body))
        if _CODE.search(body):
            found.append(("code", _CODE.search(body).group(1)))
    return found


def inside_words(text: str, answers: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """Capitalised words that hold a name part (4+ letters) of an old answer inside them, outside the
    words of the answers in `keep`: "Chandragupta" for "Gupta"."""
    kept = {w.casefold() for k in keep for w in re.findall(r"[\w'’-]+", k)}
    found = []
    for answer in answers:
        for part in name_parts(answer):
            if len(part) < 4:
                continue
            for m in re.finditer(r"[A-Z][\w'’-]*", text):
                word = m.group()
                if (
                    word.casefold() != part.casefold()
                    and part.casefold() in word.casefold()
                    and word.casefold() not in kept
                ):
                    found.append(word)
    return list(dict.fromkeys(found))


def date_year_left(text: str, answers: Iterable[str], question: str = "", dated: bool = True) -> list[str]:
    """The spans of `text` that give the year of an answer that is a full date (a year with a month or a
    day). A year the question itself names ("hell in a cell 2018") tells nothing the question does not.
    With `dated=False` a full date of another day in that year does not count: in a passage's other
    sentences it is usually another event ("premiered on April 25 , 2018" beside a finale of July 18 ,
    2018); in the sentence that carried the answer it is kept counted."""
    found = []
    for answer in answers:
        parts = date_parts(answer)
        if parts is None or not parts[0] or not (parts[1] or parts[2]):
            continue
        year = next(u.value[0] for u in units_of(answer) if u.kind == "date")
        if year in _years(question):
            continue
        found += [
            text[u.start : u.end]
            for u in units_of(text)
            if year in _years_of(u) and (dated or u.kind != "date" or u.value[2] is None)
        ]
    return found


def _years(text: str) -> set[int]:
    return {y for u in units_of(text) for y in _years_of(u)}


def _years_of(unit) -> set[int]:
    if unit.kind == "date":
        return {unit.value[0]} if unit.value[0] is not None else set()
    return {int(unit.value)} if _year_like(unit) else set()


_DECADE = re.compile(r"\b(1\d|20)(\d)0s\b")
_CENTURY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\s*-?\s*century\b", re.IGNORECASE)


def coarse_dates(text: str, answers: Iterable[str], question: str = "") -> list[str]:
    """Decades and centuries in `text` that contain a date answer's year ("the 1970s" for 1973): a coarser
    answer a reader can still give. A period the question names tells nothing the question does not."""
    found = []
    for answer in answers:
        years = {y for u in units_of(answer) for y in _years_of(u)}
        for year in years:
            for m in _DECADE.finditer(text):
                start = int(m.group(1) + m.group(2) + "0")
                if start <= year < start + 10 and m.group(0) not in question:
                    found.append(m.group(0))
            for m in _CENTURY.finditer(text):
                century = int(m.group(1))
                if (century - 1) * 100 < year <= century * 100 and m.group(0).lower() not in question.lower():
                    found.append(m.group(0))
    return found


_WEEKDAYS = tuple(calendar.day_name)
_MONTH_NAMES = tuple(calendar.month_name)[1:]
_WEEKDAY_DATE = re.compile(
    r"\b("
    + "|".join(_WEEKDAYS)
    + r")\s*,?\s*(?:(\d{1,2})\s+("
    + "|".join(_MONTH_NAMES)
    + r")|("
    + "|".join(_MONTH_NAMES)
    + r")\s+(\d{1,2}))\b"
)
_A_YEAR = re.compile(r"(?<!\d)(1[5-9]\d{2}|20\d{2})(?!\d)")


def _weekdays_wrong(text: str) -> list[str]:
    """Weekdays that do not fall on their date, the year read as the first year after the date in its sentence
    (else the last before it)."""
    wrong = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for m in _WEEKDAY_DATE.finditer(sentence):
            day = int(m.group(2) or m.group(5))
            month = _MONTH_NAMES.index(m.group(3) or m.group(4)) + 1
            after = _A_YEAR.search(sentence, m.end())
            before = list(_A_YEAR.finditer(sentence[: m.start()]))
            year = after or (before[-1] if before else None)
            if year is None:
                continue
            try:
                if date(int(year.group(1)), month, day).weekday() != _WEEKDAYS.index(m.group(1)):
                    wrong.append(m.group(0))
            except ValueError:
                continue
    return wrong


def weekdays_broken(original: str, edited: str) -> list[str]:
    """Weekdays the edit made wrong: "Thursday 24 May" fits 1956, not the swapped 1957."""
    return _weekdays_wrong(edited) if len(_weekdays_wrong(edited)) > len(_weekdays_wrong(original)) else []


_CONVERSION = re.compile(
    r"\s*(?:[^\W\d][\w.-]*\s*){0,3}\(\s*(?:about|approximately|approx\.|c\.|ca\.|~)?\s*[\d][\d.,]*\s*[^\W\d]"
)


def conversions_after(original: str, spans: Iterable[tuple[int, int, str]]) -> list[str]:
    """Unit conversions written right after a replaced number ("12 nautical miles ( 22.2 km ; 13.8 mi )"):
    they still give the old value, and no longer match the new one."""
    found = []
    for start, end, _ in spans:
        if not re.search(r"\d", original[start:end]):
            continue
        m = _CONVERSION.match(original, end)
        if m:
            found.append(original[start : m.end()])
    return found
