"""Answer-level QA scores: exact match, token F1, token containment.

All scores take a list of gold aliases and keep the best one, as SQuAD and Natural Questions
do: a question with several acceptable answers is answered correctly if any of them matches.
An empty or None prediction never scores, even against a gold that normalises to ''
(e.g. the answer "The"), because "the model said nothing" must not count as correct.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from .normalize import answer_tokens, normalize_answer

# f1_metric's bool form (used by DSPy optimizers as "keep this demo") needs a threshold; 0.5 is
# the usual "mostly right" cut and keeps partially correct multi-word answers.
F1_PASS_THRESHOLD = 0.5


def _aliases(golds: str | Iterable[str] | None) -> list[str]:
    # A bare string is one alias, not a sequence of one-character aliases.
    if golds is None:
        return []
    if isinstance(golds, str):
        return [golds]
    return [g for g in golds if g is not None]


def exact_match(prediction: str | None, golds: Sequence[str]) -> float:
    """1.0 if the normalised prediction equals any normalised gold alias, else 0.0."""
    pred = normalize_answer(prediction)
    if not pred:
        return 0.0
    return float(any(pred == normalize_answer(g) for g in _aliases(golds)))


def _f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    # Multiset overlap, as in the SQuAD script: repeated tokens count only as often as they occur.
    common = Counter(pred_tokens) & Counter(gold_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str | None, golds: Sequence[str]) -> float:
    """SQuAD token F1 against the best-matching gold alias."""
    pred = answer_tokens(prediction)
    if not pred:
        return 0.0
    return max((_f1(pred, answer_tokens(g)) for g in _aliases(golds)), default=0.0)


def _contains_run(haystack: list[str], needle: list[str]) -> bool:
    # Compare token lists, not strings, so "1990" never matches inside "19901".
    n = len(needle)
    if n == 0 or n > len(haystack):
        return False
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def contains_answer(prediction: str | None, golds: Sequence[str], min_gold_coverage: float = 0.0) -> bool:
    """Token containment in either direction, against any gold alias.

    True if a normalised gold's tokens occur as a contiguous run in the normalised prediction
    ("It was the Beatles." contains "Beatles"), or if the non-empty normalised prediction occurs
    as a contiguous run inside a normalised gold ("1990" inside "May 1990") and covers at least
    `min_gold_coverage` of the gold's tokens. The first direction forgives verbose answers from
    chatty models; the second forgives terse answers to long gold spans. With no coverage asked
    (seed selection's rule) the second is lenient: "Paris" counts against an eight-word gold
    that merely mentions Paris; scoring asks for half (MIN_GOLD_COVERAGE). Golds that normalise
    to '' are ignored: an empty run would be contained in everything.
    """
    pred = answer_tokens(prediction)
    if not pred:
        return False
    for gold in _aliases(golds):
        gold_toks = answer_tokens(gold)
        if _contains_run(pred, gold_toks):
            return True
        if _contains_run(gold_toks, pred) and len(pred) >= min_gold_coverage * len(gold_toks):
            return True
    return False


# A terse answer counts against a longer gold when it is at least half of it: "1990" for "May 1990",
# "Beatles" for "The Beatles", not "Paris" for "the capital of France is Paris on the Seine".
MIN_GOLD_COVERAGE = 0.5


def is_correct(prediction: str | None, golds: Sequence[str], min_gold_coverage: float = 0.0) -> bool:
    """Lenient correctness: exact match or token containment (see contains_answer). Seed selection uses
    it with no coverage, the rule its seeds were always chosen by (their golds are at most
    data.max_answer_words long); scoring an evaluation asks for MIN_GOLD_COVERAGE."""
    return exact_match(prediction, golds) == 1.0 or contains_answer(prediction, golds, min_gold_coverage)


# --- DSPy metric convention: def name(example, prediction, trace=None) ---------------------------


def _field(obj: Any, name: str) -> Any:
    # dspy.Example / dspy.Prediction expose fields as attributes; plain dicts (run-store rows)
    # are accepted too so the same metric scores cached records.
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _answer_of(prediction: Any) -> str | None:
    if prediction is None or isinstance(prediction, str):
        return prediction
    return _field(prediction, "answer")


def em_metric(example: Any, prediction: Any, trace: Any = None) -> float | bool:
    """Exact match of prediction.answer against example.answers; bool when traced (optimizers)."""
    score = exact_match(_answer_of(prediction), _field(example, "answers"))
    return score if trace is None else score == 1.0


def f1_metric(example: Any, prediction: Any, trace: Any = None) -> float | bool:
    """Token F1 of prediction.answer against example.answers.

    With a trace (DSPy bootstrapping asks "keep this demonstration?") it returns
    f1 >= F1_PASS_THRESHOLD (0.5).
    """
    score = token_f1(_answer_of(prediction), _field(example, "answers"))
    return score if trace is None else score >= F1_PASS_THRESHOLD


def correct_metric(example: Any, prediction: Any, trace: Any = None) -> float | bool:
    """is_correct (EM or containment) as a metric: 1.0/0.0, or bool when traced."""
    ok = is_correct(_answer_of(prediction), _field(example, "answers"))
    return float(ok) if trace is None else ok
