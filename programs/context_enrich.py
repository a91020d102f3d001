"""ReEval Category 2: context enriching.

Keep the sentence of the evidence that supports the answer; retrieve related Wikipedia
passages twice (query = question, query = evidence); condense each set into a background
paragraph; merge it with the supporting sentence, which stays verbatim. Two copies per seed.
The copy puts the kept evidence first and the background after it; an LM merge is kept only if it
does so and the checks pass, otherwise the code merge is used, and the record says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import dspy

from metrics.background_checks import background_drops, without
from metrics.checks import content_stems, mentions, mentions_any_form, old_name_part_left
from metrics.evidence_checks import (
    carries_subject_by_name,
    competing_candidates,
    leans_on_previous,
    names_all,
    opens_on_missing_referent,
    opens_with_pronoun,
    question_names,
    restating_sentences,
    title_name,
    unintroduced_pronoun,
)
from metrics.normalize import normalize_answer
from metrics.question_relation import holds, missing_relation, relation_words
from metrics.surface_forms import answer_kind, dates_or_years
from programs.sentences import sentence_at, split_sentences
from signatures.context_enrich import CondensePassages, MergeEvidence, SelectSupportingSentence

# Version history: CHANGELOG.md.
VERSION = "context_enrich/15"
LONG_OUTPUT_TOKENS = 320
# Passages fetched per copy before those offering another candidate are skipped: k clean ones are
# then usually found without a second query (measured: docs/guides/generate.md, the string checks).
FETCH_FACTOR = 4
# The answer sentence, its antecedents and a naming sentence: 5 since context_enrich/10, where a pronoun
# must find its name inside the kept run ("Conan ... Queen Taramis" is four sentences before "He is to
# escort the Queen 's niece , Jehnna ( Olivia d'Abo )").
MAX_KEPT_SENTENCES = 5
FOCUSES = ("question", "evidence")


def _squash(text: str) -> str:
    return " ".join(text.split())


def contains_verbatim(text: str, span: str) -> bool:
    """Whitespace-insensitive, otherwise exact: the merge must not paraphrase the key sentence."""
    return _squash(span) in _squash(text)


def supporting_sentence(
    evidence: str, candidate: str, answers: list[str], answer_start: int | None
) -> tuple[str | None, bool]:
    """The LM's sentence if it is a sentence of the evidence holding the answer; else the sentence
    holding the answer span (fallback=True)."""
    sentences = split_sentences(evidence)
    wanted = normalize_answer(candidate)
    for sentence in sentences:
        if wanted and normalize_answer(sentence.text) == wanted and mentions_any_form(sentence.text, answers):
            return sentence.text, False
    if answer_start is not None:
        found = sentence_at(evidence, answer_start)
        if found and mentions_any_form(found.text, answers):
            return found.text, True
    found = next((s for s in sentences if mentions_any_form(s.text, answers)), None)
    return (found.text if found else None), True


@dataclass(frozen=True)
class KeptEvidence:
    text: str | None  # verbatim evidence: the answer sentence, with its antecedent / subject sentence
    fallback: bool  # not the sentence the LM picked
    # "no_supporting_sentence" | "supporting_sentence_off_topic" | "supporting_sentence_lacks_relation" | None
    problem: str | None
    sentences: int = 0


def kept_evidence(
    evidence: str, candidate: str, question: str, answers: list[str], answer_start: int | None, title: str = ""
) -> KeptEvidence:
    """The evidence to keep verbatim: the shortest run of at most MAX_KEPT_SENTENCES sentences around a
    sentence holding the answer (the LM's pick first, else the one at the answer span, else any) that
    names every name the question asks about (`question_names`: "Nagarjuna Sagar", "Orange Is the New
    Black"; the source article's title too when the question names it: `title_name`), carries a subject
    word, and does not open with a pronoun whose antecedent was cut off. An answer sentence about "the
    dam" or "the service" alone is refused: inserted into background about another dam, it reads as that
    dam's."""
    sentences = split_sentences(evidence)
    if not sentences:
        return KeptEvidence(None, True, "no_supporting_sentence")
    picked, fallback = supporting_sentence(evidence, candidate, answers, answer_start)
    holding = [i for i, s in enumerate(sentences) if mentions_any_form(s.text, answers)]
    if picked is None or not holding:
        return KeptEvidence(None, True, "no_supporting_sentence")
    first = next((i for i in holding if sentences[i].text == picked), holding[0])
    names = question_names(question, evidence)
    titled = title_name(question, title)
    if titled is not None and not any(name <= titled for name in names):
        names.append(titled)
    elif titled is not None and not any(titled & content_stems(evidence) <= name for name in names):
        # The title's words the evidence holds are named too: "The National Assembly ... 332 members" kept
        # without "Pakistan" read as India's parliament inside background about it (read invalid).
        names.append(titled & content_stems(evidence))
    relation = relation_words(question)
    lacking_relation = False
    for index in [first, *(i for i in holding if i != first)]:
        # The question's qualifiers ("longest serving", "last win") are asked of the kept run when the
        # evidence holds them within its reach of the answer sentence: the gold alone ("The first was
        # Jawaharlal Nehru") answers another question (read invalid on held-out rows).
        reach = sentences[max(0, index - MAX_KEPT_SENTENCES + 1) : index + MAX_KEPT_SENTENCES]
        required = [forms for forms in relation if any(holds(s.text, forms) for s in reach)]
        for size in range(1, MAX_KEPT_SENTENCES + 1):
            # backwards first: a subject is usually named before what is said about it
            for start in range(index - size + 1, index + 1):
                end = start + size - 1
                if start < 0 or end >= len(sentences):
                    continue
                # The evidence is itself an excerpt: its first sentence opening on "This feat" leans on
                # text nobody kept (read: after background on Shearer's 100 goals it read as his).
                opening = sentences[start].text
                if (
                    opens_on_missing_referent(opening)
                    if start == 0
                    else opens_with_pronoun(opening) or leans_on_previous(opening, sentences[start - 1].text, question)
                ):
                    continue
                span = evidence[sentences[start].start : sentences[end].end].strip()
                if unintroduced_pronoun(span, evidence):
                    continue
                if not (carries_subject_by_name(span, question) and names_all(span, names)):
                    continue
                if missing_relation(span, required):
                    lacking_relation = True
                    continue
                return KeptEvidence(span, fallback or index != first, None, size)
    return KeptEvidence(
        None, True, "supporting_sentence_lacks_relation" if lacking_relation else "supporting_sentence_off_topic"
    )


_CLOSED = re.compile(r"[.!?…][\"'”’)\]]*$")


def complete_sentences(text: str) -> str:
    """The text without a last sentence cut off mid-way (a condensed background stopped by the
    pivot's token limit: "… The court was officially"), so the key sentence is never inserted
    into, or read as the end of, a fragment."""
    parts = split_sentences(text)
    if len(parts) > 1 and not _CLOSED.search(parts[-1].text):
        return text[: parts[-1].start].rstrip()
    return text


def evidence_first(background: str, evidence: str) -> str:
    """The copy: the kept evidence, then the background. Placing the evidence among background sentences
    let its pronouns and definite descriptions take the background's referents ("she" became The Last
    Song's Ronnie, "This feat" Shearer's 100 goals, "The National Assembly" India's; read
    invalid), and a small pivot's merge cannot be trusted to place it better. First, the evidence can
    only lean on itself, which `kept_evidence` makes sufficient; what follows it is cleaned of sentences
    that would lean on it instead (`metrics.background_checks`)."""
    return f"{evidence} {background}".strip()


# Where the kept evidence stands among the background: first (the default, see `evidence_first`), in the
# middle, or last. Models read the middle of a long context worst ("lost in the middle").
POSITIONS = ("first", "middle", "last")
# The evidence: the answer's sentence with what it leans on (ReEval), or the seed's whole passage, which leaves
# nothing of what tied the answer to the question cut away (the "lost in the middle" construction).
EVIDENCES = ("sentence", "passage")
# The background: the retrieved passages condensed by the pivot into one paragraph (ReEval), or the
# retrieved passages themselves, each its own paragraph (its length grows with k; no condensing call).
BACKGROUNDS = ("condensed", "passages")


def placed(units: list[str], evidence: str, position: str, joiner: str) -> str:
    """The evidence set first, in the middle or last among the background's units (its sentences, or its
    passages as paragraphs)."""
    at = {"first": 0, "middle": len(units) // 2, "last": len(units)}[position]
    return joiner.join([*units[:at], evidence, *units[at:]]).strip()


def evidence_placed(merged: str, sentence: str, position: str) -> bool:
    """The evidence stands where it was placed; with one background unit the middle is the front."""
    text, key = _squash(merged), _squash(sentence)
    if position == "first":
        return text.startswith(key)
    if position == "last":
        return text.endswith(key)
    return key in text and not text.endswith(key)


def enrich_checks(
    merged: str,
    sentence: str,
    answers: list[str],
    known_wrong: list[str],
    question: str | None = None,
    position: str = "first",
) -> dict:
    """Cheap checks; the "no other candidate" check is done where a candidate is recognisable: another
    date or year for a date answer, and with the question at hand another number beside a question
    word for a number answer, another name where the question's subject is (metrics.evidence_checks);
    and the pivot's own wrong closed-book answer."""
    added = merged.replace(sentence, " ")
    others = competing_candidates(added, question or "", answers) if question is not None or _is_date(answers) else []
    introduced = [w for w in known_wrong if w and mentions(added, w) and not mentions(sentence, w)]
    return {
        "answer_span_present": mentions_any_form(merged, answers),
        "key_sentence_kept": contains_verbatim(merged, sentence),
        f"evidence_{position}": evidence_placed(merged, sentence, position),
        "longer_than_sentence": len(_squash(merged)) > len(_squash(sentence)) + 20,
        "no_other_candidate": not others and not introduced,
        "no_restated_question": question is None or not restating_sentences(added, question, answers),
        # The retrieved passages never name the answer, so a background that does got it from the
        # question or the pivot's memory ("... was known as sociological imagination", reviewed invalid).
        # A distinctive word of the answer counts ("Chandan Shetty emerged as the winner" for "rapper
        # Chandan Shetty", reviewed invalid).
        "background_free_of_answer": not mentions_any_form(added, answers) and not old_name_part_left(added, answers),
    }


def _is_date(answers: list[str]) -> bool:
    return bool(answers) and answer_kind(answers[0]) == "date"


def clean_passages(hits: list, question: str, answers: list[str], k: int) -> tuple[list, list]:
    """The first k retrieved passages that offer no other candidate of the answer's type, hold no date at all
    for a date answer, and do not restate the question, and the skipped ones (the next retrieved passage takes
    a skipped one's place)."""
    kept, skipped = [], []
    for hit in hits:
        if len(kept) == k:
            break
        competes = (
            competing_candidates(hit.text, question, answers)
            or restating_sentences(hit.text, question, answers)
            # for a when-question any date a background passage holds reads as a rival answer (read blind:
            # another launch, another championship, another arrival of television)
            or (_is_date(answers) and dates_or_years(hit.text))
        )
        (skipped if competes else kept).append(hit)
    return kept, skipped


def failed_check(checks: dict) -> str | None:
    return next((name for name, ok in checks.items() if ok is False), None)


class ContextEnrich(dspy.Module):
    def __init__(
        self,
        retriever=None,
        k: int = 3,
        seed: int = 0,
        lm_merge: bool = True,
        position: str = "first",
        background: str = "condensed",
        evidence: str = "sentence",
    ):
        super().__init__()
        self.select_sentence = dspy.Predict(SelectSupportingSentence)
        # Long outputs: the role's max_tokens fits short answers, so these predictors set their own.
        self.condense = dspy.Predict(CondensePassages, max_tokens=LONG_OUTPUT_TOKENS)
        self.merge = dspy.Predict(MergeEvidence, max_tokens=LONG_OUTPUT_TOKENS)
        self.retriever = retriever  # not a predictor: assigned by the task, never saved with the state
        self.k = k
        self.seed = seed  # unused since context_enrich/10 (the evidence always comes first); kept so configs load
        if position not in POSITIONS or background not in BACKGROUNDS or evidence not in EVIDENCES:
            raise ValueError(
                f"position in {POSITIONS}, background in {BACKGROUNDS} and evidence in {EVIDENCES}, "
                f"got {position!r}, {background!r}, {evidence!r}"
            )
        self.evidence = evidence
        # The pivot's merge is asked to put the evidence first; elsewhere the code places it.
        self.lm_merge = lm_merge and position == "first" and background == "condensed"
        self.position, self.background = position, background

    def forward(
        self,
        question: str,
        context: str,
        answers: list[str],
        answer_start: int | None = None,
        known_wrong: list[str] | None = None,
        title: str = "",
    ) -> dspy.Prediction:
        kept = self._kept(question, context, answers, answer_start, title)
        if kept.problem:
            return dspy.Prediction(rejection=kept.problem, copies=[], sentence=None, sentence_fallback=True)
        sentence, fallback = kept.text, kept.fallback
        copies = [self._copy(focus, question, context, answers, known_wrong or [], sentence) for focus in FOCUSES]
        return dspy.Prediction(
            rejection=None, copies=copies, sentence=sentence, sentence_fallback=fallback, sentences_kept=kept.sentences
        )

    def _kept(
        self, question: str, context: str, answers: list[str], answer_start: int | None, title: str
    ) -> KeptEvidence:
        """The evidence every copy keeps: the whole passage, or the supporting sentence the pivot picks."""
        if self.evidence == "passage":
            return KeptEvidence(" ".join(context.split()), False, None, len(split_sentences(context)))
        picked = self.select_sentence(question=question, evidence=context, answer=answers[0]).sentence
        return kept_evidence(context, str(picked), question, answers, answer_start, title)

    def _copy(
        self, focus: str, question: str, context: str, answers: list[str], known_wrong: list[str], sentence: str
    ) -> dict:
        """One enriched copy: background retrieved by `focus` (the question or the evidence) merged around the
        kept sentence, with the checks it passed or failed."""
        query = question if focus == "question" else context
        fetched = self.retriever.search(
            query, k=self.k * FETCH_FACTOR, exclude_texts=[context], exclude_answers=answers
        )
        hits, skipped = clean_passages(fetched, question, answers, self.k)
        skipped_ids = [h.id for h in skipped]
        if not hits:
            return {
                "focus": focus,
                "context": None,
                "background": None,
                "merge": "none",
                "retrieved": [],
                "skipped": skipped_ids,
                "checks": {},
                "rejection": "background_has_other_candidate",
            }
        names = question_names(question, context)
        background, units, joiner, drops = self._background(hits, sentence, question, answers, names)
        merge, merged, checks = self._merged(background, units, joiner, sentence, answers, known_wrong, question)
        return {
            "focus": focus,
            "context": merged,
            "background": background,
            "merge": merge,
            "retrieved": [{"id": h.id, "title": h.title, "score": round(float(h.score), 4)} for h in hits],
            "skipped": skipped_ids,
            "background_dropped": [{"rule": rule, "sentence": text} for rule, text in drops],
            "checks": checks,
            "rejection": failed_check(checks),
        }

    def _background(
        self, hits: list, sentence: str, question: str, answers: list[str], names
    ) -> tuple[str, list[str], str, list]:
        """(background, its units, their joiner, the dropped sentences): the passages as retrieved, or condensed
        by the pivot; either way without a sentence that would give away or contradict the answer."""
        if self.background == "passages":
            units = []
            drops = []
            for hit in hits:
                found = background_drops(hit.text, sentence, question, answers, names)
                drops += found
                units.append(without(hit.text, found))
            units = [u for u in units if u.strip()]
            return "\n\n".join(units), units, "\n\n", drops
        background = complete_sentences(
            str(self.condense(question=question, passages=[h.text for h in hits]).background)
        )
        drops = background_drops(background, sentence, question, answers, names)
        background = without(background, drops)
        return background, [s.text for s in split_sentences(background)], " ", drops

    def _merged(
        self,
        background: str,
        units: list[str],
        joiner: str,
        sentence: str,
        answers: list[str],
        known_wrong: list[str],
        question: str,
    ) -> tuple[str, str, dict]:
        """(how it was merged, the merged context, its checks): the pivot's merge when asked for and it passes
        the checks, else the sentence placed among the background's units by code."""
        merge, merged, checks = "code", None, {}
        if self.lm_merge:
            merged = str(self.merge(background=background, key_sentence=sentence).passage)
            checks = enrich_checks(merged, sentence, answers, known_wrong, question)
            merge = "lm" if failed_check(checks) is None else f"code (lm merge failed: {failed_check(checks)})"
        if merge != "lm":
            merged = (
                evidence_first(background, sentence)
                if self.position == "first" and joiner == " "
                else placed(units, sentence, self.position, joiner)
            )
            checks = enrich_checks(merged, sentence, answers, known_wrong, question, self.position)
        return merge, merged, checks
