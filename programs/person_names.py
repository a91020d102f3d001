"""Made-up names for answer swaps whose answer is a person.

A real name from elsewhere brings what a reader knows of that person into the passage (a tennis player
holding a wrestling title, a singer born decades after the film she is said to have sung in); a made-up
name brings nothing, so the passage stays the only evidence about its new answer. Names are drawn with
Faker from the locale that knows the old name (or whose nationality the passage names), of the gender the
passage gives the person, never with a surname so common that the name reads as a placeholder, and never
a name the caller knows as a real one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from functools import cache

from metrics.surface_forms import answer_kind
from programs.word_bank import is_adjective

# "who" anywhere: "actor who plays david platt", "the guy who bought the wu tang album" ask for a person too.
_WHO = re.compile(r"\b(?:who|whom|whose)\b", re.IGNORECASE)
_PARTICLES = frozenset("de del della di da du des la le van von der den bin ibn al el y st.".split())
# Latin-script locales only: a name in another script would stand out in an English passage.
LOCALES = (
    "en_US", "en_GB", "en_IE", "en_AU", "en_NZ", "en_CA", "en_IN", "en_NG", "de_DE", "fr_FR", "it_IT", "es_ES",
    "es_MX", "pt_BR", "pt_PT", "nl_NL", "sv_SE", "no_NO", "da_DK", "fi_FI", "pl_PL", "cs_CZ", "tr_TR", "id_ID",
)  # fmt: skip
_PLACES = {
    "en_US": "American|United States|U\\.S\\.|America",
    "en_GB": "British|English|Scottish|Welsh|Britain|England|Scotland|Wales|United Kingdom|London",
    "en_IE": "Irish|Ireland", "en_AU": "Australian|Australia", "en_NZ": "New Zealand", "en_CA": "Canadian|Canada",
    "en_IN": "Indian|India", "en_NG": "Nigerian|Nigeria", "de_DE": "German|Germany|Austrian|Austria",
    "fr_FR": "French|France", "it_IT": "Italian|Italy", "es_ES": "Spanish|Spain|Argentine|Argentina",
    "es_MX": "Mexican|Mexico", "pt_BR": "Brazilian|Brazil", "pt_PT": "Portuguese|Portugal",
    "nl_NL": "Dutch|Netherlands", "sv_SE": "Swedish|Sweden", "no_NO": "Norwegian|Norway", "da_DK": "Danish|Denmark",
    "fi_FI": "Finnish|Finland", "pl_PL": "Polish|Poland", "cs_CZ": "Czech", "tr_TR": "Turkish|Turkey",
    "id_ID": "Indonesian|Indonesia",
}  # fmt: skip
# Nationalities whose names are written in another script: no Latin-script locale gives a name that fits.
_UNSUPPORTED = (
    "Russian|Russia|Soviet|Ukrainian|Ukraine|Belarusian|Chinese|China|Taiwanese|Japanese|Japan|Korean|Korea|"
    "Arab|Arabic|Saudi|Iranian|Iran|Persian|Iraqi|Iraq|Egyptian|Egypt|Israeli|Israel|Greek|Greece|Thai|"
    "Thailand|Vietnamese|Vietnam|Pakistani|Pakistan|Bangladeshi|Georgian|Armenian|Mongolian"
)
_PLACES["unsupported"] = _UNSUPPORTED
_PLACE = re.compile(r"\b(" + "|".join(_PLACES.values()) + r")\b")


def nation_words(name: str) -> list[str]:
    """The other words of the nation `name` belongs to ("American", "U.S." for "United States"), as patterns."""
    for locale, names in _PLACES.items():
        if locale == "unsupported":  # many nations in one pattern
            continue
        words = names.split("|")
        if any(re.fullmatch(w, name) for w in words):
            return [w for w in words if not re.fullmatch(w, name)]
    return []


_MALE = re.compile(r"\b(?:he|him|his|himself|actor|king|husband|father|son|brother|boy|man|mr)\b", re.IGNORECASE)
_FEMALE = re.compile(
    r"\b(?:she|her|hers|herself|actress|queen|wife|mother|daughter|sister|girl|woman|mrs|ms)\b", re.IGNORECASE
)
# Surnames this frequent read as stand-ins ("Jane Smith"), whatever the first name.
COMMON_SURNAMES = 50
CANDIDATES = 12


# A describing phrase before a name in an NQ span ("Bollywood actor Shah Rukh Khan", "Scottish actor , Ewan
# McGregor", "Boston Celtics center Bill Russell"): at least one lower-case word, then the name at the end.
_DESCRIBED = re.compile(
    r"^(?P<desc>(?:[\w.'-]+\s+){0,4}?[a-z][\w-]*\s*,?\s+)(?P<name>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3})$"
)
# Describing words of a group, not a person: "Canadian rock band Glass Tiger" is no person to rename.
_GROUP_WORDS = frozenset("band group duo trio quartet team orchestra choir club company label network".split())
_JOINS = frozenset("and & or with feat. featuring".split())


def named_part(question: str, answer: str) -> str:
    """The name a "who" answer ends with, without the words describing it before; the answer itself otherwise.
    The description stays in the passage around the swapped name; renaming the whole span would drop it, and
    keeping it in the new answer would make a gold answer no reader gives."""
    m = _DESCRIBED.match(answer.strip())
    if m is None or not _WHO.search(question):
        return answer
    desc = m.group("desc").split()
    # "Mike Reid and Allen Shamblin" is two people, not a description and a name: a join after a name. "American
    # singer and actress Lady Gaga" is one person described twice.
    if _GROUP_WORDS & {w.lower() for w in desc} or any(
        w.lower() in _JOINS and before[:1].isupper() for before, w in zip(desc, desc[1:], strict=False)
    ):
        return answer
    name = m.group("name")
    return name if is_person_answer(question, name) else answer


def is_person_answer(question: str, answer: str) -> bool:
    """A question asking "who" answered by two to four capitalised words: a person's name. Groups ("the Four Tops"),
    places ("New Zealand" is read by the gender test below) and single words are not."""
    return bool(_WHO.search(question)) and name_shaped(answer)


def name_shaped(answer: str) -> bool:
    """Two to four capitalised words, no article first: the shape of a person's name, whatever asks for it."""
    # NQ writes a hyphenated surname apart ("Leslie Carrara - Rudolph").
    words = re.sub(r"(?<=\w) - (?=[A-Z])", "-", answer).split()
    if not 2 <= len(words) <= 4 or answer_kind(answer) != "name":
        return False
    if words[0].casefold() in {"the", "a", "an"}:
        return False
    return all(w[0].isupper() or w.casefold() in _PARTICLES for w in words)


