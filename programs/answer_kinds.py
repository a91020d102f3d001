"""What kind of thing an answer is, read where it stands in its passage, and whether a proposed new answer
is the same kind.

The kind comes from a tagger (programs/entity_tagger.py: spaCy's small English pipeline): the entity
label over the answer's span, else the part of speech of the span's head. A swap is valid only if the new
answer could answer the same question, so a proposal is typed in the edited passage, where it stands in the
old answer's place, and refused when the kinds differ in a way the tagger is reliable about ("Audi" as the
winner of a race, "Aerosmith" as an album, a city for "the Ark"). Grammatical number is read too: a plural
in a singular's place leaves "The trunks is".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from metrics.surface_forms import answer_kind, find_forms

if TYPE_CHECKING:  # pragma: no cover
    from programs.entity_tagger import Tagger

# spaCy (OntoNotes) labels to the kinds a reader tells apart.
LABEL_KINDS = {
    "PERSON": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "ORG": "organisation",
    "NORP": "group",
    "WORK_OF_ART": "work",
    "LAW": "work",
    "PRODUCT": "product",
    "EVENT": "event",
    "LANGUAGE": "language",
    "DATE": "date",
    "TIME": "date",
    "CARDINAL": "quantity",
    "QUANTITY": "quantity",
    "MONEY": "quantity",
    "PERCENT": "quantity",
    "ORDINAL": "quantity",
}
# Untagged spans: a noun phrase ("the sacroiliac joint", "pathology") or any other phrase ("to preserve slavery").
KINDS = (*dict.fromkeys(LABEL_KINDS.values()), "thing", "phrase")
NAMES = frozenset({"person", "place", "organisation", "group", "work", "product", "event", "language"})
# Pairs the small tagger confuses on the same kind of name (a country acting as a team is ORG or GPE; a
# nationality and its people's organisation; a ship or a building as FAC or PRODUCT): not told apart.
CONFUSED = frozenset(
    frozenset(pair)
    for pair in (
        ("place", "organisation"),
        ("organisation", "group"),
        ("place", "group"),
        ("product", "organisation"),
        ("product", "work"),
        ("work", "event"),
        ("place", "product"),
        ("language", "group"),
    )
)
# What the pivot is told it must propose, per kind.
DESCRIPTIONS = {
    "person": "a person: another real or plausible person of the same sex, era and field",
    "place": "a place of the same scale and type (a city for a city, a river for a river, a country for a country)",
    "organisation": "an organisation, band, team or company of the same type",
    "group": "a nationality, religious or political group of the same type",
    "work": "a title of a work of the same type (a song for a song, a film for a film, a law for a law)",
    "product": "a named product, vehicle or object of the same type",
    "event": "a named event of the same type",
    "language": "a language",
    "date": "a date or year of the same form",
    "quantity": "a number or quantity with the same unit",
    "thing": "a common noun phrase of the same kind (a body part for a body part, a chemical element for an "
    "element, a field of study for a field), written the same way (singular or plural, with or without 'the')",
    "phrase": "a phrase of the same grammatical form that could fill the same place in the sentence",
}


_WH = (
    (re.compile(r"^\s*(?:who|whom|whose)\b", re.I), ("person", "organisation", "group")),
    (re.compile(r"^\s*where\b", re.I), ("place",)),
    (re.compile(r"^\s*(?:when|(?:in )?(?:what|which) (?:year|decade|century|date|day|month))\b", re.I), ("date",)),
    (re.compile(r"^\s*how (?:many|much|long|far|old|tall|big|high|deep|fast)\b", re.I), ("quantity", "date")),
)
# The noun after "what" / "which" that names the kind asked for ("what city", "which band").
_TYPE_NOUNS = {
    "place": "city town village country state province county region island river lake sea ocean mountain "
    "continent capital place location area district neighborhood neighbourhood street stadium building",
    "organisation": "band team company group club organization organisation party university college school "
    "network label airline agency firm brand corporation",
    "work": "song album film movie book novel show series play poem opera episode single painting law act",
    "language": "language",
    "person": "actor actress singer player president king queen character author writer person man woman "
    "director artist composer",
}
TYPE_NOUN_KINDS = {noun: kind for kind, nouns in _TYPE_NOUNS.items() for noun in nouns.split()}
_WHAT = re.compile(r"^\s*(?:what|which)\s+(?:is the\s+|was the\s+)?(\w+)", re.I)


def asked_kinds(question: str) -> tuple[str, ...]:
    """The kinds of answer the question's own words ask for; empty when they do not say."""
    for pattern, kinds in _WH:
        if pattern.search(question):
            return kinds
    m = _WHAT.search(question)
    word = m.group(1).lower() if m else ""
    kind = TYPE_NOUN_KINDS.get(word) or TYPE_NOUN_KINDS.get(word.rstrip("s"))
    return (kind,) if kind else ()


