"""How far a swapped answer stands from the truth: new years, dates and quantities made in code at a
chosen distance from the old answer, instead of whatever distance the pivot happens to propose.

ClashEval found that models adopt a passage's answer less the further it deviates from what they know;
a ladder of deviations lets a user ask for near (hard to tell from the truth, so readily adopted) or far
(absurd to a reader who knows) swaps. A name has no distance this module can compute: a seed whose
answer is not a year, a date or a written-out-in-digits quantity cannot reach a code-made level.
"""

from __future__ import annotations

import calendar
import hashlib
import re
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from metrics.surface_forms import answer_kind

# "proposed": the pivot proposes the new answer (the generator's own distance).
DISTANCES = ("proposed", "near", "mid", "far", "extreme")
YEAR_STEPS = {"near": 1, "mid": 5, "far": 25, "extreme": 100}
FACTORS = {"near": Decimal("1.1"), "mid": Decimal("1.5"), "far": Decimal("3"), "extreme": Decimal("10")}
# Years after this one would be dates of events that have not happened; the step goes the other way first.
LATEST_YEAR = 2026
_WHEN = re.compile(r"^\s*(?:when|what year|which year|in what year|in which year)\b", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)(1\d{3}|20\d{2})(?!\d)")
# "the 1840s", "the late 1960s": a decade moves by whole decades.
_DECADE = re.compile(r"(?<!\d)(1\d{2}0|20[0-2]0)s\b")
_NUMBER = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\d,]*\d)")


def _order(key: str, pair: list[str]) -> list[str]:
    """Both directions, in an order drawn from the seed: a ladder that always went up would teach a target
    that swapped values run high."""
    flip = hashlib.sha256(key.encode()).digest()[0] % 2
    return pair[::-1] if flip else pair


_MONTHS = tuple(calendar.month_name)[1:]
_DAY_MONTH = re.compile(r"\b(\d{1,2})\s+(" + "|".join(_MONTHS) + r")\b|\b(" + "|".join(_MONTHS) + r")\s+(\d{1,2})\b")


def _days(answer: str, year: int, step: int, key: str) -> list[str]:
    """A full date moved by `step` weeks within its year (a question that names the year fixes it)."""
    m = _DAY_MONTH.search(answer)
    if m is None:
        return []
    day = int(m.group(1) or m.group(4))
    month = _MONTHS.index(m.group(2) or m.group(3)) + 1
    try:
        old = date(year, month, day)
    except ValueError:
        return []
    out = []
    for moved in _order(key, [old - timedelta(weeks=step), old + timedelta(weeks=step)]):
        if moved.year != year:
            continue
        name = _MONTHS[moved.month - 1]
        text = f"{moved.day} {name}" if m.group(1) else f"{name} {moved.day}"
        out.append(answer[: m.start()] + text + answer[m.end() :])
    return out


def _years(answer: str, step: int, key: str, asked: frozenset[int] = frozenset()) -> list[str]:
    """Every year of the answer moved by the same step (a range "Between 1955 and 1968" keeps its length)."""
    years = [int(y) for y in _YEAR.findall(answer)]
    if not years:
        return []
    if years[0] in asked:
        return _days(answer, years[0], step, key)
    decade = _DECADE.search(answer) is not None
    if decade:
        step = 10 * max(1, round(step / 10))
    # A year one step further each way is the fallback where the step's own years are taken: the passage holds
    # them, or the timeline would move another year onto the old answer's (1992 beside a 1991 and a 1993).
    further = [] if decade else _order(key, [-step - 1, step + 1])
    out = []
    for ring, delta in enumerate([*_order(key, [-step, step]), *further]):
        if min(years) + delta < 1000:
            continue
        moved = _YEAR.sub(lambda m, d=delta: str(int(m.group(1)) + d), answer)
        out.append((ring >= 2, max(years) + delta > LATEST_YEAR, moved))
    out.sort(key=lambda t: t[:2])  # a future year only when the past one is unusable
    return [text for *_, text in out]


