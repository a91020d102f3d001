"""Every surface form of an answer that a reader recognises in a text.

A text (and an answer) is read as a sequence of *units*: a date ("July 18 , 2018", "18 July 2018",
"( 2018 - 07 - 18 )", "July 18", "July 2018"), a number ("1,000", "1000", "one thousand", "3.5
million"), an ordinal ("3rd", "third"), or a normalised word (SQuAD rules, as `normalize_answer`).
An answer occurs in a text where a run of the text's units matches the answer's units one for one:

- words match when equal after normalisation;
- numbers match by value, whatever their spelling ("three" = "3", "1,000" = "1000" = "one thousand");
- ordinals match by value ("3rd" = "third"), never a cardinal ("3" is not "third");
- dates match when every part both give agrees and the text's date gives at least the answer's day
  and month (a full-date answer is found in any full-date form of the same day, and in "July 18"
  without a year; not in "July 2018", which does not say which day);
- a year answer ("2018") is a number; it is found wherever that year is written, inside a date of
  that year too ("July 18 , 2018" states the year 2018). It is not found in other numbers that only
  share digits ("2,018", "20180"), nor in a different year.

Where the text is searched for candidates is found cheaply with small patterns (a month name beside
digits, digit-dash-digit-dash-digit, runs of number words); what a candidate means is decided by
well-kept parsers: `dateutil` then `dateparser` for dates (dateutil, which dateparser is built on,
reads a span in ~0.1 ms; dateparser's full pipeline took 2-13 ms a span, which made a cold NQ context
cost 38 ms, so it is only the fallback), `text2num` for number words (maintained, Rust-backed, handles
ordinals and "and"; `word2number` is unmaintained since 2017 and has no ordinals; `number-parser` is
slower pure Python and last released 2023). `num2words` renders numbers as words when a replacement
must keep the text's spelling. Parses are cached: thousands of cases per second on NQ contexts.

Names: the distinctive part of a multi-word name is its *head*, the last capitalised word that is not
a function word, a title ("King", "Saint"), a regnal numeral ("II") or a generic noun ("Empire",
"Republic", "River", "University"): "Abraham Lincoln" → "Lincoln", "Gupta Empire" → "Gupta", "Korean
Republic Won" → "Won", "Victor Emmanuel II" → "Emmanuel", "University of Oxford" → "Oxford". English
names are head-final (surnames, currencies, dynasties), and "X of Y" names are headed by Y. Heads are
matched case-sensitively: "Won" the currency, not "won" the verb. An old answer's other name parts
(the "Alabama" of "The Alabama Crimson Tide") must be gone too: edits replace only the head, a
surviving other part rejects the case.
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation
from functools import lru_cache

from .normalize import normalize_answer

# ------------------------------------------------------------------------------------------ units


@dataclass(frozen=True)
class Unit:
    kind: str  # "word" | "num" | "ord" | "date"
    value: object  # str (word) | Decimal (num) | int (ord) | (year, month, day) with None for absent parts
    start: int
    end: int
    # Where each date part sits inside the text (absolute offsets), for rendering a new date in place.
    parts: tuple = ()
    style: str = ""  # a number's spelling ("digits", "commas", "words"); a date's layout and month ("mdy-name")


@dataclass(frozen=True)
class Form:
    """One occurrence of an answer in a text: text[start:end], and how it was recognised."""

    start: int
    end: int
    text: str
    how: str  # "same" (the same units, e.g. the answer's own spelling) | "date" | "number" | "name_part"


# --- dates: candidates by pattern, meaning by dateparser ----------------------------------------
_MONTH = (
    r"(?P<month>(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?)"
)
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>1\d{3}|20\d{2})"
# Month names are matched case-sensitively ("may" and "march" are verbs); tried longest first.
_DATE_PATTERNS = [
    (
        "num",
        re.compile(
            r"(?<![\d.,-])" + _YEAR + r"\s*(?P<sep>[-/.])\s*(?P<month>0?[1-9]|1[0-2])\s*(?P=sep)\s*"
            r"(?P<day>0?[1-9]|[12]\d|3[01])(?![\d]|\s*(?P=sep)\s*\d)"
        ),
    ),
    ("mdy", re.compile(r"\b" + _MONTH + r"\s+" + _DAY + r"(?:\s*,\s*|\s+)" + _YEAR + r"\b")),
    ("dmy", re.compile(r"\b" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:\s*,)?\s+" + _YEAR + r"\b")),
    ("my", re.compile(r"\b" + _MONTH + r"(?:\s*,)?\s+" + _YEAR + r"\b")),
    ("md", re.compile(r"\b" + _MONTH + r"\s+" + _DAY + r"\b(?!\s*(?:,\s*)?\d)")),
    ("dm", re.compile(r"\b" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?![\w])")),
]


@lru_cache(maxsize=2)
def _date_parser(order: str):
    from dateparser.date import DateDataParser

    # Parts the candidate does not give are filled from today by dateparser; the caller drops them.
    settings = {"PREFER_DAY_OF_MONTH": "first", **({"DATE_ORDER": "YMD"} if order == "num" else {})}
    return DateDataParser(languages=["en"], settings=settings)


_NO_DATE = datetime.datetime(1, 1, 1)


@lru_cache(maxsize=65536)
def _parse_date(candidate: str, order: str) -> tuple[int, int, int] | None:
    """The candidate span read as (year, month, day), or None. `dateutil` (dateparser's own parser
    underneath, ~100 µs) reads the spans the patterns find; `dateparser` (~2-13 ms) is the fallback
    for what dateutil refuses. Parts the span does not give are filled in; the caller drops them."""
    text = " ".join(candidate.replace(" ,", ",").split())
    if order == "num":
        text = re.sub(r"\s*([-/.])\s*", r"\1", text)
    try:
        from dateutil import parser as dateutil_parser

        d = dateutil_parser.parse(text, default=_NO_DATE, dayfirst=order in ("dmy", "dm"))
        return d.year, d.month, d.day
    except (ValueError, OverflowError):
        pass
    try:
        data = _date_parser("num" if order == "num" else "written").get_date_data(text)
    except (ValueError, OverflowError):
        return None
    if data is None or data.date_obj is None:
        return None
    d = data.date_obj
    return d.year, d.month, d.day


def _date_units(text: str) -> list[Unit]:
    found: list[tuple[int, int, str, re.Match]] = []
    for order, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            found.append((m.start(), m.end(), order, m))
    # Longest first, then leftmost: "July 18 , 2018" wins over the "July 18" inside it.
    found.sort(key=lambda f: (-(f[1] - f[0]), f[0]))
    taken: list[tuple[int, int]] = []
    units = []
    for start, end, order, m in found:
        if any(start < e and s < end for s, e in taken):
            continue
        groups = m.groupdict()
        parsed = _parse_date(m.group(0), order)
        if parsed is None:
            continue
        year = int(groups["year"]) if groups.get("year") else None
        day = int(groups["day"]) if groups.get("day") else None
        # The pattern says which parts the text gives; dateparser fills the rest from today: drop them.
        if (year is not None and parsed[0] != year) or (day is not None and parsed[2] != day):
            continue
        value = (year, parsed[1], day)
        parts = tuple((name, m.start(name), m.end(name)) for name in ("year", "month", "day") if groups.get(name))
        month_text = groups["month"]
        month_style = "num" if month_text.isdigit() else ("name" if month_text.rstrip(".") in _MONTH_NAMES else "abbr")
        style = f"{order}-{month_style}"  # the layout and the month's spelling: "July 18" is not "18 July"
        taken.append((start, end))
        units.append(Unit("date", value, start, end, parts, style))
    return units


_MONTH_NAMES = frozenset(calendar.month_name[1:])

# --- numbers: digits by pattern, words by text2num ----------------------------------------------
_DIGIT_NUMBER = re.compile(
    r"(?<![\w.,])(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?(?P<ord>st|nd|rd|th)?"
    r"(?:\s+(?P<mult>thousand|million|billion|trillion)\b)?(?![\w])",
    re.IGNORECASE,
)
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred "
    "thousand million billion trillion first second third fourth fifth sixth seventh eighth ninth tenth "
    "eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth "
    "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth hundredth "
    "thousandth millionth"
).split()
_NW = "(?:" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + ")"
_WORD_NUMBER = re.compile(r"\b" + _NW + r"(?:(?:\s*-\s*|\s+and\s+|\s+)" + _NW + r")*\b", re.IGNORECASE)
_MULTIPLIERS = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ORD_RESULT = re.compile(r"^(\d+)(st|nd|rd|th)$")
# A longer run of digits is an identifier or noise, not an amount a reader compares: it stays a word. The cap
# keeps every value exact in _EXACT (Decimal's default context keeps 28 digits, so two 30-digit numbers that
# differ in the last digit compared equal) and every int small enough to print (Python refuses > 4,300 digits).
_MAX_DIGITS = 60
_EXACT = Context(prec=2 * _MAX_DIGITS + 20)


@lru_cache(maxsize=65536)
def _words_value(span: str) -> tuple[str, object] | None:
    from text_to_num import alpha2digit

    result = alpha2digit(" ".join(span.lower().split()), "en", threshold=0).strip()
    if result.isdigit() and len(result) <= _MAX_DIGITS:
        return "num", Decimal(result)
    m = _ORD_RESULT.match(result)
    return ("ord", int(m.group(1))) if m and len(m.group(1)) <= _MAX_DIGITS else None


def _number_units(text: str, blocked: bytearray) -> list[Unit]:
    """Numbers outside the `blocked` characters (a mask: 1 = taken by a date); marks what it takes."""
    units = []

    def free(s: int, e: int) -> bool:
        return 1 not in blocked[s:e]

    for m in _DIGIT_NUMBER.finditer(text):
        if not free(m.start(), m.end()) or max(len(m.group("int")), len(m.group("frac") or "")) > _MAX_DIGITS:
            continue
        if m.group("ord"):
            if m.group("frac") or m.group("mult"):
                continue
            units.append(Unit("ord", int(m.group("int").replace(",", "")), m.start(), m.end(), style="digits"))
            continue
        try:
            value = Decimal(m.group("int").replace(",", "") + (f".{m.group('frac')}" if m.group("frac") else ""))
        except InvalidOperation:  # pragma: no cover - the pattern only admits digits
            continue
        if m.group("mult"):
            value = _EXACT.multiply(value, _MULTIPLIERS[m.group("mult").lower()])
        style = "commas" if "," in m.group("int") else "digits"
        units.append(Unit("num", value.normalize(_EXACT), m.start(), m.end(), style=style))
        blocked[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    for m in _WORD_NUMBER.finditer(text):
        if not free(m.start(), m.end()):
            continue
        parsed = _words_value(m.group(0))
        if parsed is None:
            continue
        kind, value = parsed
        units.append(
            Unit(
                kind,
                value.normalize(_EXACT) if isinstance(value, Decimal) else value,
                m.start(),
                m.end(),
                style="words",
            )
        )
    return units


# --- words ---------------------------------------------------------------------------------------
# A chunk is a whitespace-free run, with NQ's detached clitics re-attached ("fund 's" reads "fund's").
_CHUNK = re.compile(r"\S+(?:\s+(?:'s|'re|'ve|'ll|'d|'m|n't)(?!\S))?", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\s*['’]s$", re.IGNORECASE)
POSSESSIVE = "possessive"  # the style of a word read off a possessive chunk


# Words repeat across contexts: normalising each distinct chunk once halves a cold parse.
_normalized_chunk = lru_cache(maxsize=131072)(normalize_answer)
_CORE = re.compile(r"[^\W_](?:.*[^\W_])?", re.DOTALL)


@lru_cache(maxsize=8192)
def units_of(text: str) -> tuple[Unit, ...]:
    """The text read as dates, numbers, ordinals and normalised words, in order."""
    dates = _date_units(text)
    blocked = bytearray(len(text))
    for u in dates:
        blocked[u.start : u.end] = b"\x01" * (u.end - u.start)
    numbers = _number_units(text, blocked)
    for u in numbers:
        blocked[u.start : u.end] = b"\x01" * (u.end - u.start)
    values = sorted(dates + numbers, key=lambda u: u.start)
    units: list[Unit] = []
    for m in _CHUNK.finditer(text):
        s, e = m.start(), m.end()
        if 1 in blocked[s:e]:
            continue
        chunk, style = m.group(0), ""
        # A possessive is its word: "Hannibal 's" (NQ's tokenisation) and "Hannibal's" name Hannibal, so an
        # old answer left standing as a possessive is still found, and a rewrite leaves the clitic in place.
        clitic = _POSSESSIVE.search(chunk)
        if clitic and clitic.start() > 0:
            chunk, style = chunk[: clitic.start()], POSSESSIVE
        word = _normalized_chunk(chunk)
        # The unit spans the chunk without its outer punctuation: "paris." is "paris" and a full stop.
        core = _CORE.search(chunk)
        if core:
            s, e = s + core.start(), s + core.end()
        for token in word.split():
            units.append(Unit("word", token, s, e, style=style))
    units.extend(values)
    units.sort(key=lambda u: u.start)
    return tuple(units)


def _year_like(unit: Unit) -> bool:
    v = unit.value
    return unit.kind == "num" and unit.style == "digits" and v == v.to_integral_value() and 1000 <= v <= 2100


def dates_or_years(text: str) -> list[Unit]:
    """The dates and bare years (four digits, 1000-2100) of a text: what a reader takes for an answer to "when"."""
    return [u for u in units_of(text) if u.kind == "date" or _year_like(u)]


def units_match(answer: Unit, found: Unit) -> bool:
    if answer.kind == "date" and found.kind == "date":
        (ay, am, ad), (ty, tm, td) = answer.value, found.value
        if am != tm:
            return False
        if ad is not None and td != ad:  # the answer names a day: the text must name the same one
            return False
        if ay is not None and ty is not None and ay != ty:
            return False
        if ay is not None and ty is None and ad is None:  # "July" alone is not "July 2018"
            return False
        return True
    if _year_like(answer):  # a year is written in digits: "2,018" and "two thousand eighteen" are amounts
        if found.kind == "date":
            return found.value[0] is not None and found.value[0] == int(answer.value)
        return _year_like(found) and found.value == answer.value
    return answer.kind == found.kind and answer.value == found.value


def _how(units: Iterable[Unit]) -> str:
    kinds = {u.kind for u in units}
    return "date" if "date" in kinds else ("number" if kinds & {"num", "ord"} else "same")


def find_forms(text: str, answer: str) -> list[Form]:
    """Every occurrence of the answer in the text, in any spelling of its dates and numbers."""
    needle = units_of(answer)
    if not needle or not text:
        return []
    hay = units_of(text)
    n = len(needle)
    forms = []
    i = 0
    while i + n <= len(hay):
        if all(units_match(a, hay[i + j]) for j, a in enumerate(needle)):
            start, end = hay[i].start, hay[i + n - 1].end
            if needle[-1].style == POSSESSIVE and hay[i + n - 1].style == POSSESSIVE:
                # the answer is itself a possessive ("McDonald's"): its form takes the clitic along
                clitic = re.match(r"\s*['’]s", text[end:], re.IGNORECASE)
                end += clitic.end() if clitic else 0
            raw = text[start:end]
            same = [u.kind for u in needle] == [u.kind for u in hay[i : i + n]] and all(
                a.style == f.style or a.kind == "word" for a, f in zip(needle, hay[i : i + n], strict=True)
            )
            forms.append(Form(start, end, raw, "same" if same else _how(hay[i : i + n])))
            i += n
        else:
            i += 1
    return forms


def mentions_in_any_form(text: str, answers: str | Iterable[str]) -> bool:
    answers = [answers] if isinstance(answers, str) else list(answers)
    return any(find_forms(text, a) for a in answers if a and a.strip())


def date_parts(answer: str) -> tuple[bool, bool, bool] | None:
    """Which of (year, month, day) a date answer gives; a bare year gives the year only; None if no date."""
    units = [u for u in units_of(answer) if u.kind == "date" or _year_like(u)]
    if len(units) != 1:
        return None
    u = units[0]
    return (True, False, False) if u.kind == "num" else tuple(p is not None for p in u.value)


def answer_kind(answer: str) -> str:
    """ "date" (a date or a bare year), "number", "name" (capitalised words) or "other"."""
    units = units_of(answer)
    if any(u.kind == "date" for u in units) or (len(units) == 1 and _year_like(units[0])):
        return "date"
    if any(u.kind in ("num", "ord") for u in units):
        return "number"
    if head_word(answer):
        return "name"
    return "other"


# ------------------------------------------------------------------------------------------ names

_FUNCTION_WORDS = frozenset(
    """
