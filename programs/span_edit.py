"""Exact span replacement in code: small LMs replaced only the first occurrence, or the wrong span.

Every form of the old answer a reader recognises is replaced (`metrics.surface_forms`):

- its own spelling (whitespace- and case-tolerant: NQ writes "July 30 , 2017") becomes the new answer
  as proposed, with a sentence-initial capital kept;
- another spelling of the same date or number becomes the new value *in that spelling*: "( 2018 - 07
  - 18 )" → "( 2015 - 03 - 02 )", "three" → "five", "1,000" → "2,500", a year inside a full date
  changes only the year;
- the distinctive word of a multi-word name standing alone ("Lincoln" for "Abraham Lincoln")
  becomes the new answer's distinctive word ("Washington"), unless it is part of another name
  ("Lincoln Memorial", "Mary Todd Lincoln"), which no edit can fix.

A form the new answer cannot be written in (a full date when the proposal is a year, "July 18 , 2018"
for an answer "July 2018", words for a decimal) is left as it is and reported in `unreplaced`: the
case is then rejected as `old_forms_replaceable` rather than shipped with the old answer in it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from metrics.surface_forms import (
    Form,
    distinctive_word,
    find_forms,
    head_occurrences,
    head_word,
    render_like,
    units_match,
    units_of,
)


def span_pattern(span: str) -> re.Pattern:
    """Whole-word, case-insensitive, whitespace-tolerant (NQ text is tokenised: 'July 30 , 2017')."""
    tokens = re.findall(r"\w+|[^\w\s]", span)
    pattern = re.escape(tokens[0])
    for prev, token in zip(tokens, tokens[1:], strict=False):
        # Words need a space between them; punctuation may or may not have one ("30 ," vs "30,").
        pattern += (r"\s+" if prev[-1].isalnum() and token[0].isalnum() else r"\s*") + re.escape(token)
    return re.compile(r"(?<!\w)" + pattern + r"(?!\w)", re.IGNORECASE)


_SENTENCE_END = re.compile(r"(?:^|[.!?:;]\s*[\"'`’”)]*)\s*[\"'`‘“(]*\s*$")


def _match_case(found: str, new: str, before: str = "") -> str:
    # Keep a sentence-initial capital; never lower-case a proper noun the proposal capitalised. A letter
    # whose capital is two letters ("ß" → "SS") stays as proposed: the capital would spell another word.
    # Mid-sentence, a capital of the old name ("head of Starfleet Medical") is not the new answer's: a
    # leading article stays lower-case ("head of the hospital", not "The hospital"); other words of a
    # lower-case proposal are capitalised as before ("the Beatles" for "The Who" mid-sentence stays).
    if found[:1].isupper() and new[:1].islower() and len(new[:1].upper()) == 1:
        if _ARTICLE.match(new) and not _SENTENCE_END.search(before):
            return new
        return new[:1].upper() + new[1:]
    return new


@dataclass
class Replacement:
    start: int
    end: int
    old: str
    new: str
    how: str


@dataclass
class EditResult:
    text: str
    replacements: list[Replacement] = field(default_factory=list)
    unreplaced: list[Form] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.replacements)


def _overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in spans)


def _rewrite(text: str, form: Form, old: str, new: str) -> str | None:
    """The form rewritten unit by unit: words as the new answer has them, dates and numbers in the
    form's own spelling. None when the new answer does not line up with the old one."""
    if form.how == "same":
        return _match_case(form.text, new, text[: form.start])
    found = [u for u in units_of(text) if form.start <= u.start and u.end <= form.end]
    olds, news = units_of(old), units_of(new)
    if not (len(found) == len(olds) == len(news)):
        return None
    out = text[form.start : form.end]
    for f, a, b in sorted(zip(found, olds, news, strict=True), key=lambda t: -t[0].start):
        if units_match(b, f) or (a.kind == b.kind == "word" and a.value == b.value):
            continue  # this unit is unchanged by the swap: keep the text's spelling
        if f.kind == "date" and a.kind == "date" and b.kind != "date":
            return None  # a year cannot stand for a full date written elsewhere
        rendered = new[b.start : b.end] if f.kind == b.kind == "word" else render_like(f, text, b)
        if rendered is None:
            return None
        out = out[: f.start - form.start] + rendered + out[f.end - form.start :]
    return out


_ARTICLE = re.compile(r"(the|a|an)\s+", re.IGNORECASE)
_ARTICLE_BEFORE = re.compile(r"(?<!\w)(the|a|an)\s+$", re.IGNORECASE)
# A determiner or quantifier already before the span takes the new answer without its article: "A single
# won is divided" swapped to "The yen" read "A single The yen is divided" (read invalid).
DETERMINER_BEFORE = re.compile(
    r"(?<!\w)(the|a|an|single|one|each|every|this|that|per|any|no|its|their|his|her|"
    r"our|whose|[\w-]+ 's|[\w-]+'s)\s+$",
    re.IGNORECASE,
)
_CURRENCY = "$£€¥₹"