@cache
def _provider(locale: str):
    from faker import Faker  # deferred: only swaps of person answers need it

    return Faker(locale)


@cache
def _first_names(locale: str, gender: str) -> frozenset[str]:
    attr = "first_names_male" if gender == "male" else "first_names_female"
    return frozenset(getattr(_provider(locale).provider("faker.providers.person"), attr, ()))


@cache
def _last_names(locale: str) -> tuple[str, ...]:
    return tuple(getattr(_provider(locale).provider("faker.providers.person"), "last_names", ()))


def name_gender(answer: str) -> str | None:
    """The gender the name lists of the known locales give the answer's first name, when they agree."""
    first = answer.split()[0]
    found = {g for loc in LOCALES for g in ("male", "female") if first in _first_names(loc, g)}
    return found.pop() if len(found) == 1 else None


def _near(context: str, answer: str) -> str:
    """The sentences that name the person, each with the sentence after it; the whole passage if none does."""
    sentences = re.split(r"(?<=[.!?])\s+", context)
    parts = {w for w in answer.split() if w[0].isupper() and len(w) > 2}
    near = [
        " ".join(sentences[i : i + 2])
        for i, s in enumerate(sentences)
        if any(re.search(rf"\b{re.escape(p)}\b", s) for p in parts)
    ]
    return " ".join(near) or context