a an the and or of to in on at by for with from as de del della di da du des la le van von der den y e et
""".split()
)
# Titles and generic nouns: true of many names, so they do not say which one is meant.
_NOT_DISTINCTIVE = frozenset(
    """
king queen prince princess emperor empress pope president general captain duke duchess earl lord lady sir dame saint st
mr mrs ms dr jr sr junior senior
empire kingdom republic dynasty state states federation union confederation commonwealth territory province region
county district city town village river lake sea ocean bay gulf strait channel island islands mountain mountains mount
valley desert forest peninsula coast falls canal university college school academy institute company corporation
corp inc ltd co group party church cathedral temple palace castle tower bridge street road avenue square park museum
hall house building centre center station airport stadium hospital hotel theatre theater award awards prize cup
league club team band army navy force forces war battle act treaty court council committee department ministry office
agency association society foundation festival series show season episode album song film movie day year century
era age period revolution movement system project program programme north south east west northern southern eastern
western new old great upper lower
""".split()
)
_ROMAN = re.compile(r"^(?=[MDCLXVI])M*(C[MD]|D?C{0,3})(X[CL]|L?X{0,3})(I[XV]|V?I{0,3})$")
_NAME_WORD = re.compile(r"[^\W\d_][\w'’.-]*")


def _name_candidates(answer: str) -> list[str]:
    """The answer's capitalised words outside function words, titles, numerals and generic nouns, in order."""
    words = [w.strip(".'’-") for w in _NAME_WORD.findall(answer)]
    return [
        w
        for w in words
        if w
        and w[0].isupper()
        and w.lower() not in _FUNCTION_WORDS
        and w.lower() not in _NOT_DISTINCTIVE
        and not _ROMAN.match(w)
    ]


