"""Background sentences that a context-enriched copy drops because a reader would take them as part of
the answer's evidence, or as another answer (the invalid copies of a held-out reading).

The copy sets the kept evidence first and the background after it (`programs.context_enrich`), so a
background sentence is read against the evidence before it. Seven kinds are dropped:

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
  the film", "its lyrics", "Springfield 's version", "James ' version" — before any background sentence
  kept ahead of it, or its own words ahead of the reference, named a work of its own (a quoted title or
  a work noun; not one whose complement is the reference: "The best - known early 1952 version of the
  song", "A fifth season of the show" name a version or a part of the work referred to).
  Read after a song's evidence, another song's facts become this one's: "Springfield 's version ... her
  first album", "The single became a gold record ... from 1969", "The lyrics were written by ... the song
  was performed by Thurl Ravenscroft", "In a later interview , Hendrix commented that the lyrics
  represent ..." (read invalid on held-out rows). Unlike *leaning* it applies anywhere in the
  sentence and whether or not the evidence uses the noun: the evidence is a work the reference can take
  ("the show" after Dr. Crusher's evidence reads as her series). A reference followed by its own name
  ("the film Pat Garrett", "the season of Game of Thrones") is not one;
- *date*: a sentence naming a question name of the evidence ("Nashville") with a year the evidence's
  own dates do not hold, when the evidence dates something;
- *rival_date*: for a question asking when (by its wh-phrase or a date answer), a sentence dating a thing
  the evidence dates — a common noun of the question within reach of a date in both — with a date or
  year the evidence does not hold: "A sixth season , scheduled to debut August 17 , 2018" after "The
  sixth season will premiere on June 15 , 2018" is the same season's other date. The noun is written in
  lower case: a title's or a name's word ("The Bridge on the River Kwai is a 1957 ...") is not the
  evidence's thing;
- *setting*: for a question asking when, a sentence setting its events at a time the evidence does not
  hold — opening on one ("In the present day ,", "In 1991 ,", "During the Cold War") or saying a story
  is set or takes place in it — that names a name the evidence holds: "In the present day , ... Steve
  Rogers , Natasha Romanoff ..." after Captain America : The First Avenger, set during World War II,
  reads as that film's setting. A year that only dates something ("a 1957 film", "formed in 1983") sets
  nothing;
- *purpose*: for a question asking what something is for ("why", "purpose", "function", "used for"), a
  sentence stating a purpose ("served as a way to", "is used to", "in order to", "the purpose of") whose
  words before it hold two of the question's subject words: "The Supreme Court 's flag salute served as
  a way to acknowledge the Queen 's commission" is another answer in its own words.

Not caught: a sentence with no subject of its own that does not open on a definite description
("Instrumental backing was provided by session musicians known as the Wrecking Crew"); a setting at
another time that names nobody the evidence names ("In 1991 , the brainwashed super-soldier James ``
Bucky '' Barnes ..." after The First Avenger's evidence, which never names Barnes); a purpose stated of
one subject word ("The salute is given to acknowledge the Queen 's commission").
"""

from __future__ import annotations

import re

from .checks import SENTENCE_BREAK, _stem, content_stems, mentions_any_form
from .evidence_checks import about_subject, opens_with_pronoun
from .normalize import normalize_answer
from .surface_forms import _year_like, answer_kind, units_match, units_of