def passage_gender(context: str, answer: str) -> str | None:
    """The gender of the pronouns and nouns in the sentences that name the person (and the sentence after
    each), when one side has at least twice the other's count."""
    text = _near(context, answer)
    male, female = len(_MALE.findall(text)), len(_FEMALE.findall(text))
    if male >= max(1, 2 * female):
        return "male"
    if female >= max(1, 2 * male):
        return "female"
    return None


def person_gender(context: str, answer: str) -> str | None:
    """The passage's gender for the person, checked against the first name's; None when they disagree or
    neither says, so that no swap gives a woman's part to a man's name."""
    from_passage, from_name = passage_gender(context, answer), name_gender(answer)
    if from_passage and from_name and from_passage != from_name:
        return None
    return from_passage or from_name


# What a question calls the person ("the joker's girlfriend", "the guy who bought the album").
_ASKED_MALE = re.compile(r"\b(?:boyfriend|guy|man|boy|father|son|husband|brother|king|actor|he|his)\b", re.IGNORECASE)
_ASKED_FEMALE = re.compile(
    r"\b(?:girlfriend|girl|woman|lady|mother|daughter|wife|sister|queen|actress|she|her)\b", re.IGNORECASE
)


def unsaid_gender(context: str, question: str, answer: str, key: str) -> str | None:
    """A gender for a made-up name where neither the passage near the person nor the first name gives one: the
    question's word for the person, else either, chosen by `key`; nothing in the passage can then clash with it.
    None where the passage does use gendered words near the person (they disagree, or the name's list
    disagrees with them)."""
    if name_gender(answer) is not None or passage_gender(context, answer) is not None:
        return None
    near = _near(context, answer)
    if _MALE.search(near) or _FEMALE.search(near):
        return None
    # A first name after a title ("Composer Marco Beltrami"), which name_gender (the first word) does not read.
    named = {g for g in (name_gender(w) for w in answer.split()[1:]) if g}
    if len(named) == 1:
        return named.pop()
    male, female = bool(_ASKED_MALE.search(question)), bool(_ASKED_FEMALE.search(question))
    if male != female:
        return "male" if male else "female"
    return ("male", "female")[hashlib.sha256(key.encode()).digest()[0] % 2]


def name_locale(context: str, answer: str) -> str | None:
    """The first locale whose lists hold the old surname (then first name); else the locale of the country or
    nationality named first in the sentence of the person's first mention, or else in the passage; else en_US.
    None when that nationality writes its names in another script."""
    words = answer.split()
    for probe, names in (
        (words[-1], _last_names),
        (words[0], lambda loc: _first_names(loc, "male") | _first_names(loc, "female")),
    ):
        for loc in LOCALES:
            if probe in names(loc):
                return loc
    at = max(context.find(words[-1]), 0)
    sentence = next((s for s in re.finditer(r"[^.!?]+[.!?]?", context) if s.start() <= at < s.end()), None)
    for where in ([sentence.group(0)] if sentence else []) + [context]:
        m = _PLACE.search(where)
        if m:
            found = next(loc for loc, names in _PLACES.items() if re.fullmatch(names, m.group(1)))
            return None if found == "unsupported" else found
    return "en_US"


@cache
def _weighted_common_surnames(locale: str) -> frozenset[str]:
    """The COMMON_SURNAMES most frequent surnames of a locale whose list carries frequencies; none for a
    locale whose list is unweighted, where the first fifty say nothing about frequency."""
    names = getattr(_provider(locale).provider("faker.providers.person"), "last_names", ())
    if not isinstance(names, dict):
        return frozenset()
    ranked = sorted(names, key=names.get, reverse=True)
    return frozenset(ranked[:COMMON_SURNAMES])


def is_first_name(word: str) -> bool:
    return any(word in _first_names(loc, "male") | _first_names(loc, "female") for loc in LOCALES)


def is_last_name(word: str) -> bool:
    return any(word in _last_names(loc) for loc in LOCALES)