def head_word(answer: str) -> str | None:
    """The distinctive word of a name (see the module docstring), or None when the answer has no
    capitalised word outside titles, numerals and generic nouns."""
    candidates = _name_candidates(answer)
    return candidates[-1] if candidates else None


def name_words(answer: str) -> set[str]:
    """Every capitalised word that could name the answer on its own (head_word's candidates), casefolded."""
    return {w.casefold() for w in _name_candidates(answer)}


def distinctive_word(answer: str) -> str | None:
    """The head of a multi-word name: the word whose survival alone still points at the answer."""
    if len(answer.split()) < 2 or any(u.kind != "word" for u in units_of(answer)):
        return None  # dates and numbers have their own forms; "July" is no name's head
    head = head_word(answer)
    return head if head and not any(u.kind != "word" for u in units_of(head)) else None


def name_parts(answer: str) -> list[str]:
    """Every word of a multi-word name that names it on its own, the head last: "The Alabama Crimson
    Tide" → ["Alabama", "Crimson", "Tide"]. A surviving "Alabama overcame a 13-0 deficit" still says
    who won after the head was swapped (found in review)."""
    if distinctive_word(answer) is None:
        return []
    parts = [w for w in _name_candidates(answer) if not any(u.kind != "word" for u in units_of(w))]
    return list(dict.fromkeys(parts))


