"""A date swap moves the passage's own timeline with it.

When an answer's year moves and the years around it stay, the passage stops adding up (a promotion won "at
the end of the 2004–05 season" in a final dated 2006; a release "over the following three months" after a
completion a year away; "its 20th and final season" in 2010 after a premiere moved to 1991). Moving every
year of the passage by the same step keeps its order, intervals, counts and seasons as they were; a year
the question names stays, since the question fixes it.
"""

from __future__ import annotations

import re

# A four-digit figure with a unit after it is a measure, not a year ("5 ft ( 1524 mm )").
_UNIT = r"\s*(?:mm|cm|km|ft|kg|lb|lbs|mi|km/h|mph|metres|meters|feet|miles|tons|tonnes|hp|kW|MW|Hz|°)(?![\w])"
_YEAR = re.compile(r"(?<![\d.,])(1\d{3}|20\d{2})(?![\d]|s\b|'s\b|" + _UNIT + ")")
_SEASON_TAIL = re.compile(r"(\s*(?:--|–|-|/)\s*)(\d{2})(?!\d)(?!\s*(?:--|–|-|/)\s*\d)")
# A season or range ends after it begins ("2004 -- 05", "1914 -- 18", "1999 -- 00"); "2017 - 05" is no season
# but the month of an ISO date ("( 2017 - 05 - 18 )", which NQ's infoboxes write beside every written date).
_SPAN_YEARS = 30


def year_of(answer: str) -> int | None:
    m = _YEAR.search(answer)
    return int(m.group(1)) if m else None


def shift_timeline(
    context: str, question: str, old_year: int, new_year: int, skip: list[tuple[int, int]]
) -> tuple[str, list[dict]]:
    """The context with every year moved by new_year - old_year (outside `skip`, the answer's own spans, and
    never a year the question names), and the moves made. Every move keeps the text's length, so offsets
    into the context stay valid."""
    step = new_year - old_year
    asked = {int(y) for y in _YEAR.findall(question)}
    moves: list[dict] = []
    out = list(context)
    for m in _YEAR.finditer(context):
        year = int(m.group(1))
        if year in asked:
            continue
        moved = str(year + step)
        if len(moved) != 4:
            continue
        # The answer's own span is the swap's to replace; the season it opens ("( 2002 -- 03 )") ends here.
        if not any(s <= m.start() < e for s, e in skip):
            out[m.start() : m.end()] = moved
            moves.append({"start": m.start(), "old": m.group(1), "new": moved})
        tail = _SEASON_TAIL.match(context, m.end())
        if tail and 0 < (int(tail.group(2)) - year) % 100 <= _SPAN_YEARS:
            start = tail.start(2)
            moved_tail = f"{(int(tail.group(2)) + step) % 100:02d}"
            out[start : start + 2] = moved_tail
            moves.append({"start": start, "old": tail.group(2), "new": moved_tail})
    return "".join(out), moves
