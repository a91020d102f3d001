"""ReEval Category 2: context enriching.

Keep the sentence of the evidence that supports the answer; retrieve related Wikipedia
passages twice (query = question, query = evidence); condense each set into a background
paragraph; merge it with the supporting sentence, which stays verbatim. Two copies per seed.
The LM's merge is kept only if the checks pass; otherwise the sentence is inserted between
background sentences in code, and the record says which merge was used.
"""

from __future__ import annotations

import random

import dspy

from metrics.checks import mentions, mentions_any, years
from metrics.normalize import normalize_answer
from programs.sentences import sentence_at, split_sentences
from signatures.context_enrich import CondensePassages, MergeEvidence, SelectSupportingSentence

VERSION = "context_enrich/1"
LONG_OUTPUT_TOKENS = 320
FOCUSES = ("question", "evidence")


def _squash(text: str) -> str:
    return " ".join(text.split())


def contains_verbatim(text: str, span: str) -> bool:
    """Whitespace-insensitive, otherwise exact: the merge must not paraphrase the key sentence."""
    return _squash(span) in _squash(text)


def supporting_sentence(evidence: str, candidate: str, answers: list[str],
                        answer_start: int | None) -> tuple[str | None, bool]:
    """The LM's sentence if it is a sentence of the evidence holding the answer; else the sentence
    holding the answer span (fallback=True)."""
    sentences = split_sentences(evidence)
    wanted = normalize_answer(candidate)
    for sentence in sentences:
        if wanted and normalize_answer(sentence.text) == wanted and mentions_any(sentence.text, answers):
            return sentence.text, False
    if answer_start is not None:
        found = sentence_at(evidence, answer_start)
        if found and mentions_any(found.text, answers):
            return found.text, True
    found = next((s for s in sentences if mentions_any(s.text, answers)), None)
    return (found.text if found else None), True


def insert_sentence(background: str, sentence: str, seed: int) -> str:
    parts = [s.text for s in split_sentences(background)] or [background]
    position = random.Random(seed).randint(0, len(parts))
    return " ".join([*parts[:position], sentence, *parts[position:]])


def enrich_checks(merged: str, sentence: str, answers: list[str], known_wrong: list[str]) -> dict:
    """Cheap checks; the "no other candidate" check is done where a candidate is recognisable:
    extra years for a year answer, and the pivot's own wrong closed-book answer."""
    added = merged.replace(sentence, " ")
    other_years = years(added) - years(sentence) if any(years(a) for a in answers) else set()
    introduced = [w for w in known_wrong if w and mentions(added, w) and not mentions(sentence, w)]
    return {
        "answer_span_present": any(contains_verbatim(merged, a) for a in answers),
        "key_sentence_kept": contains_verbatim(merged, sentence),
        "longer_than_sentence": len(_squash(merged)) > len(_squash(sentence)) + 20,
        "no_other_candidate": not other_years and not introduced,
    }


def failed_check(checks: dict) -> str | None:
    return next((name for name, ok in checks.items() if ok is False), None)


class ContextEnrich(dspy.Module):
    def __init__(self, retriever=None, k: int = 3, seed: int = 0, lm_merge: bool = True):
        super().__init__()
        self.select_sentence = dspy.Predict(SelectSupportingSentence)
        # Long outputs: the role's max_tokens fits short answers, so these predictors set their own.
        self.condense = dspy.Predict(CondensePassages, max_tokens=LONG_OUTPUT_TOKENS)
        self.merge = dspy.Predict(MergeEvidence, max_tokens=LONG_OUTPUT_TOKENS)
        self.retriever = retriever  # not a predictor: assigned by the task, never saved with the state
        self.k = k
        self.seed = seed
        self.lm_merge = lm_merge

    def forward(self, question: str, context: str, answers: list[str], answer_start: int | None = None,
                known_wrong: list[str] | None = None) -> dspy.Prediction:
        picked = self.select_sentence(question=question, evidence=context, answer=answers[0]).sentence
        sentence, fallback = supporting_sentence(context, str(picked), answers, answer_start)
        if sentence is None:
            return dspy.Prediction(rejection="no_supporting_sentence", copies=[], sentence=None,
                                   sentence_fallback=True)
        copies = []
        for focus in FOCUSES:
            query = question if focus == "question" else context
            hits = self.retriever.search(query, k=self.k, exclude_texts=[context], exclude_answers=answers)
            background = str(self.condense(question=question, passages=[h.text for h in hits]).background)
            merge, merged, checks = "code", None, {}
            if self.lm_merge:
                merged = str(self.merge(background=background, key_sentence=sentence).passage)
                checks = enrich_checks(merged, sentence, answers, known_wrong or [])
                merge = "lm" if failed_check(checks) is None else f"code (lm merge failed: {failed_check(checks)})"
            if merge != "lm":
                merged = insert_sentence(background, sentence, self.seed)
                checks = enrich_checks(merged, sentence, answers, known_wrong or [])
            copies.append({
                "focus": focus, "context": merged, "background": background, "merge": merge,
                "retrieved": [{"id": h.id, "title": h.title, "score": round(float(h.score), 4)} for h in hits],
                "checks": checks, "rejection": failed_check(checks),
            })
        return dspy.Prediction(rejection=None, copies=copies, sentence=sentence, sentence_fallback=fallback)