def head_occurrences(text: str, head: str) -> list[Form]:
    """Case-sensitive whole-word occurrences of a name's head word."""
    pattern = re.compile(r"(?<![\w'’-])" + re.escape(head) + r"(?![\w-])")
    return [Form(m.start(), m.end(), m.group(0), "name_part") for m in pattern.finditer(text)]


_DERIVED = "(ism|ist|ists|istic|isms)"


def derived_occurrences(text: str, part: str) -> list[Form]:
    """Words of an "-ism" name's family: "social Darwinists" still answers for "social Darwinism"
    (found in review). Only the -ism family: a longer word that merely starts with a name ("Lincolnshire")
    is another thing."""
    if not part.endswith("ism") or len(part) < 7:
        return []
    stem = part[:-3]
    pattern = re.compile(r"(?<![\w'’-])" + re.escape(stem) + _DERIVED + r"(?![\w-])")
    return [Form(m.start(), m.end(), m.group(0), "name_part") for m in pattern.finditer(text) if m.group(0) != part]


def name_part_left(text: str, answer: str, ignore: Iterable[tuple[int, int]] = ()) -> list[Form]:
    """Occurrences of any name part of a multi-word answer (its head, and words like the "Alabama" of
    "The Alabama Crimson Tide") outside full forms of the answer and outside the spans in `ignore`
    (e.g. the new answer's own words)."""
    parts = name_parts(answer)
    if not parts:
        return []
    covered = [(f.start, f.end) for f in find_forms(text, answer)] + list(ignore)
    found = [f for part in parts for f in [*head_occurrences(text, part), *derived_occurrences(text, part)]]
    return sorted((f for f in found if not any(s <= f.start and f.end <= e for s, e in covered)), key=lambda f: f.start)


