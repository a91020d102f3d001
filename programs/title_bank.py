"""Real names of the same type from a passage pool, for answers no other bank covers: a song for a song, a band
for a band, a river for a river.

An encyclopedia passage opens by typing its subject ("Help ! is the fifth studio album by English rock band the
Beatles"; "The Owens River is a river in southeastern California"). Those openings make the bank: each subject
under its type noun, with the words before the noun ("fifth studio", "English rock") to rank by. The old answer
is typed the same way: by its own passage in the pool, by the seed passage ("the 1995 film Dilwale Dulhania Le
Jayenge", "Glass Tiger is a Canadian rock band"), or by the question's noun ("which band"). The pivot's own
works and groups read valid in 2 of 10 and 6 of 22 blind readings (docs/results/every_kind.md): a title of the
same type is of the same type by construction.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# Type nouns an opening sentence gives, folded to one per type ("television series" and "sitcom" are series).
NOUNS = {
    **{n: n for n in "film song album novel book play musical poem opera band team company club party".split()},
    **{n: n for n in "university college school river lake mountain island county stadium airport church".split()},
    **{n: n for n in "language disease episode ship newspaper magazine festival award".split()},
    "single": "song",
    "series": "series",
    "sitcom": "series",
    "organization": "organisation",
    "organisation": "organisation",
    "movie": "film",
}
_NOUN = "|".join(sorted(NOUNS, key=len, reverse=True))
# Describing words before the noun: no verb or clause between ("an animal that plays" is no play).
_MODS = r"((?:(?!(?:that|which|who|whose|or|and|of|by|is|was|in|on|for|with|from|to|as|it)\b)[\w'-]+\s+){0,5}?)"
# The noun ends the type ("a 1995 film directed by"), not a compound ("the most prominent film award").
_FOLLOWERS = (
    "by from in of that which written directed released produced based starring created composed recorded formed "
    "founded located about for and with on set performed sung developed published owned originally first"
)
_AFTER = r"s?(?=\s*(?:[,.;:(]|$|(?:" + "|".join(_FOLLOWERS.split()) + r")\b))"
_IS = r"(?:is|was|are|were)\s+(?:an?|the)\s+"
# "X is a 1995 Indian film", "`` X '' ( 2004 ) was the second single".
_OPENING = re.compile(
    r"^\s*(?:``\s*)?(?P<name>[A-Z0-9][^.;:()`']{1,60}?)\s*(?:''\s*)?(?:\([^)]*\)\s*)?(?:,[^,]{1,80},\s*)?"
    + _IS
    + _MODS.replace("(", "(?P<mods>", 1)
    + rf"(?P<noun>{_NOUN})"
    + _AFTER
)
_ASKED = re.compile(rf"\b(?:what|which)\s+{_MODS}(?P<noun>{_NOUN})s?\b", re.IGNORECASE)
_SMALL = frozenset("a an the of and in on at to for by with from or de la le du von van".split())
MAX_NAME_WORDS = 7
CANDIDATES = 8


def _key(name: str) -> str:
    return " ".join(re.sub(r"[`'\"]+", " ", name).split()).casefold()


@dataclass(frozen=True)
class Titled:
    name: str
    noun: str
    mods: frozenset[str]


def opening_type(text: str) -> Titled | None:
    """The subject and type an encyclopedia passage opens with, or None."""
    m = _OPENING.match(text)
    if m is None:
        return None
    name = " ".join(m.group("name").split())
    if len(name.split()) > MAX_NAME_WORDS or not is_title(name):
        return None
    return Titled(name, NOUNS[m.group("noun").lower()], _mod_words(m.group("mods")))


def is_title(name: str) -> bool:
    """Written as a proper name: every word but the small ones capitalised or a number, no clause inside."""
    words = re.sub(r"^(?:the|a|an)\s+", "", name.strip(" `'\""), flags=re.IGNORECASE).split()
    return (
        bool(words)
        and "," not in name
        and all(w[:1].isupper() or w[:1].isdigit() or w.casefold() in _SMALL or not w[:1].isalpha() for w in words)
        and words[0][:1].isupper()
    )


def _mod_words(mods: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in mods.split() if not w.isdigit())


class TitleBank:
    """Pool subjects by type; `bank(question, context, answer, key)` gives the answer's type-mates."""

    def __init__(self, texts: Iterable[str]):
        self.by_noun: dict[str, list[Titled]] = {}
        self.by_name: dict[str, Titled] = {}
        for text in texts:
            titled = opening_type(text[:400])
            if titled is None or _key(titled.name) in self.by_name:
                continue
            self.by_name[_key(titled.name)] = titled
            self.by_noun.setdefault(titled.noun, []).append(titled)

    def type_of(self, question: str, context: str, answer: str) -> Titled | None:
        """The answer's type: its own pool passage, else what the seed passage calls it, else the question's noun."""
        if not is_title(answer):  # "in northwest Washington", "the last episode": no title to swap
            return None
        own = self.by_name.get(_key(answer))
        if own is not None:
            return own
        a = r"\s*".join(re.escape(t) for t in re.findall(r"\w+|[^\w\s]", answer))
        for pattern in (
            rf"(?<!\w){a}\s*(?:''\s*)?(?:\([^)]*\)\s*)?(?:,[^,]{{1,80}},\s*)?{_IS}{_MODS}(?P<noun>{_NOUN}){_AFTER}",
            # "the 1995 film Dilwale Dulhania Le Jayenge", "by Canadian rock band Glass Tiger"
            rf"\b{_MODS}(?P<noun>{_NOUN})\s*,?\s*(?:``\s*)?{a}(?!\w)",
            rf"(?<!\w){a}\s*\(\s*{_MODS}(?P<noun>{_NOUN})\s*\)",
        ):
            m = re.search(pattern, context, re.IGNORECASE)
            if m is not None:
                return Titled(answer, NOUNS[m.group("noun").lower()], _mod_words(m.group(1)))
        m = _ASKED.search(question)
        if m is not None:
            return Titled(answer, NOUNS[m.group("noun").lower()], _mod_words(m.group(1)))
        return None

    def __call__(self, question: str, context: str, answer: str, key: str) -> Iterator[str]:
        """Subjects of the answer's type, those sharing most of its describing words first ("English rock band"
        before "American vocal group"), ties in an order fixed by `key`."""
        old = self.type_of(question, context, answer)
        if old is None:
            return
        own = _key(answer)

        def order(t: Titled) -> tuple[int, str]:
            return (-len(t.mods & old.mods), hashlib.sha256(f"{key}|{t.name}".encode()).hexdigest())

        mates = [t for t in self.by_noun.get(old.noun, []) if _key(t.name) != own]
        for titled in sorted(mates, key=order)[:CANDIDATES]:
            yield titled.name
