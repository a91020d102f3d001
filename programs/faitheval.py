"""FaithEval's three context constructions.

- Unanswerable: sentences that carry the answer are rewritten by the generator so they no longer
  do (or dropped, if the rewrite still gives the answer away); the rest is kept.
- Inconsistent: a conflicting answer is swapped into a copy of the context (the answer-swap
  machinery), and the copy is concatenated with the original as two documents, order seeded.
- Counterfactual: for a multiple-choice science question, a multi-paragraph passage that supports
  one wrong option (seeded) and mentions no other option.
"""

from __future__ import annotations

import random
import re

import dspy

from metrics.arithmetic import derivation, majority_size
from metrics.checks import (
    echoes_option,
    mentions_any_form,
    old_name_part_left,
    shares_topic,
    talks_about_the_rewrite,
    talks_about_the_test,
)
from metrics.evidence_checks import competing_candidates, names_beside, restating_sentences
from metrics.normalize import answer_tokens
from metrics.offered_answers import RULES as OFFER_RULES
from metrics.offered_answers import offered_answers
from metrics.surface_forms import answer_kind, find_forms, name_part_left, units_of
from metrics.traces import coarse_dates, date_year_left, descriptions_left, gloss_traces
from metrics.word_traces import derived_words, split_names
from programs.answer_kinds import CONFUSED, LABEL_KINDS, NAMES, TYPE_NOUN_KINDS, type_in
from programs.answer_swap import AnswerSwap
from programs.context_enrich import FETCH_FACTOR, clean_passages, placed
from programs.entity_tagger import tagger as default_tagger
from programs.person_names import is_first_name, person_gender
from programs.place_bank import PLACE_NOUNS, cities_within, country_traces, place_of
from programs.retries import retry_config
from programs.sentences import split_sentences
from programs.span_edit import replace_forms
from signatures.faitheval import (
    ContinueSupportingParagraph,
    ProposeConflictingAnswer,
    RewriteWithoutAnswer,
    WriteSupportingParagraph,
)

# Version history: CHANGELOG.md.
VERSION = "faitheval/32"
UNKNOWN = "unknown"
CONFLICT = "conflict"
GENERATION_TOKENS = 256


def gives_answer(text: str, answers: list[str]) -> bool:
    """The text still tells the answer: in any spelling, or by the distinctive word of a name."""
    return mentions_any_form(text, answers) or bool(old_name_part_left(text, answers))


# What is taken out with the answer, gentlest to strongest: the answer's sentences with a sentence either side,
# the answer's sentences, or the answer's sentences rewritten to say the same without it (a sentence shaped
# like the answer is left for a reader to latch on to). `mask` is FaithEval's rewrite made in code for a name:
# every sentence stays and the name becomes what it is ("a person", "the band"), so a passage about the answer
# itself (`answer_is_subject`) or one whose sentences nearly all name it (`rest_kept`) is still a case; an
# answer that is no name (a date, a number, a phrase) is dropped as with `drop`.
REMOVALS = ("window", "drop", "rewrite", "mask")
# What a masked name becomes, by its kind (programs.answer_kinds); a kind noun the question names ("which band")
# is used instead.
MASK_NOUNS = {
    "person": "person",
    "place": "place",
    "organisation": "organisation",
    "group": "group",
    "work": "work",
    "product": "product",
    "event": "event",
    "language": "language",
}
_MARK = "\ue000"  # a private-use character no passage holds: where a masked form stood
_ARTICLE_BEFORE_MARK = re.compile(r"(?<!\w)(the|a|an)\s+" + _MARK, re.IGNORECASE)
# Lures: sentences holding another value of the answer's type (another date or year for a date answer, another
# number for a number answer; for a name, another name about the question's subject, or any name beside the
# answer's sentence). Removed, little is left to guess from; kept, a reader unwilling to abstain finds a wrong
# answer, and what stood beside the answer often still narrows it down.
LURES = ("remove", "keep")
# Background: passages retrieved from the pool by the question, set around the rest of the passage (which stands
# in the middle). More text on the topic gives a reader unwilling to abstain more to answer from; a passage that
# names the answer, offers another candidate of its type, restates the question, (for a date answer) holds any
# date or offers an answer some other way (metrics.offered_answers) is skipped, and the checks below read the
# whole context.
MAX_BACKGROUND = 8
# What is left of the seed passage is refused by every rule but `rival`: the seed passage names its subject's
# other people and works in other roles (the writer beside a removed singer, the director beside an actress),
# which readers, reading the question's predicate, did not take for the answer. On the archived readings a
# rival in the rest stood in 42 cases read valid and 6 read invalid, none of those 6 for the rival
# (scripts/measure_offered_archived.py).
REST_RULES = tuple(rule for rule in OFFER_RULES if rule != "rival")


