"""Real people at a distance from the old answer: the people other questions are answered by, taken from the
same domain (near) or from an unrelated one (far).

A name has no numeric distance. What a reader or a target knows about a person is the person's domain: a
swap within the domain ("who played Tom Riddle" → another actor of the series) is plausible to a reader who
knows the truth, one from an unrelated domain (Johannes Gutenberg cast as Tom Riddle) contradicts what that
reader knows of both. The candidates are the person answers of a bank of QA rows; the domain is how close the
bank row's question is to the seed's (cosine of their embeddings).

People only: read blind, swaps of other names drawn the same way (places, teams, companies, languages,
terms) were valid about half the time at near and less at far, most often because the bank's answer was of
another kind than the question asks for ("Lunch" for the language spoken in Italy, an NFL club for a national
team), which a question's wording does not let code tell apart; swaps of people were 23 of 24 valid
(docs/results/strength.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cached_property

import numpy as np

from metrics.checks import overlaps_answer
from programs.person_names import is_person_answer, name_gender, person_gender

NAME_DISTANCES = ("made_up", "near", "far")
# A bank question this close to the seed's asks the same thing (NQ holds reworded duplicates): its answer
# is the truth, or a second answer to the same question, not a person from the same domain.
SAME_QUESTION = 0.95
CANDIDATES = 12


class NameLadder:
    """Candidates for a person swap from a bank of (question, answer) rows, in the order a level tries them."""

    def __init__(self, questions: Sequence[str], answers: Sequence[str], encode: Callable[[list[str]], np.ndarray]):
        people = [(q, a) for q, a in zip(questions, answers, strict=True) if is_person_answer(q, a)]
        self.questions = [q for q, _ in people]
        self.answers = [a for _, a in people]
        self.genders = [name_gender(a) for a in self.answers]
        self.encode = encode

    @cached_property
    def vectors(self) -> np.ndarray:
        # Deferred: a run whose seeds never reach a name level does not pay for embedding the bank.
        return self.encode(self.questions)

    def __call__(self, question: str, context: str, answer: str, level: str) -> Iterator[tuple[str, float]]:
        """Up to CANDIDATES (name, similarity of its question to the seed's): people of the gender the passage
        gives the old answer, nearest question first at `near`, farthest first at `far`. None for an answer
        that is not a person, or whose gender neither the passage nor the first name says (or they disagree):
        a "who" answered by capitalised words no first-name list knows and no pronoun follows is mostly a
        team or an office ("Manchester United", "Vice President"), which a person's name does not stand in for."""
        gender = person_gender(context, answer) if is_person_answer(question, answer) else None
        if gender is None:
            return
        same = [i for i, g in enumerate(self.genders) if g == gender]
        if not same:
            return
        similarity = self.vectors[same] @ self.encode([question])[0]
        order = np.argsort(-similarity if level == "near" else similarity, kind="stable")
        seen: set[str] = set()
        for j in order:
            name, s = self.answers[same[j]], float(similarity[j])
            if s >= SAME_QUESTION or name.casefold() in seen or overlaps_answer(name, [answer]):
                continue
            seen.add(name.casefold())
            yield name, round(s, 4)
            if len(seen) >= CANDIDATES:
                return
