"""ReEval Category 1: answer swapping.

The pivot proposes a wrong answer of the same type; the evidence is rewritten in code so that
every occurrence of the old answer becomes the new one; optionally the pivot repairs grammar
around the swapped spans, and that edit is kept only if the checks still pass.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from itertools import islice

import dspy
from dspy.utils.exceptions import AdapterParseError

from metrics import is_correct
from metrics.arithmetic import derivation, elapsed_years, remainder, share
from metrics.checks import (
    chronology_flips,
    is_placeholder,
    mentions_any_form,
    name_part_in,
    name_runs,
    old_name_part_left,
    overlaps_answer,
    same_date_parts,
    same_shape,
    similarity_outside,
    stale_glosses,
)
from metrics.proposal_checks import either_or, is_alternative, other_alternative, spells_part, translates, truncated
from metrics.surface_forms import find_forms
from metrics.traces import conversions_after, descriptions_left, gloss_traces, inside_words, weekdays_broken
from metrics.word_traces import (
    aliases_after,
    anaphors,
    derived_words,
    heads_left,
    inflected_forms,
    inside_names,
    letter_counts,
    listed_counts,
    name_talk,
    ordinals_of,
    split_names,
)
from programs.answer_kinds import DESCRIPTIONS, KINDS, Typed, common_for_name, kind_problem, type_in
from programs.distance_ladder import DISTANCES, shifted_answers
from programs.entity_tagger import Tagger
from programs.entity_tagger import tagger as default_tagger
from programs.name_ladder import NAME_DISTANCES
from programs.person_names import (
    generic_name,
    is_first_name,
    is_person_answer,
    made_up_names,
    made_up_parts,
    name_gender,
    named_part,
    passage_gender,
    person_gender,
    surnamed,
)
from programs.place_bank import cities_within, country_traces, distinct_parts, other_places, place_of
from programs.retries import retry_config
from programs.span_edit import DETERMINER_BEFORE, EditResult, replace_forms
from programs.timeline import shift_timeline, year_of
from programs.word_bank import category_problem, is_common_name, is_place, names_a_person, other_words
from signatures.answer_swap import (
    ProposeAnswerOfKind,
    ProposeAnswers,
    ProposeWrongAnswer,
    RepairSwappedPassage,
)

# Version history: CHANGELOG.md.
VERSION = "answer_swap/50"
# Kinds the small tagger gives a person's name it does not know ("Rashida Jones" an organisation, "Wilt
# Chamberlain" a work).
_MISREAD_PEOPLE = frozenset({"organisation", "work", "product", "event", "thing"})
# Who makes the new answer: the pivot (every kind of answer; at a code-made `distance`, a date or a quantity moved
# and a person given a made-up name in code, the pivot writing only what code cannot) or code alone (dates,
# quantities and made-up people; other seeds are level_unreachable).
WRITERS = ("pivot", "rules")
# A phrase left that ties the passage to the old answer (experiments/cues.py): recorded on the case, or the case
# refused. A cue makes a harder conflict, not an invalid text, so it is kept unless the user asks otherwise.
CUE_POLICIES = ("keep", "refuse")
# The kinds the pivot writes by default, where code makes no new answer. Its proposals are verified in code: a
# common noun or a place WordNet knows must be another member of the old answer's category (its things and groups
# read valid in 6 of 22 and 2 of 10 blind readings before that check: a body part for a joint), a person must be
# no one the Wikipedia pool names (80 of 136 before: famous people put into other lives, "Michael Jordan" as
# "Art3mis / Samantha Cook") and of the passage's sex. Phrases (0 of 8) and dates (0 of 2: "1832" for "the
# 1820s") have no such check and are left unreached (docs/results/every_kind.md).
PIVOT_KINDS = ("person", "place", "thing", "group", "organisation", "work", "product", "event", "language", "quantity")
CANDIDATES_PER_RETRY = 5
_ASKS_WHO = re.compile(r"\s*(?:who|whom|whose)\b", re.IGNORECASE)
# Answer kinds code names from WordNet's categories (programs/word_bank.py), and which category family each
# reads: a single word the tagger calls a phrase ("tungsten", "tilde") is a thing.
WORD_KINDS = {"thing": "thing", "phrase": "thing", "group": "group"}
WORD_CANDIDATES = 8
# Kinds code names before the pivot is asked: every kind but dates and quantities, which a distance moves.
TITLE_KINDS = ("organisation", "work", "product", "event", "language")
CODE_NAMED = tuple(k for k in KINDS if k not in ("date", "quantity"))
TRACE_KINDS = (
    "pronunciation",
    "script",
    "symbol",
    "code",
    "inside_word",
    "description",
    "inflection",
    "anaphor",
    "name_talk",
    "alias",
    "letter_count",
    "list_count",
    "inside_name",
    "split_name",
    "country",
    "city_within",
    "head",
    "remainder",
    "elapsed_years",
    "share",
    "ordinal",
    "weekday",
    "conversion",
)


def proposal_problem(
    proposal: str, golds: list[str], max_words: int = 5, context: str | None = None, question: str | None = None
) -> str | None:
    """Why a proposed wrong answer cannot be used, or None. A proposal already in the context would
    stand in the passage twice (once in the old answer's place); one in the question gives itself away."""
    if not proposal.strip():
        return "empty_proposal"
    if is_correct(proposal, golds):  # the scorer would count it right, so it is no wrong answer
        return "proposal_is_gold"
    if len(proposal.split()) > max_words:
        return "proposal_too_long"
    if not same_shape(golds[0], proposal) or not same_date_parts(golds[0], proposal):
        return "proposal_type_mismatch"
    if is_placeholder(proposal):
        return "proposal_placeholder"
    if truncated(proposal):
        return "proposal_truncated"
    if overlaps_answer(proposal, golds) or spells_part(proposal, golds):
        return "proposal_overlaps_answer"
    if translates(proposal, golds):
        return "proposal_translates_answer"
    if question is not None and either_or(question, golds) is not None:
        if not is_alternative(proposal, question, golds):
            return "proposal_outside_alternatives"
    elif question is not None and (mentions_any_form(question, [proposal]) or name_part_in(question, proposal)):
        return "proposal_in_question"
    if context is not None and mentions_any_form(context, [proposal]):
        return "proposal_in_context"
    return None


def swap_checks(
    original: str,
    edited: str,
    golds: list[str],
    new: str,
    min_similarity: float,
    edit: EditResult | None = None,
    kind: str | None = None,
    unmoved: str | None = None,
) -> dict:
    """The old answer must be gone in every form, its distinctive word too; the new one present; the
    rest kept. With the code edit at hand, similarity is measured outside the spans it replaced. `kind` is the
    old answer's (programs/answer_kinds.py): a name must not be one part of a longer name ("Indianapolis
    Colts"); a person's may follow a title ("President Lincoln") but not a saint's ("St. Florian"). `unmoved`: the
    passage before a date swap moved its timeline (`original` is after), for the order of its years."""
    removed = [r.old for r in edit.replacements] if edit else golds
    added = [r.new for r in edit.replacements] if edit else [new]
    similarity = similarity_outside(original, edited, removed or golds, added or [new])
    checks = {"old_forms_replaceable": not edit.unreplaced} if edit is not None else {}
    spans = [(r.start, r.end, r.new) for r in edit.replacements] if edit else []
    glosses = {kind for kind, _ in gloss_traces(original, [end for _, end, _ in spans])}
    traces = {
        **{kind: kind in glosses for kind in ("pronunciation", "script", "symbol", "code")},
        "inside_word": bool(inside_words(edited, golds, keep=[new])),
        "description": bool(descriptions_left(edited, original, golds, "naming")),
        # Read off the original at the replaced offsets when the code edit is at hand (a sentence without
        # a replacement is unchanged); an LM repair's text is checked for what can be read off it alone.
        "inflection": bool(inflected_forms(edited, golds, keep=[new])),
        "derived_word": bool(derived_words(edited, golds, keep=[new])),
        "anaphor": bool(anaphors(edited, golds, keep=[new])),
        "name_talk": bool(name_talk(original, [s for s, _, _ in spans])),
        "alias": bool(aliases_after(original, spans)),
        "letter_count": bool(letter_counts(original, spans)),
        "list_count": bool(listed_counts(original, spans)),
        "inside_name": bool(inside_names(original, spans, golds)),
        "split_name": kind not in (None, "date", "quantity") and bool(split_names(original, spans, kind == "person")),
        "country": any(country_traces(edited, gold) for gold in golds),
        "city_within": any(cities_within(edited, gold) for gold in golds),
        "head": bool(heads_left(edited, golds, keep=[new])),
        "remainder": any(remainder(edited, gold, new) for gold in golds),
        "elapsed_years": any(elapsed_years(edited, gold, new) for gold in golds),
        "share": any(share(edited, gold, new) for gold in golds),
        "ordinal": bool(ordinals_of(edited, golds)),
        "weekday": bool(weekdays_broken(original, edited)),
        "conversion": bool(conversions_after(original, spans)),
    }
    return {
        **checks,
        "new_answer_present": mentions_any_form(edited, [new]),
        "old_answer_absent": not mentions_any_form(edited, golds),
        "old_name_part_absent": not old_name_part_left(edited, golds, keep=[new]),
        "old_name_gloss_absent": not stale_glosses(original, spans, golds),
        "chronology_kept": not chronology_flips(original, spans, unmoved=unmoved),
        "old_answer_not_derivable": not any(derivation(edited, gold) for gold in golds),
        # After the checks above, so that each kind counts the swaps that only it removes.
        **{f"old_answer_trace:{kind}": not found for kind, found in traces.items()},
        "new_answer_fits_grammar": not misplaced_articles(edited, spans),
        "rest_unchanged": similarity >= min_similarity,
        "similarity": round(similarity, 4),
    }


def misplaced_articles(edited: str, spans: list[tuple[int, int, str]]) -> list[str]:
    """New answers whose own article follows another determiner in the edited text ("A single The yen");
    or a capitalised word mid-sentence ("the Korean Republic The yen"); an article after other words stays
    ("recorded by The Beatles")."""
    found = []
    for new in {n for _, _, n in spans if re.match(r"(?:the|a|an)\s", n, re.IGNORECASE)}:
        for m in re.finditer(re.escape(new), edited):
            before = edited[: m.start()]
            if DETERMINER_BEFORE.search(before) or re.search(r"\w\s+[A-Z][\w'’-]*\s+$", before):
                found.append(edited[max(0, m.start() - 20) : m.end()])
    return found


_MONTHS = frozenset(m.casefold() for m in (*calendar.month_name[1:], *calendar.month_abbr[1:]))


def year_in_name(answer: str) -> bool:
    """A number beside a capitalised word that is no month, opening word or era ("the 2007 film Transformers",
    not "July 2016", "In 1990" or "500 BC")."""
    later = answer.split()[1:]
    named = [w for w in later if w[:1].isupper() and w.casefold() not in _MONTHS and not (w.isupper() and len(w) <= 3)]
    return bool(named) and any(ch.isdigit() for ch in answer)


def failed_check(checks: dict) -> str | None:
    return next((name for name, ok in checks.items() if ok is False), None)


class AnswerSwap(dspy.Module):
    def __init__(
        self,
        max_attempts: int = 3,
        repair_grammar: bool = False,
        min_similarity: float = 0.9,
        propose_signature: type[dspy.Signature] = ProposeWrongAnswer,
        propose_max_tokens: int | None = None,
        distance: str = "proposed",
        known_name: Callable[[str], bool] | None = None,
        name_distance: str = "made_up",
        name_candidates: Callable[[str, str, str, str], Iterable[tuple[str, float]]] | None = None,
        writer: str = "pivot",
        tagger: Callable[[], Tagger] | None = default_tagger,
        cue_finder: Callable[[str, str, str, list[str], str], list[str]] | None = None,
        cues: str = "keep",
        pivot_kinds: Iterable[str] | None = None,
        title_candidates: Callable[[str, str, str, str], Iterable[str]] | None = None,
    ):
        super().__init__()
        pivot_kinds = PIVOT_KINDS if pivot_kinds is None else tuple(pivot_kinds)
        unknown = set(pivot_kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"pivot_kinds: each one of {KINDS}, got {sorted(unknown)}")
        if cues not in CUE_POLICIES:
            raise ValueError(f"cues: one of {CUE_POLICIES}, got {cues!r}")
        if writer not in WRITERS:
            raise ValueError(f"writer: one of {WRITERS}, got {writer!r}")
        if writer == "rules" and distance == "proposed":
            raise ValueError("writer: rules makes every new answer in code; 'distance: proposed' asks the pivot")
        if writer == "pivot" and name_distance != "made_up":
            raise ValueError("name_distance: a dial of code-made names (writer: rules); the pivot names people itself")
        if distance not in DISTANCES:
            raise ValueError(f"distance: one of {DISTANCES}, got {distance!r}")
        if name_distance not in NAME_DISTANCES:
            raise ValueError(f"name_distance: one of {NAME_DISTANCES}, got {name_distance!r}")
        if name_distance != "made_up" and (distance == "proposed" or name_candidates is None):
            # A setting that would be silently ignored: names are made in code only at a code-made distance.
            raise ValueError("name_distance: needs a code-made distance (not 'proposed') and a bank of names")
        budget = {"max_tokens": propose_max_tokens} if propose_max_tokens else {}
        self.propose_many = dspy.Predict(ProposeAnswers, max_tokens=max(propose_max_tokens or 0, 160))
        # The swap's own pivot step proposes with the passage in view and the kind the tagger read off it; a
        # generator built on this one with a signature of its own (inconsistent contexts) keeps its step.
        self.typed = propose_signature is ProposeWrongAnswer and tagger is not None
        if self.typed:
            self.propose_kind = dspy.Predict(ProposeAnswerOfKind, **budget)
        else:
            self.propose = dspy.Predict(propose_signature, **budget)
        # Only a program that repairs has the predictor: optimizers tune every predictor they find,
        # and one that never runs gives them nothing to learn from.
        if repair_grammar:
            self.repair = dspy.Predict(RepairSwappedPassage, max_tokens=1024)
        self.max_attempts = max_attempts
        self.repair_grammar = repair_grammar
        self.min_similarity = min_similarity
        self.distance = distance
        self.known_name = known_name
        self.name_distance = name_distance
        self.name_candidates = name_candidates
        self.writer = writer
        self.tagger = tagger
        self.cue_finder = cue_finder
        self.cues = cues
        self.pivot_kinds = tuple(pivot_kinds)
        self.title_candidates = title_candidates

    def forward(self, question: str, context: str, answers: list[str]) -> dspy.Prediction:
        # An NQ span may open on the sentence break before the answer (". The Green Bay Packers"): replaced whole,
        # it takes the break with it, and the pivot copies its form.
        answers = [a.lstrip(".,;:!? ") or a for a in answers]
        answers = [named_part(question, a) for a in answers]
        if either_or(question, answers) is None and (
            mentions_any_form(question, answers) or name_part_in(question, answers[0])
        ):
            # The question states the answer or a word of its name ("where have the mescalero apache settled in
            # new mexico", "rock band formed in seattle in 1990 jam"): any new answer contradicts the question.
            return dspy.Prediction(
                rejection="answer_in_question", proposals=[], context=None, new_answer=None, checks={}, edit="none"
            )
        old = self._typed(question, context, answers)
        # A code-made distance moves dates and quantities; a year inside a title ("Cactus Flower ( 1969 )", "the
        # 2007 film Transformers") is part of a name: moving it leaves the name, and the old answer with it.
        numeric = old is None or (old.kind in ("date", "quantity") and not year_in_name(answers[0]))
        out = None
        if self.writer == "rules" or (
            numeric and self.distance != "proposed" and shifted_answers(answers[0], self.distance, question, question)
        ):
            out = self._swap_at_distance(question, context, answers, old)
        elif self.typed and self.distance != "proposed" and old is not None and old.kind in CODE_NAMED:
            # A person the pivot names is most often a famous one, whose known life then clashes with the passage
            # ("Tom Cruise ( born May 30 , 2000 )"; read invalid); a made-up name of the passage's sex does not.
            # Its places are of another type or region ("London" among "three North American countries"); a
            # country's neighbour or a city of the same country is not. Its things and groups are of another
            # category (programs/word_bank.py); WordNet's siblings are not. The pivot names only what code cannot.
            made = self._swap_at_distance(question, context, answers, old)
            out = None if made.rejection == "level_unreachable" else made
        # At a code-made distance the pivot writes only `pivot_kinds`; `distance: proposed` has it write every kind.
        # An either-or question states its other alternative: code takes it, whatever the kind.
        unwritten = (
            self.distance != "proposed"
            and old is not None
            and (
                old.kind not in self.pivot_kinds
                or (old.kind == "place" and not self._known_place(question, context, answers))
            )
            and other_alternative(question, answers) is None
        )
        if out is None and self.typed and unwritten:
            refused = {"proposal": "", "answer_type": old.kind, "problem": "kind_not_written"}
            out = dspy.Prediction(
                rejection="level_unreachable",
                proposals=[refused],
                context=None,
                new_answer=None,
                checks={},
                edit="none",
            )
        if out is None:
            out = (
                self._propose_of_kind(question, context, answers, old)
                if self.typed
                else self._propose_untyped(question, context, answers)
            )
        return dspy.Prediction(**{**dict(out.items()), "kind": old.kind if old else None})

    def _typed(self, question: str, context: str, answers: list[str]) -> Typed | None:
        """The tagger's kind of the old answer, corrected where the small tagger is known to misread it."""
        if self.tagger is None:
            return None
        old = type_in(self.tagger(), context, answers, question, is_first_name)
        if old is None:
            return None
        who = _ASKS_WHO.match(question) is not None
        if old.kind in ("date", "quantity") and year_in_name(answers[0]):
            # "The Avengers ( 2012 )": a title with its year, which the tagger reads as the date.
            return replace(old, kind="work" if answers[0].lstrip()[:1].isupper() else "thing", read=old.kind)
        if old.kind in ("date", "quantity") and who and not re.search(r"\d", answers[0]):
            # "R&B vocal group , Today" answering "who sang": a name the tagger read as "today".
            return replace(old, kind="organisation", read=old.kind)
        if (
            old.kind == "organisation"
            and who
            and not re.match(r"\s*the\s", answers[0], re.I)
            and passage_gender(context, answers[0]) is not None
        ):
            # "LL Cool J", "Macon Blair": a "who" answer the passage calls he or she is a person, whom a band or
            # a firm cannot replace beside those pronouns; code gives a made-up name.
            return replace(old, kind="person", read=old.kind)
        if old.kind in _MISREAD_PEOPLE and who and (surnamed(answers[0]) or names_a_person(answers[0])):
            # So is a "who" answer ending in a known surname, whatever name the tagger read: "Transnet" for Cecil
            # Rhodes and "The Actors Studio" for Rashida Jones read invalid, and the pivot's people for "Wilt
            # Chamberlain", read as a work, were refused as another kind; "The Kingdom of Life" for Aristotle, whom
            # WordNet knows as a person.
            return replace(old, kind="person", read=old.kind)
        if old.read == "person" and surnamed(answers[0]) and not re.match(r"\s*(?:where|when)\b", question, re.I):
            # The tagger's person, overridden by a noun of the question ("which mountain man": a place), is one
            # where the name ends in a known surname: "Mount Whitney" for Jedediah Strong Smith read invalid. A
            # "where" keeps its place ("Castle Clinton").
            return replace(old, kind="person", read=None)
        return old

    @staticmethod
    def _known_place(question: str, context: str, answers: list[str]) -> bool:
        """A place by GeoNames, by WordNet, or by a "where" question: the pivot is asked for another only then. A
        tagger's place otherwise is too often a work or a person ("Smooth Criminal"), for which the pivot names a
        city."""
        return (
            place_of(answers[0]) is not None
            or is_place(answers[0], context, question)
            or re.match(r"\s*where\b", question, re.I) is not None
        )

    def _propose_of_kind(self, question: str, context: str, answers: list[str], old: Typed | None) -> dspy.Prediction:
        """The pivot proposes a new answer of the old one's kind with the passage in view; code refuses one of
        another kind or number, a stand-in name, a person of the other sex, and asks again (sampled; the
        refused proposals are avoided, and retries ask for a list)."""
        kind = old.kind if old is not None else ("person" if is_person_answer(question, answers[0]) else "thing")
        proposals: list[dict] = []
        alternative = other_alternative(question, answers)
        if alternative is not None:
            # An either-or question allows one wrong answer, the other alternative, which the question states.
            problem = proposal_problem(alternative, answers, context=context, question=question)
            proposals.append({"proposal": alternative, "answer_type": "alternative", "problem": problem})
            if problem is None:
                return self._swap(question, context, answers, alternative, proposals)
        for attempt in range(self.max_attempts):
            avoid = [*answers, *(p["proposal"] for p in proposals if p["proposal"])]
            # Greedy first; retries sample a list of the kind without the gold in view, which a small model copies
            # when shown (programs/retries.py: each with a seed of its own).
            if attempt == 0:
                out = self.propose_kind(
                    question=question,
                    passage=context,
                    answer=answers[0],
                    answer_kind=DESCRIPTIONS[kind],
                    avoid=avoid,
                    config=retry_config(attempt),
                )
                found = [str(out.wrong_answer)]
            else:
                try:
                    out = self.propose_many(
                        question=question, answer_type=DESCRIPTIONS[kind], config=retry_config(attempt)
                    )
                except AdapterParseError:  # a list a small model could not write: this retry gave nothing
                    refused = {"proposal": "", "answer_type": kind, "problem": "unparsed_list", "attempt": attempt}
                    proposals.append(refused)
                    continue
                found = [str(c) for c in list(out.answers or [])[:CANDIDATES_PER_RETRY]]
            for raw in found:
                # A small model may copy the sentence break before the answer (". The New York Giants"), which
                # the swap would write into the passage ("record books . The . The New York Giants"; read invalid).
                proposal = " ".join(raw.strip().strip("\"'").lstrip(".,;:!? ").split())
                if any(p["proposal"] == proposal for p in proposals):
                    continue
                problem = proposal_problem(proposal, answers, context=context, question=question)
                if problem is None:
                    problem = self._fit_problem(question, context, answers, proposal, old)
                if problem is None and kind == "person" and self.known_name is not None and self.known_name(proposal):
                    # A famous person's known life clashes with the passage's ("Tom Cruise ( born May 30 , 2000 )").
                    problem = "proposal_famous"
                proposals.append({"proposal": proposal, "answer_type": kind, "problem": problem, "attempt": attempt})
                if problem is None:
                    return self._swap(question, context, answers, proposal, proposals, old)
        return dspy.Prediction(
            rejection=proposals[-1]["problem"] if proposals else "empty_proposal",
            proposals=proposals,
            context=None,
            new_answer=None,
            checks={},
            edit="none",
        )

    def _fit_problem(
        self, question: str, context: str, answers: list[str], proposal: str, old: Typed | None
    ) -> str | None:
        """Why the proposal cannot stand in the old answer's place, read in the edited passage."""
        if any(generic_name(run) for run in {proposal, *name_runs(proposal)}):
            return "proposal_placeholder"
        # A person by the tagger's reading, or a "who" answer.
        # A "who" answer with an article ("the Dallas Cowboys", "the Eagles") is a team or a band, not a person
        # whose pronouns the new name must take.
        asks_who = _ASKS_WHO.match(question) is not None
        who = (old is not None and old.kind == "person") or (asks_who and not re.match(r"\s*the\s", answers[0], re.I))
        if (
            who
            and len(proposal.split()) == 1
            and is_first_name(proposal)
            and not (len(answers[0].split()) == 1 and is_first_name(answers[0]))
        ):
            # A bare first name stands in for anyone ("the rider of a pale horse is John", "Jack" in a cast
            # list; read invalid), unless the old answer is a bare first name too.
            return "proposal_placeholder"
        bare = re.sub(r"['’]s\b", "", proposal)  # "Hanuman's family" names the question's Hanuman
        if name_part_in(question, bare):
            return "proposal_in_question"
        if name_part_in(context, bare):
            # Another form of a name the passage holds ("Franklin D. Roosevelt" beside "Franklin Delano Roosevelt").
            return "proposal_part_in_context"
        if old is not None and self.tagger is not None:
            edited = replace_forms(context, answers, proposal, whole_name=old.kind == "place").text
            new = type_in(self.tagger(), edited, [proposal], question, is_first_name)
            problem = kind_problem(old, new, is_first_name) if new is not None else None
            if problem is not None:
                return problem
        if common_for_name(context, answers[0], proposal):
            return "proposal_kind_mismatch"
        if old is not None and old.kind in (*WORD_KINDS, "place"):
            # A common noun's proposal must be another member of the answer's WordNet category.
            problem = category_problem(answers[0], proposal, context, question, WORD_KINDS.get(old.kind, "place"))
            if problem is not None:
                return problem
        # A person by the tagger's reading, or a "who" answer the passage refers back to with a pronoun
        # ("Hirschman . He presented"): the new name must be of the passage's sex, as far as its first name
        # says; a name whose sex the lists cannot tell ("Taylor Swift") would be left with "his" or "her" that
        # may not fit, so it is refused where the passage says one.
        # Where the name lists and the passage disagree ("Frankie" is a woman's name in one locale), the passage's
        # pronouns are what the new name must fit.
        said = person_gender(context, answers[0]) or passage_gender(context, answers[0])
        if said is not None and who:
            given = name_gender(proposal)
            if given != said:
                return "proposal_gender_mismatch" if given is not None else "proposal_gender_unknown"
        return None

    def _propose_untyped(self, question: str, context: str, answers: list[str]) -> dspy.Prediction:
        """A generator built on the swap with its own proposal signature (inconsistent contexts): the pivot
        names the type itself."""
        proposals: list[dict] = []
        new_answer = None
        alternative = other_alternative(question, answers)
        if alternative is not None:
            # An either-or question allows one wrong answer, the other alternative: no LM call proposes it
            # more reliably than the question states it.
            problem = proposal_problem(alternative, answers, context=context, question=question)
            proposals.append({"proposal": alternative, "answer_type": "alternative", "problem": problem})
            new_answer = alternative if problem is None else None
        for attempt in range(self.max_attempts if new_answer is None else 0):
            # Greedy first; retries sample, each with a seed of its own (programs/retries.py), and ask for a
            # list of answers of the type without showing the gold, which a small model copies when shown.
            if attempt == 0:
                avoid = [*answers, *(p["proposal"] for p in proposals)]
                out = self.propose(question=question, answer=answers[0], avoid=avoid, config=retry_config(attempt))
                found = [(str(out.wrong_answer), out)]
                answer_type = str(out.answer_type or "") or "short answer"
            else:
                try:
                    out = self.propose_many(question=question, answer_type=answer_type, config=retry_config(attempt))
                except AdapterParseError:  # a list a small model could not write: this retry gave nothing
                    proposals.append(
                        {"proposal": "", "answer_type": "", "problem": "unparsed_list", "attempt": attempt}
                    )
                    continue
                found = [(str(c), out) for c in list(out.answers or [])[:CANDIDATES_PER_RETRY]]
            for raw, out in found:
                proposal = " ".join(raw.split())
                if any(p["proposal"] == proposal for p in proposals):
                    continue
                problem = proposal_problem(proposal, answers, context=context, question=question)
                proposals.append(
                    {
                        "proposal": proposal,
                        "answer_type": answer_type,
                        "problem": problem,
                        "attempt": attempt,
                        **({"justification": out.justification} if "justification" in out else {}),
                    }
                )
                if problem is None:
                    new_answer = proposal
                    break
            if new_answer is not None:
                break
        if new_answer is None:
            return dspy.Prediction(
                rejection=proposals[-1]["problem"],
                proposals=proposals,
                context=None,
                new_answer=None,
                checks={},
                edit="none",
            )

        return self._swap(question, context, answers, new_answer, proposals)

    def _swap_at_distance(
        self, question: str, context: str, answers: list[str], old: Typed | None = None
    ) -> dspy.Prediction:
        """The new answer made in code, no proposal call: a year, date or quantity at the chosen distance
        (programs.distance_ladder); a country, US state or city by a real one of its type nearby
        (programs.place_bank); for a person, at `name_distance` near or far a real person from the same
        or an unrelated domain (programs.name_ladder), else a made-up name of the passage's gender
        (programs.person_names). A seed with none of these, or whose every candidate
        fails the proposal checks, is `level_unreachable`: counted, not silently dropped."""
        proposals: list[dict] = []
        key = f"{question}|{answers[0]}"
        similarity: dict[str, float] = {}  # filled by a real-name bank as it is read
        for candidate, made in self._code_candidates(question, context, answers, old, key, similarity):
            # Against the original passage: a reader comparing the two texts reads a year the original already
            # held as an answer that was there before, even where the timeline moves that year away.
            new, gold = distinct_parts(candidate, answers[0]) if made == "place_bank" else (candidate, answers[0])
            problem = proposal_problem(new, [gold, *answers[1:]], context=context, question=question)
            if problem is None and not made.startswith("distance:") and name_part_in(context, new):
                problem = "proposal_part_in_context"  # a shared word ties the new name to another of the passage
            if problem is None and made in ("word_bank", "title_bank"):
                problem = self._fit_problem(question, context, answers, candidate, old)
            if problem is None and self._timeline_collides(question, context, answers, candidate):
                problem = "timeline_collides"  # 1918 → 1917 would move a 1919 onto the old answer's year
            proposals.append(
                {
                    "proposal": candidate,
                    "answer_type": made,
                    "problem": problem,
                    **({"similarity": similarity[candidate]} if candidate in similarity else {}),
                }
            )
            if problem is None:
                return self._swap(question, context, answers, candidate, proposals, old)
        return dspy.Prediction(
            rejection="level_unreachable", proposals=proposals, context=None, new_answer=None, checks={}, edit="none"
        )

    def _code_candidates(
        self, question: str, context: str, answers: list[str], old: Typed | None, key: str, similarity: dict
    ) -> Iterator[tuple[str, str]]:
        """New answers code can make for this seed, each with where it came from, best first."""
        kind = old.kind if old is not None else None
        titles = []
        if self.title_candidates is not None and kind not in (None, "date", "quantity"):
            titles = list(self.title_candidates(question, context, answers[0], key))
        if kind == "person" and titles:
            # "who sings" answered by a name the passage calls a band ("Canadian rock band Glass Tiger"): another
            # band, never a made-up person.
            yield from ((t, "title_bank") for t in titles)
            return
        # "who won the last world cup": "France", a country the tagger reads as a person.
        country = kind == "person" and not is_person_answer(question, answers[0]) and place_of(answers[0]) is not None
        if kind == "place" or country or (old is None and re.match(r"\s*where\b", question, re.I)):
            yield from ((p, "place_bank") for p in other_places(answers[0], key))
            # A river, a region or a province GeoNames does not list: another of its WordNet category.
            words = other_words(answers[0], context, question, key, "place")
            yield from ((w, "place_bank") for w in islice(words, WORD_CANDIDATES))
        elif kind in WORD_KINDS:
            words = other_words(answers[0], context, question, key, WORD_KINDS[kind])
            yield from ((w, "word_bank") for w in islice(words, WORD_CANDIDATES))
        elif kind in TITLE_KINDS or year_in_name(answers[0]):
            pass  # a name with a number in it ("Article Five", "the 2007 film Transformers") is not moved as a number
        elif kind == "person" and len(answers[0].split()) == 1 and self.name_distance == "made_up":
            if is_common_name(answers[0]) and not is_first_name(answers[0]):
                return  # "Queensland", a state a tagger reads as a person: no surname stands in for it
            yield from ((n, "made_up_name") for n in made_up_parts(context, question, answers[0], key, self.known_name))
        elif not is_person_answer(question, answers[0]):
            made = f"distance:{self.distance}"
            yield from ((a, made) for a in shifted_answers(answers[0], self.distance, key, question))
        elif self.name_distance == "made_up":
            names = made_up_names(context, question, answers[0], key, self.known_name)
            yield from ((n, "made_up_name") for n in names)
        else:
            similarity.update(self.name_candidates(question, context, answers[0], self.name_distance))
            yield from ((n, f"name:{self.name_distance}") for n in list(similarity))
        # A work, a band, a team or a river the passage or the question types: another of that type.
        yield from ((t, "title_bank") for t in titles)

    def _swap(
        self,
        question: str,
        context: str,
        answers: list[str],
        new_answer: str,
        proposals: list[dict],
        old: Typed | None = None,
    ) -> dspy.Prediction:
        unmoved = context
        context, timeline = self._moved_timeline(question, context, answers, new_answer)
        edit_result = replace_forms(context, answers, new_answer, whole_name=old is not None and old.kind == "place")
        edited, replaced = edit_result.text, edit_result.count
        if replaced == 0 and not edit_result.unreplaced:
            return dspy.Prediction(
                rejection="answer_span_not_found",
                proposals=proposals,
                context=None,
                new_answer=new_answer,
                checks={},
                edit="none",
            )
        checks = swap_checks(
            context, edited, answers, new_answer, self.min_similarity, edit_result, old.kind if old else None, unmoved
        )
        edit = "code"
        if self.repair_grammar and failed_check(checks) is None:
            repaired = str(self.repair(passage=edited, new_answer=new_answer).repaired_passage)
            repaired_checks = swap_checks(context, repaired, answers, new_answer, self.min_similarity)
            repaired_checks = {"old_forms_replaceable": checks["old_forms_replaceable"], **repaired_checks}
            if failed_check(repaired_checks) is None:
                edited, checks, edit = repaired, repaired_checks, "lm_repair"
            else:
                edit = "code (lm_repair rejected: " + failed_check(repaired_checks) + ")"
        rejection = failed_check(checks)
        found = []
        if rejection is None and self.cue_finder is not None:
            found = self.cue_finder(question, context, edited, answers, new_answer)
            if found and self.cues == "refuse":
                rejection = "cue_left"
        return dspy.Prediction(
            rejection=rejection,
            proposals=proposals,
            context=edited,
            new_answer=new_answer,
            checks=checks,
            edit=edit,
            replaced=replaced,
            timeline=timeline,
            cues=found,
        )

    @classmethod
    def _timeline_collides(cls, question: str, context: str, answers: list[str], new_answer: str) -> bool:
        _, moves = cls._moved_timeline(question, context, answers, new_answer)
        return any(m["new"] == str(year_of(answers[0])) for m in moves)

    @staticmethod
    def _moved_timeline(question: str, context: str, answers: list[str], new_answer: str) -> tuple[str, list[dict]]:
        """For an answer whose year moved, the context with its other years moved alike (programs.timeline);
        the answer's own forms are left to the swap."""
        old_year, new_year = year_of(answers[0]), year_of(new_answer)
        if old_year is None or new_year is None or old_year == new_year:
            return context, []
        own = [(f.start, f.end) for answer in answers for f in find_forms(context, answer)]
        return shift_timeline(context, question, old_year, new_year, own)