def is_lure(sentence: str, question: str, answers: list[str]) -> bool:
    kind = answer_kind(answers[0])
    if kind in ("date", "number"):
        wanted = {"date", "num"} if kind == "date" else {"num", "ord"}
        return any(u.kind in wanted for u in units_of(sentence))
    return bool(competing_candidates(sentence, question, answers))


def lure_indices(sentences: list, question: str, answers: list[str], carrying: set[int]) -> set[int]:
    """Sentences, not carrying the answer, that offer another value of its type; for a name or a description,
    also a sentence beside the answer's that names anything the question does not (read blind, what stayed
    beside a removed name was its broader place, another singer, the band that identifies a person)."""
    beside = {j for i in carrying for j in (i - 1, i + 1)}
    by_name = answer_kind(answers[0]) in ("name", "other")
    return {
        i
        for i, s in enumerate(sentences)
        if i not in carrying
        and (is_lure(s.text, question, answers) or (by_name and i in beside and names_beside(s.text, question)))
    }


def lures_answering(text: str, question: str, answers: list[str]) -> list[str]:
    """Lures that restate the question with another value: they answer it, so the case is not unanswerable."""
    restating = set(restating_sentences(text, question, answers))
    return [s for s in restating if competing_candidates(s, question, answers)]


_OPENING_WORDS = 6
_FIRST_PREDICATE = re.compile(r"\s(?:is|was|are|were|has|had)\s|\(")


def answer_is_subject(opening: str, answers: list[str]) -> bool:
    """The passage opens by naming the answer as its subject (in the first words, before the first verb or
    parenthesis): an article about the answer, which no removal hides."""
    subject = _FIRST_PREDICATE.split(opening, maxsplit=1)[0]
    head = " ".join(subject.split()[:_OPENING_WORDS])
    return answer_kind(answers[0]) in ("name", "other") and gives_answer(head, answers)


def mask_noun(question: str, context: str, answers: list[str], tagger) -> str | None:
    """The noun a name answer is masked by: the kind the question asks for by its noun ("which band" →
    "band"), else the kind the tagger reads; None for an answer that is no name."""
    if answer_kind(answers[0]) != "name":
        return None
    asked = re.search(r"\b(?:what|which)\s+([a-z]+)", question, re.IGNORECASE)
    if asked and asked.group(1).lower() in TYPE_NOUN_KINDS:
        return asked.group(1).lower()
    if re.match(r"\s*(?:who|whom|whose)\b", question, re.IGNORECASE) and person_gender(context, answers[0]):
        return "person"  # a "who" answer the passage calls he or she, whatever the tagger reads ("Hirschman")
    typed = type_in(tagger(), context, answers, question, is_first_name)
    if typed is None:
        return None
    place = place_of(answers[0]) if typed.kind == "place" else None
    # "the country" says what "the place" leaves open, and no more than the question already asks.
    return PLACE_NOUNS[place.type] if place is not None else MASK_NOUNS.get(typed.kind)


def answer_kinds(question: str, context: str, answers: list[str], tagger) -> frozenset[str]:
    """The kinds of name a reader could take for the answer: its kind where it stands in the seed passage and
    the kinds the tagger confuses with it; none for an answer that is no name (dates and numbers have checks of
    their own)."""
    typed = type_in(tagger(), context, answers, question, is_first_name)
    if typed is None or typed.kind not in NAMES:
        return frozenset()
    return frozenset({typed.kind} | {k for pair in CONFUSED if typed.kind in pair for k in pair})