_PRIORITY = re.compile(r"\b(first|oldest|earliest|original|originally|pioneer\w*|invent\w*)\b", re.IGNORECASE)
_ASKS_PRIORITY = re.compile(r"\b(first|oldest|earliest|original|originally)\b", re.IGNORECASE)
# Nouns naming a work, whose definite reference a reader resolves to the work the evidence is about.
_WORK_NOUNS = (
    "song|songs|single|lyrics|lyric|record(?!\\s+(?:for|of)\\b)|recording|album|version|track|show|series|film|"
    "movie|episode|season|novel|book|musical|sitcom|soundtrack|poem|opera|video|sequel|remake"
)
_MODIFIER = r"(?!(?:a|an|the)\b)[a-z][\w-]*"
# A possessive: "Springfield 's", and a bare apostrophe after a final s ("James ' version"), not a closing
# quote ("James '' Bucky").
_POSSESSIVE = r"(?:\s?['’]s|s\s?['’](?![\w'’]))"
_WORK_REFERENCE = re.compile(
    rf"(?:\b(?:[Tt]he|[Tt]his|[Tt]hat|[Tt]hese|[Ii]ts)|\b[A-Z][\w.-]*{_POSSESSIVE})"
    rf"(?:\s+(?:{_MODIFIER}|'s))??(?:\s+{_MODIFIER})??"
    rf"\s+(?:{_WORK_NOUNS})\b(?!\s+(?:of\s+)?(?:[A-Z]|``|\"|“|'[A-Z]))"
)
# A work noun whose complement is the reference names a part or a version of the referenced work, not a
# work of its own: "The best - known early 1952 version of the song", "A fifth season of the show".
_PART_OF_REFERENCE = re.compile(rf"\b(?:{_WORK_NOUNS})\s+(?:of|from)\s*$", re.IGNORECASE)
_PREDICATE_BEFORE = re.compile(r"\b(?:is|was|are|were|be|been|as|became|becomes|remains)\s*$", re.IGNORECASE)
_WORK_NAMED = re.compile(rf"``|\"|“|'[A-Z]|\b(?:{_WORK_NOUNS})\b", re.IGNORECASE)
_DEFINITE_OPENING = re.compile(r"^\W*The\s+([a-z][\w-]*)")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
# A question asking when: by its wh-phrase, or by a date answer ("June 15 , 2018").
_ASKS_WHEN = re.compile(
    r"^\W*(?:when|(?:in\s+)?(?:what|which)\s+(?:year|date|decade|century|era|time\s+period))\b", re.IGNORECASE
)
# Words either side of a date within which a noun is the thing it dates.
_DATE_REACH = 6
# When a story is set, other than by a date: "the present day", "the 1990s", "the 19th century", "World War
# II", "the Cold War", "the Victorian era", "the Middle Ages", "the Renaissance".
_TIME = (
    r"(?:the\s+)?(?:(?:early|mid|late)\s*-?\s*)?(?:present\s+day|(?:1\d|20)\d0\s*'?s|\d{1,2}(?:st|nd|rd|th)\s+century"
    r"|World\s+War\s+(?:I{1,3}|One|Two|[12])\b|(?:[A-Z][\w-]*\s+)+(?:War|Wars|Era|era|Age|Ages|Period)\b|Renaissance"
    r"|(?:(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+)?"
    r"(?:1\d{3}|20\d{2})\b)"
)
# A sentence setting its events at a time: opening on "In 1991 ,", "During World War II", "In the present
# day", or saying where a story is set ("is set in the 1990s", "takes place during the Cold War").
_SETTING = re.compile(
    rf"^\W*(?:In|During|Throughout|By)\s+(?P<opening>{_TIME})"
    rf"|\b(?:set|takes?\s+place|took\s+place|taking\s+place)\s+(?:in|during)\s+(?P<set>{_TIME})"
)
# A question asking what something is for, and a sentence stating what something is for: "served as a way
# to", "is used to", "in order to", "the purpose of".
_ASKS_PURPOSE = re.compile(r"\b(?:why|purpose|function|functions|used\s+for)\b", re.IGNORECASE)
_PURPOSE = re.compile(
    r"\b(?:serves?|served|serving)\s+(?:as\s+(?:a|an|the)\s+(?:way|means|method|tool)\s+)?to\b"
    r"|\b(?:is|are|was|were|be|been|being)\s+(?:\w+ly\s+)?(?:used|designed|intended|meant)\s+(?:to|for|as)\b"
    r"|\bin\s+order\s+to\b|\bso\s+as\s+to\b|\b(?:purpose|function)\s+(?:of|was|is)\b",
    re.IGNORECASE,
)
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
        if _WORK_NAMED.search(_PART_OF_REFERENCE.sub("", sentence[: reference.start()])):
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


