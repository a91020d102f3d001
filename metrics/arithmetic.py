"""Is a number answer still derivable from a text by the arithmetic a reader does without thinking?

Reviews found perturbed contexts that drop or replace a count while the parts that add up to it
stay: "86 episodes" removed (or swapped for 87) beside "the first five seasons each consist of
thirteen episodes, and the sixth season twenty - one" (5 × 13 + 21 = 86); "nine PIN zones" swapped
for seven beside "eight regional zones and one functional zone" (8 + 1). A reader recovers the old
answer, so the case is invalid. The check looks within one sentence (where such parts are listed)
for a sum of two or three of its numbers, a product of two, or a product plus a third, that equals
the answer. Years are left out (1998 + 2 is no derivation), and so are answers below 5, which small
numbers reach by chance. What it fires on: docs/results/checks.md.
"""

from __future__ import annotations

import itertools
import re
from decimal import Decimal, InvalidOperation

from .checks import SENTENCE_BREAK

_UNITS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve "
        "thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_NUMBER = re.compile(
    r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?"
    rf"|(?:{'|'.join(_TENS)})(?:\s*-\s*(?:{'|'.join(list(_UNITS)[1:10])}))?"
    rf"|{'|'.join(sorted(_UNITS, key=len, reverse=True))})(?![\w])",
    re.IGNORECASE,
)
MIN_ANSWER = 5
MAX_NUMBERS = 8  # per sentence: a table-like sentence of many numbers reaches anything


def _value(token: str) -> Decimal | None:
    text = token.lower().replace(",", "")
    if text in _UNITS:
        return Decimal(_UNITS[text])
    parts = [p.strip() for p in text.split("-")]
    if parts[0] in _TENS:
        return Decimal(_TENS[parts[0]] + (_UNITS.get(parts[1], 0) if len(parts) > 1 else 0))
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def numbers_in(text: str) -> list[Decimal]:
    """The cardinal numbers of a text, digits or words ("twenty - one", NQ's spaced hyphen, is 21)."""
    return [v for v in (_value(m.group()) for m in _NUMBER.finditer(text)) if v is not None]


def _year_like(value: Decimal) -> bool:
    return value == value.to_integral_value() and 1000 <= value <= 2100


def answer_number(answer: str) -> Decimal | None:
    """The answer as one number, when it is one ("86", "twenty - one", "1,200"), else None."""
    found = list(_NUMBER.finditer(answer.strip()))
    if len(found) != 1 or found[0].group().strip() != answer.strip().rstrip("."):
        return None
    return _value(found[0].group())


# A product of measured values is rounded where it is reported: land area × density gives a population to
# within a fraction of a percent.
PRODUCT_TOLERANCE = Decimal("0.005")


def _within(value: Decimal, target) -> bool:
    return abs(value - Decimal(target)) <= PRODUCT_TOLERANCE * Decimal(target)


def _rounded_product(a, b, target) -> bool:
    fractional = a != int(a) or b != int(b)
    return fractional and _within(Decimal(a) * Decimal(b), target)


def derivation(text: str, answer: str) -> str | None:
    """How the text still gives the number answer ("5 × 13 + 21 = 86"), or None."""
    target = answer_number(answer)
    if target is None:  # "$19.8 trillion": its parts can still add up to its number
        found = [_value(m.group()) for m in _NUMBER.finditer(answer)]
        return _rounded_sum(text, found[0]) if len(found) == 1 and found[0] is not None else None
    if target < MIN_ANSWER or _year_like(target):
        return None
    for sentence in SENTENCE_BREAK.split(text):
        values = [v for v in numbers_in(sentence) if not _year_like(v) and v != target]
        # A quotient by a measured ratio ("3,130 lb … 6.2 pounds per horsepower" for 505 hp) is specific
        # enough to look for in a sentence of any length.
        for x, y in itertools.permutations(values, 2):
            if y != int(y) and y > 1 and _within(Decimal(x) / Decimal(y), target):
                return f"{x} ÷ {y} ≈ {target}"
        if len(values) < 2 or len(values) > MAX_NUMBERS:
            continue
        for a, b in itertools.combinations(values, 2):
            if a + b == target:
                return f"{a} + {b} = {target}"
            if 1 not in (a, b) and (a * b == target or _rounded_product(a, b, target)):
                return f"{a} × {b} = {target}"
        for a, b, c in itertools.permutations(values, 3):
            if a <= b and a + b + c == target and b <= c:
                return f"{a} + {b} + {c} = {target}"
            if a < b and 1 not in (a, b) and a * b + c == target:
                return f"{a} × {b} + {c} = {target}"
    return _rounded_sum(text, target)


# Parts of a total reported with one decimal each ("$14.3 trillion" held by the public, "$5.4 trillion"
# intragovernmental, "a combined total of $19.8 trillion") add up to it within their rounding, across sentences.
SUM_TOLERANCE = Decimal("0.006")


def _rounded_sum(text: str, target) -> str | None:
    if target == int(target):
        return None
    parts = [v for v in numbers_in(text) if v != int(v) and not _year_like(v) and v != target]
    for a, b in itertools.combinations(parts[:MAX_NUMBERS], 2):
        if abs(Decimal(a) + Decimal(b) - Decimal(target)) <= SUM_TOLERANCE * Decimal(target):
            return f"{a} + {b} ≈ {target}"
    return None


