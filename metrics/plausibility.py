"""Signals of a perturbed passage read off a language model's token probabilities.

A rule per failure only catches the failures someone has read. These signals ask general questions of a
model instead, so that a kind of failure nobody has seen can still move them:

- **the old answer's pull** (`old_pmi`): how much more likely the removed answer becomes once the perturbed
  passage is read, against the question alone, log P(old | passage, question) − log P(old | question). A
  trace left behind (a description, a derived word, "the Moskva River" for a Moscow swapped away) raises it;
  the model's memory of the answer does not, because the closed-book term cancels it.
- **the new answer's support** (`new_support`): log P(new | perturbed passage) − log P(old | original
  passage). A passage that states its new answer as plainly as the original stated the old keeps it near 0.
- **the rest's surprise** (`rest_*`): the change in surprisal of the tokens the edit did not touch. Text that
  only fits the old answer — a pronoun of the other gender, a sentence broken at the edit, a date that no
  longer adds up, a landmark of another city — becomes less likely once the answer is swapped; the largest
  rises (`rest_top`) find a local break, the sum (`rest_sum`) a passage that reads worse throughout.
- **fluency** (`fluency`): the change in mean token log-probability of the whole passage.
- **priors** (`old_closed`, `new_closed`): each answer's log-probability from the question alone. A
  placeholder ("Jane Smith") or a far-fetched answer reads by how likely the model finds it as an answer at
  all, without a list of names.

Pure functions: the model is injected as `score(text) -> [token with start, end, logprob]`
(experiments/lm/token_scorer.py), so tests use a fake and providers that return prompt log-probabilities can
stand in.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Protocol

VERSION = "plausibility/1"
TOP_K = 3  # rest_top sums the K largest surprisal rises: one broken spot, not one noisy token


class Token(Protocol):
    start: int
    end: int
    logprob: float


Scorer = Callable[[str], Sequence[Token]]

PASSAGE = "Passage: "


def reading_prompt(context: str, question: str, answer: str) -> tuple[str, int, int]:
    """The text scored for a passage and an answer, with the character offsets where the passage ends and
    the answer starts (the answer's leading space belongs to its first token)."""
    question = question.strip().rstrip("?") + "?"
    head = f"{PASSAGE}{context.strip()}"
    body = f"{head}\nQuestion: {question}\nAnswer:"
    return f"{body} {answer.strip()}", len(head), len(body)


def closed_prompt(question: str, answer: str) -> tuple[str, int]:
    body = f"Question: {question.strip().rstrip('?')}?\nAnswer:"
    return f"{body} {answer.strip()}", len(body)


def span_logprob(tokens: Sequence[Token], start: int) -> float:
    return sum(t.logprob for t in tokens if t.start >= start)


def rest_shift(original: list[tuple[str, float]], edited: list[tuple[str, float]]) -> dict[str, float]:
    """Surprisal rises of the tokens both passages share (aligned by token text), beyond the edited spans."""
    a = [piece for piece, _ in original]
    b = [piece for piece, _ in edited]
    rises = []
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            rises.append(original[block.a + k][1] - edited[block.b + k][1])
    rises.sort(reverse=True)
    return {
        "rest_top": sum(max(r, 0.0) for r in rises[:TOP_K]),
        "rest_sum": sum(rises),
        "rest_tokens": float(len(rises)),
    }


def _texts(tokens: Sequence[Token], text: str, end: int) -> list[tuple[str, float]]:
    return [(text[t.start : t.end], t.logprob) for t in tokens if len(PASSAGE) <= t.start and t.end <= end]


def _mean(values: list[tuple[str, float]]) -> float:
    return sum(lp for _, lp in values) / len(values) if values else 0.0


def passage_signals(
    score: Scorer, question: str, original: str, edited: str, old: str, new: str | None
) -> dict[str, float]:
    """Every signal of one case. `new` is None for an unanswerable rewrite (no new answer to support).
    Scored in an order that lets a scorer reuse the longest shared prefix (the edited passage twice)."""
    text0, end0, ans0 = reading_prompt(original, question, old)
    text1, end1, ans1 = reading_prompt(edited, question, old)
    tokens0, tokens1 = score(text0), score(text1)
    old_original, old_edited = span_logprob(tokens0, ans0), span_logprob(tokens1, ans1)
    new_edited = None
    if new is not None:
        text2, _, ans2 = reading_prompt(edited, question, new)
        new_edited = span_logprob(score(text2), ans2)
    closed_text, closed_at = closed_prompt(question, old)
    old_closed = span_logprob(score(closed_text), closed_at)
    pieces0, pieces1 = _texts(tokens0, text0, end0), _texts(tokens1, text1, end1)
    out = {
        "old_closed": old_closed,
        "old_pmi": old_edited - old_closed,
        "old_drop": old_original - old_edited,
        "fluency": _mean(pieces1) - _mean(pieces0),
        **rest_shift(pieces0, pieces1),
    }
    if new_edited is not None:
        closed_new, closed_new_at = closed_prompt(question, new)
        new_closed = span_logprob(score(closed_new), closed_new_at)
        out["new_closed"] = new_closed
        out["new_support"] = new_edited - old_original
        out["new_pmi"] = new_edited - new_closed
        out["new_vs_old"] = new_edited - old_edited
    return {k: round(v, 4) for k, v in out.items()}