def offers(
    text: str,
    question: str,
    answers: list[str],
    kinds: frozenset[str],
    tagger,
    evidence: str = "",
    rules: tuple[str, ...] = OFFER_RULES,
) -> list[tuple[str, str]]:
    """(rule, sentence) for each way the text offers an answer to the question by the given rules
    (metrics.offered_answers), its names typed by the tagger."""
    typed = bool(kinds) and "rival" in rules  # only rivals read the names
    entities = [(e.start_char, e.end_char, LABEL_KINDS.get(e.label_, "")) for e in tagger()(text).ents] if typed else []
    return offered_answers(text, question, answers, entities, kinds, evidence, rules)


def glosses_left(original: str, edited: str, answers: list[str]) -> list[str]:
    """The glosses that followed the answer in the original (its pronunciation, its own script, a code) still in
    the edited text: "A place ( / ˈstiːviə / ) is a sweetener" says the name aloud."""
    ends = [f.end for answer in answers for f in find_forms(original, answer)]
    return list(dict.fromkeys(body for _, body in gloss_traces(original, ends) if body.strip() and body in edited))


def masked(text: str, answers: list[str], noun: str) -> str:
    """Every form of the answer, and each standalone part of its name, replaced by the noun: the first with
    "a", the others with "the" ("a person" … "The person wrote"); an article the text already has before a
    form is kept ("by the band"); capitalised where a sentence starts."""
    marked = replace_forms(text, answers, _MARK, whole_name=True).text
    if noun == "person":
        marked = _mask_name_parts(marked, answers)
    # An article of the text stays and the mask takes none ("by the Beatles" → "by the band").
    marked = _ARTICLE_BEFORE_MARK.sub(lambda m: m.group(1) + " " + _MARK.lower() + "\0", marked)
    out, first = [], True
    for i, piece in enumerate(marked.split(_MARK)):
        if i:
            kept_article = piece.startswith("\0")
            piece = piece[1:] if kept_article else piece
            phrase = noun if kept_article else (indefinite(noun) if first else f"the {noun}")
            before = "".join(out).rstrip()
            if not before or before[-1] in ".!?" or before.endswith("``"):
                phrase = phrase[:1].upper() + phrase[1:]
            out.append(phrase)
            first = False
        out.append(piece)
    return "".join(out)


def _mask_name_parts(text: str, answers: list[str]) -> str:
    """A person's first name or surname standing alone ("Ramsay" after "Ramsay Snow", "Frye") masked too:
    left, it names the person (`old_name_part_absent` lost a tenth of the selected seeds). Not inside another
    name ("King James", "James Bay"), which the part does not name."""
    spans = []
    for answer in answers:
        # A shorter form of the whole name first ("Mary Frye" for "Mary Elizabeth Frye").
        words = [w for w in answer.split() if w[:1].isupper() and w.isalpha()]
        if len(words) >= 2:
            word = "(?:" + "|".join(map(re.escape, words)) + ")"
            text = re.sub(rf"(?<!\w){word}(?:\s+{word})+(?!\w)", _MARK, text)
        for form in name_part_left(text, answer):
            before, after = text[: form.start].split()[-1:], text[form.end :].split()[:1]
            inside = any(w[:1].isupper() and w not in ("``", _MARK) for w in before + after)
            if form.text[:1].isupper() and form.text.isalpha() and not inside:
                spans.append((form.start, form.end))
    for start, end in sorted(set(spans), reverse=True):
        text = text[:start] + _MARK + text[end:]
    return text