def asks_when(question: str, answers: list[str]) -> bool:
    return bool(_ASKS_WHEN.search(question)) or bool(answers and answer_kind(answers[0]) == "date")


def _times(text: str) -> list:
    return [u for u in units_of(text) if u.kind == "date" or _year_like(u)]


def _held(unit, held: list) -> bool:
    return any(units_match(h, unit) or units_match(unit, h) for h in held)


def _dated_words(text: str, asked: set[str], held: list | None = None) -> set[str]:
    """Question words written in lower case within reach of a date or year of the text (one the evidence
    does not hold, given what it holds), in one sentence: the common nouns it dates ("season" in "The
    sixth season will premiere on June 15 , 2018"), not a title's or a name's words ("The Bridge on the
    River Kwai is a 1957 ...")."""
    dated = set()
    for sentence in _sentences(text):
        units = units_of(sentence)
        dates = [
            i
            for i, u in enumerate(units)
            if (u.kind == "date" or _year_like(u)) and (held is None or not _held(u, held))
        ]
        for i, u in enumerate(units):
            if u.kind == "word" and sentence[u.start : u.end].islower() and _stem(u.value) in asked:
                if any(abs(i - j) <= _DATE_REACH for j in dates):
                    dated.add(_stem(u.value))
    return dated


def dates_rival(sentence: str, evidence: str, question: str, answers: list[str]) -> bool:
    """For a question asking when, a sentence dating a thing the evidence dates (a common noun of the
    question within reach of a date in both) with a date or year the evidence does not hold: the same
    thing's other date ("A sixth season , scheduled to debut August 17 , 2018" after "The sixth season
    will premiere on June 15 , 2018")."""
    if not asks_when(question, answers):
        return False
    dated = _dated_words(evidence, content_stems(question))
    return bool(dated and dated & _dated_words(sentence, dated, _times(evidence)))


def _held_time(time: str, evidence: str) -> bool:
    dates = _times(time)
    if dates:
        return all(_held(u, _times(evidence)) for u in dates)
    return normalize_answer(time).removeprefix("the ") in normalize_answer(evidence)


def _evidence_names(evidence: str) -> set[str]:
    return {_stem(w.lower()) for s in _sentences(evidence) for w in _names(re.sub(_TIME, " ", s))}


def sets_another_time(sentence: str, evidence: str, question: str, answers: list[str]) -> bool:
    """For a question asking when, a sentence setting its events at a time the evidence does not hold ("In
    the present day", "In 1991 ,", "is set in the 1990s") and naming a name the evidence holds: the
    evidence's story at another time ("In the present day , ... Steve Rogers , Natasha Romanoff ..." after
    Captain America : The First Avenger, set during World War II). A year that only dates something ("a
    1957 film", "formed in 1983") sets nothing."""
    if not asks_when(question, answers):
        return False
    times = [m.group("opening") or m.group("set") for m in _SETTING.finditer(sentence)]
    if all(_held_time(time, evidence) for time in times):
        return False
    # The words of a time ("World War II", "May") name the time, not the story's people and places.
    outside = re.sub(_TIME, " ", sentence)
    return bool({_stem(w.lower()) for w in _names(outside)} & _evidence_names(evidence))


def states_purpose(sentence: str, question: str) -> bool:
    """For a question asking what something is for, a sentence stating what the question's subject is for
    (the words before the purpose hold two of the question's subject words): another answer in its own
    words ("The Supreme Court 's flag salute served as a way to acknowledge the Queen 's commission")."""
    if not _ASKS_PURPOSE.search(question):
        return False
    return any(about_subject(sentence[: m.start()], question) for m in _PURPOSE.finditer(sentence))


def background_drops(
    background: str, evidence: str, question: str, answers: list[str], names: list[frozenset[str]] = ()
) -> list[tuple[str, str]]:
    """(rule, sentence) for every background sentence to drop; rules: leaning, work, priority, date,
    rival_date, setting, purpose."""
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
            else "rival_date"
            if dates_rival(sentence, evidence, question, answers)
            else "setting"
            if sets_another_time(sentence, evidence, question, answers)
            else "purpose"
            if states_purpose(sentence, question)
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