def _drop_repeated_prefix(before: str, rewritten: str | None) -> str | None:
    """Answers are matched without their article or currency sign, so "The Alabama Crimson Tide" is
    found as the "Alabama Crimson Tide" of "The Alabama Crimson Tide defeated …" and "$19.8 trillion"
    as the "19.8 trillion" of "$19.8 trillion"; a new answer that brings its own would read "The The
    Florida Gators" or "$$20 trillion" (both found in review)."""
    if rewritten is None:
        return None
    sign = before.rstrip()[-1:]
    if sign and sign in _CURRENCY and rewritten.startswith(sign):
        return rewritten[1:].lstrip() or rewritten
    article = _ARTICLE.match(rewritten) if DETERMINER_BEFORE.search(before) else None
    return rewritten[article.end() :] if article and rewritten[article.end() :] else rewritten


_UNIT_AFTER = re.compile(r"^\s*(%|percent\b|per cent\b)", re.IGNORECASE)


def _drop_repeated_unit(rewritten: str, after: str) -> str:
    """A number answer is matched without the unit that follows it ("20" of "20 %"); a new answer that brings
    its own would read "21 % %" (read invalid on a swap made at a code-made distance)."""
    unit = _UNIT_AFTER.match(after)
    if unit is None:
        return rewritten
    own = re.search(r"\s*" + re.escape(unit.group(1)) + r"$", rewritten, re.IGNORECASE)
    return rewritten[: own.start()] if own and rewritten[: own.start()].strip() else rewritten


def _fit_to_neighbours(text: str, form: Form, rewritten: str | None) -> str | None:
    """The rewritten form without the article, currency sign or unit that the text around it already has."""
    rewritten = _drop_repeated_prefix(text[: form.start], rewritten)
    return None if rewritten is None else _drop_repeated_unit(rewritten, text[form.end :])


_INDEFINITE_BEFORE = re.compile(r"(?<!\w)(an?)(\s+)$", re.IGNORECASE)
# Spelt with a vowel, said with a consonant ("a university", "a one-off"), and the reverse ("an hour").
_VOWEL_LETTER_CONSONANT_SOUND = re.compile(r"(?:uni|use|usu|uti|eu|ewe|one\b|once\b|u[bcfhjkqrstn][aeiou])", re.I)
_SILENT_H = re.compile(r"(?:hour|honest|honou?r|heir)", re.I)


def _agree_article(before: str, new: str) -> str:
    """`before` with an indefinite article right before the new answer matching its first sound: "An
    astronaut" swapped to "scientist" read "An scientist", "an protest singer" (both read invalid)."""
    m = _INDEFINITE_BEFORE.search(before)
    word = new.lstrip("\"'“‘`( ")
    if not m or not word or not word[0].isalpha() or word[:1].isupper() and word.split()[0].isupper():
        return before  # no article, or an acronym whose letter names decide ("an FBI agent")
    vowel = word[0].lower() in "aeiou"
    an = (vowel and not _VOWEL_LETTER_CONSONANT_SOUND.match(word)) or bool(_SILENT_H.match(word))
    article = m.group(1)
    wanted = ("an" if an else "a") if article.islower() else ("An" if an else "A")
    if article.isupper() and len(article) > 1:
        wanted = wanted.upper()
    return before[: m.start(1)] + wanted + m.group(2)


_CAPITALISED = re.compile(r"[A-Z][\w'’.-]*")


def _stands_alone(text: str, start: int, end: int, title_words: frozenset[str]) -> bool:
    """The head word is not glued to another capitalised word ("Lincoln Memorial", "Mary Todd Lincoln");
    a title before it ("President Lincoln") and a sentence start are fine."""
    after = re.match(r"\s+(\S+)", text[end:])
    if after and _CAPITALISED.fullmatch(after.group(1)):
        return False
    before = re.search(r"(\S+)\s+$", text[:start])
    if before:
        word = before.group(1)
        if _CAPITALISED.fullmatch(word) and word.lower().strip(".") not in title_words | _LEADING_WORDS:
            return False
    return True


# Capitalised only because they open a sentence or a name: "The Won", "In Lincoln's time".
_LEADING_WORDS = frozenset(
    "the a an in on at by for of from to with as and but or this that these those his her its "
    "their when while after before since".split()
)
_TITLES = frozenset(
    "king queen prince princess emperor empress pope president general captain duke earl lord lady sir "
    "dame saint st mr mrs ms dr".split()
)