def surnamed(answer: str) -> bool:
    """A name of capitalised words ending in a surname the name lists know ("Rashida Jones", "Cecil Rhodes"):
    a person, whichever first name the lists lack. A first word that is an adjective and no first name makes a
    group of it: "Allied Powers", "Green Day"."""
    words = answer.split()
    if not name_shaped(answer) or not is_last_name(words[-1]):
        return False
    return is_first_name(words[0]) or not is_adjective(words[0])


def generic_name(name: str) -> bool:
    """A first name followed by one of the most frequent surnames of a locale ("Jane Smith", "Alice
    Johnson"): reads as a stand-in for a person, not as the person a passage is about. A famous bearer
    ("Michael Jackson") is refused too: the pool knows a "Jane Smith" as well, and a refused proposal costs a
    retry, where a stand-in left costs a case (read invalid on fresh rows)."""
    words = name.split()
    if len(words) != 2:
        return False
    first, last = words
    common = any(
        last in _weighted_common_surnames(loc) and first in _first_names(loc, "male") | _first_names(loc, "female")
        for loc in LOCALES
    )
    return common


def made_up_names(
    context: str, question: str, answer: str, key: str, known: Callable[[str], bool] | None = None
) -> Iterator[str]:
    """Up to CANDIDATES made-up full names for the person `answer` names, in the order to try them; none when
    the passage does not say the person's gender or places the person where no Latin-script locale fits.
    Deterministic in `key`."""
    gender = person_gender(context, answer) or unsaid_gender(context, question, answer, key)
    if gender is None:
        return
    locale = name_locale(context, answer)
    if locale is None:
        return
    common = set(_last_names(locale)[:COMMON_SURNAMES])
    faker = _provider(locale)
    faker.seed_instance(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))
    seen: set[str] = set()
    for _ in range(4 * CANDIDATES):
        first = faker.first_name_male() if gender == "male" else faker.first_name_female()
        last = faker.last_name()
        name = f"{first} {last}"
        if name in seen or last in common or " " in last.strip() or (known is not None and known(name)):
            continue
        seen.add(name)
        yield name
        if len(seen) >= CANDIDATES:
            return


def made_up_parts(
    context: str, question: str, answer: str, key: str, known: Callable[[str], bool] | None = None
) -> Iterator[str]:
    """For a person the passage names by one word, a made-up word of the same part: a first name of the
    passage's sex for a first name ("Barry" of the Bee Gees), else a surname ("Nicklaus has the most Masters
    wins"), which needs no sex, for a "who" question: a stage name ("Ludacris") reads as one. None where the
    passage does not say the sex of a first name."""
    word = answer.strip()
    first = is_first_name(word)
    if not first and not _WHO.search(question):
        return  # "what is the dinosaur that spits": a one-word "person" the tagger misread
    if not first and re.search(rf"\b(?:named|called)\s+{re.escape(word)}\b", context):
        return  # "a daughter named Roxy": a given name the lists lack, which no surname replaces
    full = None if first else re.search(rf"\b([A-Z][a-z]+) {re.escape(word)}\b", context)
    locale = name_locale(context, full.group(0) if full else word)
    gender = person_gender(context, full.group(0) if full else word)
    if locale is None or (gender is None and first):
        return
    faker = _provider(locale)
    faker.seed_instance(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))
    common = set(_last_names(locale)[:COMMON_SURNAMES])
    seen: set[str] = {word}
    for _ in range(4 * CANDIDATES):
        name = None
        if not first:
            made = faker.last_name()
            if made in common or " " in made.strip() or is_first_name(made):
                continue
            name = f"{full.group(1)} {made}" if full else None
        else:
            # A first name alone is no famous person: the pool knows every common one.
            made = faker.first_name_male() if gender == "male" else faker.first_name_female()
        if made in seen or re.search(rf"\b{re.escape(made)}\b", context) or (name and known and known(name)):
            continue
        seen.add(made)
        yield made
        if len(seen) > CANDIDATES:
            return