# ------------------------------------------------------------------------------------- rendering


def render_like(found: Unit, text: str, new: Unit) -> str | None:
    """`new`'s value written the way `found` is written in `text` (digits, commas, words; a date's
    layout, month spelling and spacing), or None when it cannot be (a year-only value for a full date)."""
    if found.kind == "date":
        if new.kind == "date":
            ny, nm, nd = new.value
        elif _year_like(new):
            ny, nm, nd = int(new.value), None, None
        else:
            return None
        pieces = text[found.start : found.end]
        offset = found.start
        values = {"year": ny, "month": nm, "day": nd}
        # Substitute from the right, so earlier offsets stay valid.
        for name, s, e in sorted(found.parts, key=lambda p: -p[1]):
            old = text[s:e]
            value = values[name]
            if value is None:
                if name == "year" or new.kind == "date":
                    return None
                continue  # a year answer inside a full date: only the year changes
            if name == "month":
                if old.isdigit():
                    rendered = f"{value:0{len(old)}d}"
                elif old.rstrip(".") in _MONTH_NAMES:
                    rendered = calendar.month_name[value]
                else:
                    rendered = calendar.month_abbr[value] + ("." if old.endswith(".") else "")
            else:
                rendered = f"{value:0{len(old)}d}" if old.isdigit() else str(value)
            pieces = pieces[: s - offset] + rendered + pieces[e - offset :]
        return pieces
    if found.kind == "num" and new.kind == "num":
        value = new.value
        if found.style == "words":
            if value != value.to_integral_value():
                return None
            from num2words import num2words

            try:
                words = num2words(int(value)).replace(",", "")
            except OverflowError:  # beyond the number names num2words knows
                return None
            raw = text[found.start : found.end]
            return words.capitalize() if raw[:1].isupper() else words
        if found.style == "commas" and value == value.to_integral_value():
            return f"{int(value):,}"
        return format(value, "f")
    if found.kind == "ord" and new.kind == "ord":
        if found.style == "words":
            from num2words import num2words

            try:
                return num2words(new.value, to="ordinal")
            except OverflowError:
                return None
        suffix = "th" if 10 <= new.value % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(new.value % 10, "th")
        return f"{new.value}{suffix}"
    return None


def single_value(answer: str) -> Unit | None:
    """The one date, number or ordinal an answer consists of (articles and punctuation aside), or None."""
    units = units_of(answer)
    values = [u for u in units if u.kind != "word"]
    return values[0] if len(values) == 1 and len(units) == 1 else None


def value_unit_at(text: str, start: int, end: int) -> Unit | None:
    return next((u for u in units_of(text) if u.start == start and u.end == end and u.kind != "word"), None)