_ATTACHED = re.compile(r"[\w$£€¥₹]")


def _attached(answer: str) -> tuple[str, str]:
    """What an answer holds outside its units and glued to them: "mid-" of "mid-2061", "-year-old" of
    "22-year-old", "US$" of "US$5 million" (a word glued to a number is not a unit of its own); quotes
    and spaced words are not attached."""
    units = units_of(answer)
    if not units:
        return "", ""
    prefix, suffix = answer[: units[0].start], answer[units[-1].end :]
    prefix = prefix if prefix and not prefix[-1].isspace() and _ATTACHED.search(prefix) else ""
    suffix = suffix if suffix and not suffix[0].isspace() and _ATTACHED.search(suffix) else ""
    return prefix, suffix


def _widened(text: str, form: Form, prefix: str, suffix: str) -> Form:
    """The form with the old answer's attached text around it (`_attached`), where the text has it: the
    units of "mid-2061" are the number 2061, so "mid-2061" swapped to "mid-2062" read "mid-mid-2062" and
    "22-year-old" to "30-year-old" read "30-year-old-year-old"."""
    start = form.start - len(prefix) if prefix and text[: form.start].lower().endswith(prefix.lower()) else form.start
    end = form.end + len(suffix) if suffix and text[form.end :].lower().startswith(suffix.lower()) else form.end
    return form if (start, end) == (form.start, form.end) else Form(start, end, text[start:end], form.how)


def _with_article(text: str, form: Form, old: str, new: str) -> Form:
    """The form with the article before it, where the old answer has one and the new answer is a name
    without one: the answer is replaced whole ("within the Pittsburgh metropolitan area" with "Los Angeles"
    swapped in read "within the Los Angeles"). A common noun keeps the text's article ("the ovary")."""
    if not _ARTICLE.match(old) or _ARTICLE.match(new) or not new[:1].isupper() or _ARTICLE.match(form.text):
        return form
    m = _ARTICLE_BEFORE.search(text[: form.start])
    if m is None or m.group(1).lower() != _ARTICLE.match(old).group(1).lower():
        return form
    return Form(m.start(), form.end, text[m.start() : form.end], form.how)


def replace_forms(text: str, olds: Iterable[str], new: str, whole_name: bool = False) -> EditResult:
    """Replace every recognised form of every old answer (longest alias first, so aliases nested in
    it go too) and the standalone distinctive word of a multi-word old name: by the new answer's head
    ("Foster" → "Rowling"), or by the whole new answer with `whole_name`, for kinds whose head does not name
    them alone (places: "shooting … in Pittsburgh" with "Los Angeles" swapped in read "in Angeles")."""
    olds = sorted({o for o in olds if o and o.strip()}, key=len, reverse=True)
    claimed: list[tuple[int, int]] = []
    edits: list[Replacement] = []
    unreplaced: list[Form] = []
    # A new answer without attached text of its own ("30") goes inside the text's ("30-year-old").
    new_has_attached = any(_attached(new))
    for old in olds:
        prefix, suffix = _attached(old) if new_has_attached else ("", "")
        for form in (_with_article(text, _widened(text, f, prefix, suffix), old, new) for f in find_forms(text, old)):
            if _overlaps(form.start, form.end, claimed):
                continue
            claimed.append((form.start, form.end))
            rewritten = _fit_to_neighbours(text, form, _rewrite(text, form, old, new))
            if rewritten is None:
                unreplaced.append(form)
            else:
                edits.append(Replacement(form.start, form.end, form.text, rewritten, form.how))
    new_head = re.sub(r"^(?:the|a|an)\s+", "", new, flags=re.IGNORECASE) if whole_name else head_word(new)
    for old in olds:
        head = distinctive_word(old)
        if head is None:
            continue
        for occurrence in head_occurrences(text, head):
            if _overlaps(occurrence.start, occurrence.end, claimed):
                continue
            claimed.append((occurrence.start, occurrence.end))
            if new_head and _stands_alone(text, occurrence.start, occurrence.end, _TITLES):
                edits.append(Replacement(occurrence.start, occurrence.end, occurrence.text, new_head, "name_part"))
            else:
                unreplaced.append(occurrence)
    out = text
    for edit in sorted(edits, key=lambda e: -e.start):
        out = _agree_article(out[: edit.start], edit.new) + edit.new + out[edit.end :]
    return EditResult(out, sorted(edits, key=lambda e: e.start), sorted(unreplaced, key=lambda f: f.start))


def replace_spans(text: str, olds: Iterable[str], new: str) -> tuple[str, int]:
    """`replace_forms`, as (edited text, number of replacements)."""
    result = replace_forms(text, olds, new)
    return result.text, result.count