@dataclass(frozen=True)
class Typed:
    kind: str
    label: str | None  # the tagger's entity label, when it gave one
    plural: bool | None  # the span's head is a plural noun (None: not a noun)
    text: str
    read: str | None = None  # the tagger's kind where the question's overrode it

    @property
    def group(self) -> str:
        """The reading group a blind sheet is drawn by (people / places and organisations / works and things
        / dates and numbers)."""
        if self.kind == "person":
            return "people"
        if self.kind in ("place", "organisation", "group", "language"):
            return "places and organisations"
        if self.kind in ("date", "quantity"):
            return "dates and numbers"
        return "works and things"


def type_span(doc, start: int, end: int, text: str) -> Typed:
    """The kind of the characters [start, end) of a tagged text."""
    span_len = max(end - start, 1)
    tokens = [t for t in doc if t.idx < end and t.idx + len(t.text) > start and not t.is_punct]
    heads = [t for t in tokens if not (start <= t.head.idx < end) or t.head == t]
    head = heads[-1] if heads else (tokens[-1] if tokens else None)
    best, best_overlap = None, 0
    for ent in doc.ents:
        overlap = min(end, ent.end_char) - max(start, ent.start_char)
        # The entity over the span's head names what the span is ("Cleveland Cavaliers forward LeBron James" is
        # a person, though the team's entity is longer); otherwise the largest overlap.
        if head is not None and ent.start_char <= head.idx < ent.end_char and overlap > 0:
            best, best_overlap = ent, max(overlap, span_len)
            break
        if overlap > best_overlap:
            best, best_overlap = ent, overlap
    plural = None
    if head is not None and head.tag_ in ("NN", "NNS", "NNP", "NNPS"):
        plural = head.tag_ in ("NNS", "NNPS")
    # An entity covering most of the span types it ("the Harlem River" has its entity on "Harlem River").
    if best is not None and best_overlap * 2 >= min(span_len, len(best.text)):
        return Typed(LABEL_KINDS.get(best.label_, "thing"), best.label_, plural, text)
    if head is not None and head.pos_ in ("NOUN", "PROPN"):
        return Typed("thing", None, plural, text)
    if head is not None and head.pos_ == "NUM":
        return Typed("quantity", None, None, text)
    return Typed("phrase", None, plural, text)


def _reads_as_person(text: str, first_names: Callable[[str], bool] | None) -> bool | None:
    """Whether a name opens with a known first name ("Lionel Richie", not "Manchester United"); None unknown."""
    words = text.split()
    if first_names is None or len(words) < 2:
        return None
    return first_names(words[0])