def _decade(answer: str) -> bool:
    """A decade with at most an article and an early / mid / late before it ("the late 1960s", "mid-1990s")."""
    rest = re.sub(r"\b(?:the|early|mid|late|in)\b|-", " ", _DECADE.sub(" ", answer, count=1), flags=re.IGNORECASE)
    return _DECADE.search(answer) is not None and not rest.strip()


def _format(value: Decimal, grouped: bool, decimals: int) -> str:
    quantum = Decimal(1).scaleb(-decimals)
    value = value.quantize(quantum, rounding=ROUND_HALF_UP)
    text = f"{value:,.{decimals}f}" if grouped else f"{value:.{decimals}f}"
    return text


def _significant(value: Decimal, like: str, extra: int = 0) -> Decimal:
    """Rounded to as many significant digits as the old number shows ("1,500,000" has two), so that a
    passage writing round figures gets a round figure."""
    digits = like.replace(",", "").split(".")[0].rstrip("0") or "0"
    keep = max(1, len(digits)) + extra
    if value == 0:
        return value
    exponent = value.adjusted() - keep + 1
    if exponent <= 0:
        return value
    return value.scaleb(-exponent).quantize(Decimal(1), rounding=ROUND_HALF_UP).scaleb(exponent)


def _quantities(answer: str, factor: Decimal, key: str) -> list[str]:
    match = _NUMBER.search(answer)
    if match is None:
        return []
    whole, fraction = match.group(1), match.group(2) or ""
    old = Decimal(whole.replace(",", "") + fraction)
    if old == 0:
        return []
    decimals = len(fraction) - 1 if fraction else 0
    out = []
    for value in _order(key, [old * factor, old / factor]):
        value = _significant(value, whole) if not fraction else value
        text = _format(value, "," in whole, decimals)
        shown = Decimal(text.replace(",", ""))
        if shown == old and not fraction:  # 10,000 x 1.1 rounds back: one more significant digit (11,000)
            text = _format(
                _significant(old * factor if value >= old else old / factor, whole, extra=1), "," in whole, 0
            )
            shown = Decimal(text.replace(",", ""))
        if shown == old:  # 3 x 1.1 rounds back to 3: the nearest distinct value instead
            shown = old + (Decimal(1).scaleb(-decimals) if value >= old else -Decimal(1).scaleb(-decimals))
            text = _format(shown, "," in whole, decimals)
        # 0, and 1 where the old count was plural ("1 episodes"), do not read as a count of the same thing.
        if shown <= 0 or (shown == 1 and old != 1):
            continue
        out.append(answer[: match.start()] + text + answer[match.end() :])
    return out


def shifted_answers(answer: str, level: str, key: str, question: str = "") -> list[str]:
    """New answers at `level` from `answer`, in the order to try them (both directions), or [] when the
    answer has no distance at that level (a name, a number written in words, an ordinal). A year the
    question names stays; a full date in that year moves by weeks instead (near 1, mid 5, far 25, within the
    year)."""
    if level == "proposed":
        raise ValueError("'proposed' is the pivot's own proposal, not a code-made distance")
    if level not in YEAR_STEPS:
        raise ValueError(f"distance: one of {DISTANCES}, got {level!r}")
    kind = "date" if _decade(answer) else answer_kind(answer)
    # "spring 2018", "Between 1955 and 1968": years a when-question asks for, not quantities to scale.
    if kind == "date" or (kind == "number" and _WHEN.match(question) and _YEAR.search(answer) and "," not in answer):
        asked = frozenset(int(y) for y in _YEAR.findall(question))
        return _years(answer, YEAR_STEPS[level], key, asked)
    if kind == "number" and not re.search(r"\d+(st|nd|rd|th)\b", answer):
        return _quantities(answer, FACTORS[level], key)
    return []