# A majority of a chamber is a little over half of it: "A political party must secure 172 seats to obtain
# and preserve a majority" gives the chamber's size (about 344) to a reader asked for it. Compared within
# 5%: the counts a seed's gold and its text give often differ by a few seats (this very seed's gold is
# 332 while its parts, 272 + 70, make 342), and a reader who can put the answer within a few seats
# still has it in the passage (a case read invalid).
MAJORITY_TOLERANCE = Decimal("0.05")
_MAJORITY = re.compile(r"\bmajority\b", re.IGNORECASE)


def majority_size(text: str, answer: str) -> str | None:
    """How a stated majority still gives the number answer ("majority 172 → about 344 ≈ 332"), or None."""
    target = answer_number(answer)
    if target is None or target < MIN_ANSWER or _year_like(target):
        return None
    for sentence in SENTENCE_BREAK.split(text):
        if not _MAJORITY.search(sentence):
            continue
        for value in numbers_in(sentence):
            if value >= MIN_ANSWER and not _year_like(value) and abs(2 * value - target) <= MAJORITY_TOLERANCE * target:
                return f"majority {value} → about {2 * value} ≈ {target}"
    return None


# Read blind on held-out NQ swaps: a swap breaks an identity the old answer stood in, and the
# rest of the identity still gives it. Each looks only at a sentence that holds the new answer, the one
# the swap changed, so that a coincidence elsewhere in the passage does not count.


def _sentences_with(text: str, new: str) -> list[str]:
    new_value = answer_number(new)
    found = []
    for sentence in SENTENCE_BREAK.split(text):
        if new_value is not None and new_value in numbers_in(sentence):
            found.append(sentence)
        elif new_value is None and new.strip() and new.strip().lower() in sentence.lower():
            found.append(sentence)
    return found


def remainder(text: str, answer: str, new: str) -> str | None:
    """How a whole and its other parts still give the old number answer ("31 teams : 24 in the United
    States and 8 in Canada" with 7 swapped for 8: 31 − 24 = 7), or None."""
    target, new_value = answer_number(answer), answer_number(new)
    if target is None or new_value is None or target < MIN_ANSWER or _year_like(target):
        return None
    for sentence in _sentences_with(text, new):
        values = [v for v in numbers_in(sentence) if not _year_like(v) and v != new_value]
        if len(values) < 2 or len(values) > MAX_NUMBERS:
            continue
        for whole in values:
            parts = [v for v in values if v < whole]
            for a in parts:
                if whole - a == target:
                    return f"{whole} − {a} = {target}"
            for a, b in itertools.combinations(parts, 2):
                if whole - a - b == target:
                    return f"{whole} − {a} − {b} = {target}"
    return None


_YEARS_SPAN = re.compile(
    rf"({_NUMBER.pattern})\s*(?:-\s*)?years?\b(\s+(?:later|earlier|after|before)\b)?", re.IGNORECASE
)


def elapsed_years(text: str, answer: str, new: str) -> str | None:
    """How a stated span of years from another year still gives the old year answer ("aired for 54 years
    from April 2 , 1956 , to September 17 , 2011" with 2011 swapped for 2010: 1956 + 54), or None. A span
    that counts from an earlier sentence ("In 1966 , … . Six years later , … in 1972" with 1972 swapped
    for 1971) may take its year from the sentence before."""
    target = answer_number(answer)
    if target is None or not _year_like(target):
        return None
    sentences = SENTENCE_BREAK.split(text)
    for sentence in _sentences_with(text, new):
        # two pieces back: the split breaks at initials ("Lyndon B. Johnson")
        at = sentences.index(sentence)
        before = " ".join(sentences[max(0, at - 2) : at])
        for m in _YEARS_SPAN.finditer(sentence):
            span = _value(m.group(1))
            if span is None or _year_like(span):
                continue
            starts = [v for v in numbers_in(sentence) if _year_like(v) and v != target]
            if m.group(2):
                starts += [v for v in numbers_in(before) if _year_like(v) and v != target]
            for year in starts:
                if year + span == target or year - span == target:
                    return f"{year} {'+' if year + span == target else '−'} {span} years = {target}"
    return None


_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:%|percent|per\s+cent)\s*$", re.IGNORECASE)


def share(text: str, answer: str, new: str) -> str | None:
    """How two counts of the sentence still give the old percentage ("179,948,346 or 62.5 % of the total
    U.S. population of 308,745,358" with 58.28 % swapped for 62.5: 58.28 %), or None. Matched to the
    answer's own precision; a whole percentage needs counts of 10 or more, which small numbers would
    reach by chance."""
    m = _PERCENT.match(answer)
    if not m:
        return None
    target = Decimal(m.group(1))
    places = -target.as_tuple().exponent
    tolerance = Decimal(5) / Decimal(10) ** (places + 1)
    new_number = _PERCENT.match(new)
    new_value = Decimal(new_number.group(1)) if new_number else answer_number(new)
    for sentence in _sentences_with(text, new_number.group(1) if new_number else new):
        values = [v for v in numbers_in(sentence) if v > 0 and v != new_value and v != target]
        if len(values) > MAX_NUMBERS:
            continue
        for a, b in itertools.permutations(values, 2):
            if a < b and (places or a >= 10) and abs(100 * a / b - target) <= tolerance:
                return f"{a} / {b} = {100 * a / b:.{places + 2}f} % ≈ {target} %"
    return None
