"""Real names at a distance from the old one: the answers other questions of the same kind have, taken from
the same domain (near) or from an unrelated one (far).

A name has no numeric distance. What a reader or a target knows about a name is its domain: a swap within
the domain ("who played Pete in Sneaky Pete" → another television actor) is plausible to a reader who knows
the truth, one from an unrelated domain (a Founding Father cast in a 2015 series) contradicts what that
reader knows of both. The candidates are answers of a bank of QA rows; the domain is how close the bank
row's question is to the seed's (cosine of their embeddings); the kind is the question's head ("who",
"where", "what team"), so that a team stands in for a team and a place for a place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property

import numpy as np

from metrics.surface_forms import answer_kind
from programs.person_names import is_person_answer, name_gender, person_gender

NAME_DISTANCES = ("made_up", "near", "far")
# A bank question this close to the seed's asks the same thing (NQ holds reworded duplicates): its answer
# is the truth, or a second answer to the same question, not a name from the same domain.
SAME_QUESTION = 0.95
CANDIDATES = 12
_WH = {"who": "who", "whom": "who", "whose": "who", "where": "where", "what": "what", "which": "what"}
_SKIP = frozenset("is was are were the a an of does did do has had have kind type".split())
_JOINERS = frozenset("of the and de del della di da du des la le van von der den y , & -".split())


def question_head(question: str) -> str:
    """The question's first wh-word, and for "what"/"which" the noun after it ("what team", "in which country"
    → "what country", "a play made by whom" → "who"); "" for a question with none ("name of the dog in the
    wizard of oz")."""
    words = re.findall(r"[a-z]+", question.casefold())
    at = next((i for i, w in enumerate(words) if w in _WH), None)
    if at is None:
        return ""
    if _WH[words[at]] == "what":
        noun = next((w for w in words[at + 1 :] if w not in _SKIP), "")
        return f"what {noun}"
    return _WH[words[at]]


def is_clean_name(answer: str) -> bool:
    """One to four capitalised words, joiners between them ("Rio de Janeiro , Brazil"): a bank answer such as
    "American porn actor John Holmes", ". Justin Timberlake" or "the hero Jason" carries a description or
    a stray token that the old answer's place in the passage would not."""
    words = answer.split()
    return (
        1 <= sum(w not in _JOINERS for w in words) <= 4
        and words[0][0].isupper()
        and words[-1] not in _JOINERS
        and all(w[0].isupper() or w in _JOINERS for w in words)
    )


def _pair(name: str) -> bool:
    return re.search(r"\s(?:and|&)\s", name) is not None


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.casefold()) if len(w) > 2 and w not in _JOINERS}


class NameLadder:
    """Candidates for a name swap from a bank of (question, answer) rows, in the order a level tries them."""

    def __init__(self, questions: Sequence[str], answers: Sequence[str], encode: Callable[[list[str]], np.ndarray]):
        keep = [
            i
            for i, (q, a) in enumerate(zip(questions, answers, strict=True))
            if answer_kind(a) == "name" and is_clean_name(a)
        ]
        self.questions = [questions[i] for i in keep]
        self.answers = [answers[i] for i in keep]
        self.heads = [question_head(q) for q in self.questions]
        self.persons = [is_person_answer(q, a) for q, a in zip(self.questions, self.answers, strict=True)]
        self.encode = encode

    @cached_property
    def vectors(self) -> np.ndarray:
        # Deferred: a run whose seeds never reach a name level does not pay for embedding the bank.
        return self.encode(self.questions)

    def __call__(self, question: str, context: str, answer: str, level: str) -> Iterator[tuple[str, float]]:
        """Up to CANDIDATES (name, similarity of its question to the seed's) of the seed's kind: for a person,
        a person of the gender the passage gives; nearest question first at `near`, farthest first at `far`.
        None for a seed without a head (its kind cannot be told) or a person whose gender neither the passage
        nor the first name says, or they disagree: a "who" answered by two capitalised words that no first-name
        list knows and no pronoun follows is mostly a team or an office ("Manchester United", "Vice
        President"), which a person's name would not stand in for."""
        head = question_head(question)
        person = is_person_answer(question, answer)
        gender = person_gender(context, answer) if person else None
        if not head or (person and gender is None):
            return
        same_kind = [
            i
            for i, (h, p) in enumerate(zip(self.heads, self.persons, strict=True))
            if h == head and p == person and (not person or name_gender(self.answers[i]) == gender)
        ]
        if not same_kind:
            return
        seed = self.encode([question])[0]
        similarity = self.vectors[same_kind] @ seed
        order = np.argsort(-similarity if level == "near" else similarity, kind="stable")
        taken = _words(answer)
        seen: set[str] = set()
        for j in order:
            i, s = same_kind[j], float(similarity[j])
            name = self.answers[i]
            if s >= SAME_QUESTION or name.casefold() in seen or _words(name) & taken:
                continue
            if _pair(name) and not _pair(answer):
                continue  # "Spain and Portugal" for "Japan": two where the passage speaks of one
            seen.add(name.casefold())
            yield name, round(s, 4)
            if len(seen) >= CANDIDATES:
                return