def indefinite(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


class Unanswerable(dspy.Module):
    def __init__(
        self,
        min_kept: float = 0.2,
        removal: str = "rewrite",
        lures: str = "keep",
        background: int = 0,
        retriever=None,
        tagger=default_tagger,
        offered_answers: bool = True,
    ):
        super().__init__()
        if removal not in REMOVALS or lures not in LURES:
            raise ValueError(f"removal in {REMOVALS} and lures in {LURES}, got {removal!r}, {lures!r}")
        if not 0 <= background <= MAX_BACKGROUND or (background and retriever is None):
            raise ValueError(f"background in 0..{MAX_BACKGROUND} passages, with a retriever when above 0")
        self.background, self.retriever = background, retriever  # not a predictor: never saved with the state
        # justification + a full sentence: more than the role's short-answer budget
        self.rewrite = dspy.Predict(RewriteWithoutAnswer, max_tokens=GENERATION_TOKENS)
        self.min_kept = min_kept
        self.removal, self.lures = removal, lures
        self.tagger = tagger
        # Off only to remake the cases earlier versions made and measure what the checks remove from them.
        self.offered_answers = offered_answers

    def forward(self, question: str, context: str, answers: list[str]) -> dspy.Prediction:
        sentences = split_sentences(context)
        carrying = {i for i, s in enumerate(sentences) if gives_answer(s.text, answers)}
        if not carrying:
            return dspy.Prediction(rejection="answer_not_in_context", context=None, edits=[], checks={})
        noun = mask_noun(question, context, answers, self.tagger) if self.removal == "mask" else None
        if noun is None and answer_is_subject(sentences[0].text, answers):
            # The rest of an article describes its subject: without the name it still says who or what it is.
            return dspy.Prediction(rejection="answer_is_subject", context=None, edits=[], checks={})
        if noun is not None:
            replaced = replace_forms(context, answers, _MARK, whole_name=True).replacements
            if split_names(context, [(r.start, r.end, r.new) for r in replaced], person=noun == "person"):
                # A mask inside a longer name breaks it ("Rocket an organisation", "St. The person 's design").
                rejection = "old_answer_trace:split_name"
                return dspy.Prediction(rejection=rejection, context=None, edits=[], checks={rejection: False})
            return self._finish(question, context, answers, *self._masked(question, sentences, answers, carrying, noun))
        removed = set(carrying)
        if self.removal == "window":
            removed |= {j for i in carrying for j in (i - 1, i + 1) if 0 <= j < len(sentences)}
        if self.lures == "remove":
            removed |= lure_indices(sentences, question, answers, carrying)
        rewrite = self.removal == "rewrite"
        if self.removal == "mask":
            # An answer that is no name, in a passage whose answer sentences are most of it: dropped, too little
            # is left (`rest_kept` lost a fifth of the selected seeds); the pivot rewrites them without it, as
            # FaithEval has its LLM do, and the same checks read what it wrote.
            left = sum(len(s.text) for i, s in enumerate(sentences) if i not in removed)
            rewrite = left < self.min_kept * len(context)
        # A rewrite that still gives the answer drops its sentence; a sampled second ask was measured and not
        # kept: on 39 held-out rows 3 of 34 retries gave a clean sentence, none turned a rejected case into an
        # accepted one (the `rest_kept` losses are passages about the answer itself, where the pivot repeats
        # the sentence again), and each cost about one more call a seed.
        parts, edits = [], []
        for i, sentence in enumerate(sentences):
            if i not in removed:
                parts.append(sentence.text)
                continue
            if i not in carrying or not rewrite:
                edits.append({"from": sentence.text, "to": None, "why": "lure" if i not in carrying else self.removal})
                continue
            out = self.rewrite(question=question, sentence=sentence.text, answer=answers[0])
            new = " ".join(str(out.rewritten_sentence).split())
            if (
                new
                and not gives_answer(new, answers)
                and not descriptions_left(new, sentence.text, answers)
                and not date_year_left(new, answers, question)
                and shares_topic(new, sentence.text, answers)
                and not talks_about_the_rewrite(new)
            ):
                parts.append(new)
                edits.append({"from": sentence.text, "to": new, "justification": out.justification})
            else:
                edits.append({"from": sentence.text, "to": None, "justification": out.justification})
        return self._finish(question, context, answers, " ".join(parts), edits)

    def _masked(
        self, question: str, sentences: list, answers: list[str], carrying: set[int], noun: str
    ) -> tuple[str, list[dict]]:
        """Every sentence but the lures the dial removes, the name masked over the whole text (so that each
        mention after the first takes "the")."""
        lures = lure_indices(sentences, question, answers, carrying) if self.lures == "remove" else set()
        edits = [{"from": s.text, "to": None, "why": "lure"} for i, s in enumerate(sentences) if i in lures]
        rest = masked(" ".join(s.text for i, s in enumerate(sentences) if i not in lures), answers, noun)
        edits += [{"from": answers[0], "to": noun, "why": "mask"}]
        return rest, edits

    def _finish(self, question: str, context: str, answers: list[str], rest: str, edits: list[dict]) -> dspy.Prediction:
        kinds = answer_kinds(question, context, answers, self.tagger) if self.offered_answers else frozenset()
        passages = self._background(question, context, answers, kinds)
        if passages is None:
            return dspy.Prediction(rejection="level_unreachable", context=None, edits=edits, checks={}, background=[])
        left = (
            {rule for rule, _ in offers(rest, question, answers, kinds, self.tagger, rules=REST_RULES)}
            if self.offered_answers
            else set()
        )
        edited = placed([h.text for h in passages], rest, "middle", "\n\n") if passages else rest
        checks = {
            "old_answer_absent": not mentions_any_form(edited, answers),
            "old_name_part_absent": not old_name_part_left(edited, answers),
            "old_answer_not_derivable": not any(derivation(edited, a) for a in answers),
            # Named "old_answer_trace:<kind>" so that a run's rejection table counts each kind.
            "old_answer_trace:description": not descriptions_left(edited, context, answers),
            "old_answer_trace:majority": not any(majority_size(edited, a) for a in answers),
            "old_answer_trace:date_year": not date_year_left(edited, answers, question, dated=False),
            "old_answer_trace:coarse_date": not coarse_dates(edited, answers, question),
            "old_answer_trace:derived_word": not derived_words(edited, answers, common=True),
            "old_answer_trace:gloss": not glosses_left(context, edited, answers),
            "old_answer_trace:country": not any(country_traces(edited, a) for a in answers),
            "old_answer_trace:city_within": not any(cities_within(edited, a) for a in answers),
            "lure_answers_question": not lures_answering(edited, question, answers),
            # What is left of the seed passage still offers an answer (metrics.offered_answers); background
            # passages that do are never fetched.
            **{f"offered_answer:{rule}": rule not in left for rule in REST_RULES},
            "rest_kept": len(rest) >= self.min_kept * len(context),
        }
        rejection = next((k for k, ok in checks.items() if not ok), None)
        background = [{"id": h.id, "title": h.title, "score": round(float(h.score), 4)} for h in passages]
        return dspy.Prediction(rejection=rejection, context=edited, edits=edits, checks=checks, background=background)

    def _background(self, question: str, context: str, answers: list[str], kinds: frozenset[str]) -> list | None:
        """The background passages, or None when the pool holds too few clean ones for the dial. A passage
        offering an answer of any kind (metrics.offered_answers) is skipped: read blind, a rival of the
        answer's kind, a definition fitting the question, an infobox row on its subject or a restatement of
        the removed evidence let readers answer."""
        if not self.background:
            return []
        fetched = self.retriever.search(
            question, k=self.background * FETCH_FACTOR, exclude_texts=[context], exclude_answers=answers
        )
        fetched = [h for h in fetched if not gives_answer(h.text, answers)]
        if self.offered_answers:
            evidence = " ".join(s.text for s in split_sentences(context) if gives_answer(s.text, answers))
            fetched = [h for h in fetched if not offers(h.text, question, answers, kinds, self.tagger, evidence)]
        hits, _ = clean_passages(fetched, question, answers, self.background)
        return hits if len(hits) == self.background else None


class Inconsistent(dspy.Module):
    def __init__(self, max_attempts: int = 3, seed: int = 0):
        super().__init__()
        self.swap = AnswerSwap(
            max_attempts=max_attempts, propose_signature=ProposeConflictingAnswer, propose_max_tokens=GENERATION_TOKENS
        )
        self.seed = seed

    def forward(self, question: str, context: str, answers: list[str], case_id: str = "") -> dspy.Prediction:
        out = self.swap(question=question, context=context, answers=answers)
        if out.rejection:
            return dspy.Prediction(rejection=out.rejection, proposals=out.proposals, checks=out.checks)
        # Seeded per case so that re-runs agree and orders are balanced across cases.
        modified_first = random.Random(f"{self.seed}:{case_id}").random() < 0.5
        documents = [out.context, context] if modified_first else [context, out.context]
        combined = "\n\n".join(f"Document {i + 1}: {doc}" for i, doc in enumerate(documents))
        return dspy.Prediction(
            rejection=None,
            proposals=out.proposals,
            checks=out.checks,
            new_answer=out.new_answer,
            modified_context=out.context,
            context=combined,
            order="modified_first" if modified_first else "original_first",
        )


def option_words_present(context: str, option: str) -> bool:
    tokens = set(answer_tokens(context))
    return all(t in tokens for t in answer_tokens(option))


# The checks each paragraph must pass on its own (and is retried for), before they are joined.
PARAGRAPH_CHECKS = ("other_options_absent", "no_task_talk")


def counterfactual_checks(passage: str, question: str, target: str, others: list[str]) -> dict:
    """Other options count as mentioned when named or paraphrased (`echoes_option`); a passage that
    talks about "the target option" or "the question" gives the construction away."""
    return {
        "target_words_present": option_words_present(passage, target),
        "other_options_absent": not any(echoes_option(passage, o, question, target) for o in others),
        "no_task_talk": not talks_about_the_test(passage),
        "multi_paragraph": len([p for p in passage.split("\n") if p.strip()]) >= 2,
    }


class Counterfactual(dspy.Module):
    """A supporting paragraph, then a paragraph continuing it, each written and checked on its own, then
    joined in a seeded order. Small generators asked for a whole multi-paragraph passage at once
    wrote one paragraph, named other options, or ran out of tokens mid-justification; paragraph by
    paragraph each step is short and each failure is retried where it happened. The second paragraph
    sees the first, not the question, so it elaborates the counterfactual claim instead of answering
    the question from memory."""

    def __init__(self, max_attempts: int = 3, seed: int = 0):
        super().__init__()
        self.support = dspy.Predict(WriteSupportingParagraph, max_tokens=GENERATION_TOKENS)
        self.detail = dspy.Predict(ContinueSupportingParagraph, max_tokens=GENERATION_TOKENS)
        self.max_attempts = max_attempts
        self.seed = seed

    def forward(self, question: str, options: list[str], target_index: int) -> dspy.Prediction:
        target = options[target_index]
        others = [o for i, o in enumerate(options) if i != target_index]
        attempts: list[dict] = []

        def passes(*names: str):
            return lambda p: all(counterfactual_checks(p, question, target, others)[n] for n in names)

        support, justification = self._paragraph(
            attempts,
            "support",
            passes("target_words_present", *PARAGRAPH_CHECKS),
            question=question,
            target_option=target,
            other_options=others,
        )
        if support is None:
            return self._rejected(attempts, "support")
        detail, _ = self._paragraph(attempts, "detail", passes(*PARAGRAPH_CHECKS), paragraph=support, avoid=others)
        if detail is None:
            return self._rejected(attempts, "detail")
        # Seeded per question, so the supporting paragraph is first in about half the cases.
        support_first = random.Random(f"{self.seed}:{question}").random() < 0.5
        passage = "\n\n".join([support, detail] if support_first else [detail, support])
        checks = counterfactual_checks(passage, question, target, others)
        rejection = next((k for k, ok in checks.items() if not ok), None)
        return dspy.Prediction(
            rejection=rejection,
            context=passage,
            checks=checks,
            attempts=attempts,
            justification=justification,
            support_first=support_first,
        )

    def _paragraph(self, attempts: list[dict], step: str, ok, **inputs) -> tuple[str | None, str]:
        predictor, output = (self.support, "paragraph") if step == "support" else (self.detail, "next_paragraph")
        for attempt in range(self.max_attempts):
            out = predictor(**inputs, config=retry_config(attempt))
            paragraph = " ".join(str(out.get(output) or "").split())
            passed = bool(paragraph) and ok(paragraph)
            attempts.append({"step": step, "paragraph": paragraph, "passed": passed})
            if passed:
                return paragraph, str(out.get("justification", "") or "")
        return None, ""

    @staticmethod
    def _rejected(attempts: list[dict], step: str) -> dspy.Prediction:
        return dspy.Prediction(
            rejection=f"{step}_paragraph_failed",
            context=None,
            checks={},
            attempts=attempts,
            justification="",
            support_first=None,
        )