def type_in(
    tag: Tagger,
    text: str,
    answers: list[str],
    question: str | None = None,
    first_names: Callable[[str], bool] | None = None,
) -> Typed | None:
    """The kind of the first form of any of `answers` found in `text`; None when none is found. Where the
    question names the kind it asks for and the tagger read another kind of name, the question's wins: the
    small tagger reads a city as a person in a sentence that gives it nothing else ("flows through Lyon")."""
    forms = sorted((f for answer in answers for f in find_forms(text, answer)), key=lambda f: f.start)
    if not forms:
        return None
    doc = tag(text)
    typed = type_span(doc, forms[0].start, forms[0].end, forms[0].text)
    if typed.kind == "organisation" and _reads_as_person(typed.text, first_names):
        typed = replace(typed, kind="person", read="organisation")  # "Karyn Parsons" read as an organisation
    asked = asked_kinds(question) if question else ()
    # Only a name read as another kind of name: an untagged common noun in a "where" question's answer ("kept in
    # the Ark") is a thing the question calls a place, and a city in its place would not be one.
    # A person whose first name the lists know stays one: "where did the phrase come from" is answered by "Gary
    # Gilmore 's last words", and a city proposed in his place reads invalid.
    person = typed.kind == "person" and first_names is not None and first_names(typed.text.split()[0])
    if asked and typed.kind in NAMES and typed.kind not in asked and not person:
        return replace(typed, kind=asked[0], read=typed.kind)
    return typed


def kind_problem(old: Typed, new: Typed, first_names: Callable[[str], bool] | None = None) -> str | None:
    """Why `new` cannot stand for `old`, or None. Kinds the tagger confuses are let through; a name for a
    common noun or phrase is not, nor a lower-case word for a name; a plural for a singular is not."""
    # A new answer the tagger reads as it read the old one in the same place (even where the question
    # overrode that reading) is of the same kind to it.
    olds = {old.kind, old.read} - {None}
    # The small tagger reads unfamiliar people as organisations and teams or firms as people ("Lionel Richie",
    # "Dairy Queen"); between those two, a known first name before a surname decides.
    if {old.kind, new.kind} == {"person", "organisation"}:
        person = _reads_as_person(new.text, first_names)
        if person is not None and person == (old.kind == "person"):
            olds.add(new.kind)
    if not any(new.kind == k or frozenset((k, new.kind)) in CONFUSED for k in olds):
        old_name, new_name = old.kind in NAMES, new.kind in NAMES
        if old_name and new_name:
            return "proposal_kind_mismatch"
        if new_name and not old_name:
            # Tagged in the slot where the old answer stood untagged: the new word brings a name's reading of its
            # own ("the Cairo" for "the Ark"), even where the old one is capitalised too.
            return "proposal_kind_mismatch"
        if old_name and not new_name and answer_kind(new.text) != "name":
            return "proposal_kind_mismatch"  # a common word in a name's place
    if answer_kind(old.text) == "name" and answer_kind(new.text) == "other":
        # A lower-case phrase for a capitalised name the tagger did not read ("singer" for the band "The Move",
        # "the cabinet" for "The President").
        return "proposal_kind_mismatch"
    # Number is read off common nouns only: a name's final s ("Cyberdyne Systems") says nothing of agreement.
    if old.label is None and old.plural is not None and new.plural is not None and old.plural != new.plural:
        return "proposal_number_mismatch"
    return None


_FUNCTION_WORDS = frozenset("the a an of and & in on at to for by with from de del la le du des von van der".split())


def _capitalised(words: list[str]) -> bool:
    content = [w for w in words if w.lower() not in _FUNCTION_WORDS and w[:1].isalpha()]
    return bool(content) and all(w[:1].isupper() for w in content)


def written_as_name(context: str, answer: str) -> bool:
    """Whether the passage writes the answer as a name: an occurrence inside a sentence (not at its start)
    whose content words are all capitalised ("the second single by The Move", "the President of India").
    Words only: a year's form is its whole date ("July 13 , 1890"), capitalised by its month."""
    if not any(w[:1].isalpha() and w.lower() not in _FUNCTION_WORDS for w in answer.split()):
        return False
    for form in find_forms(context, answer):
        before = context[: form.start].rstrip()
        if before and before[-1] not in ".!?:;\"'`(" and _capitalised(form.text.split()):
            return True
    return False


def common_for_name(context: str, old: str, new: str) -> bool:
    """A lower-case phrase proposed where the passage writes the old answer as a name: the tagger misses
    short names ("The Move") and titles ("The President"), which "singer" and "the cabinet" do not replace."""
    return written_as_name(context, old) and not _capitalised(new.split())
