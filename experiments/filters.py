"""ReEval's filters on the seed QA source, with a count for every rule.

ReEval (Yu et al., 2024) starts from open-book QA rows whose answer is unambiguous and
whose evidence is long enough to perturb. Before seed selection it removes duplicate
question–evidence–answer triplets, evidence shorter than 10 words, answers longer than
5 words, and questions whose several answers disagree; overlapping answers are collapsed
to one. The counts returned here are logged and recorded with the run, so a change in how
many seeds survive is visible instead of silently changing the experiment.

Rules are applied in this order and each dropped example is counted once, under the first
rule that drops it:

1. ``duplicate`` — the (question, context, answers) triplet was already seen. The key
   normalises whitespace and case; answers are compared as a set.
2. ``short_evidence`` — the context has fewer than ``min_evidence_words`` whitespace words.
3. ``long_answer`` — answers with more than ``max_answer_words`` whitespace words are
   removed; the example is dropped when none is left. (NQ text is tokenised, so ``fund 's``
   counts as two words there.)
4. ``non_overlapping_answers`` — two or more answers remain and some pair does not overlap;
   the example is dropped, because it has no single answer to swap. Two answers overlap when
   one contains the other as a whole-token sequence after lower-casing (``"Depp"`` in
   ``"Johnny Depp"``; but ``"1"`` is not in ``"1990"``) or when their ``answer_starts`` spans
   intersect in the context.
5. ``collapsed_multi_answer`` (not a drop) — all remaining answers overlap and are collapsed
   to one: the **longest** (ties: the first in the original order), with its offset. The
   longest answer covers the others, so answer swapping that replaces it removes every
   accepted answer from the evidence, which is what the "old answer gone" check needs.

``kept`` = ``input`` minus the four drop counts.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from itertools import combinations

import dspy

logger = logging.getLogger(__name__)

COUNT_KEYS: tuple[str, ...] = (
    "input",
    "duplicate",
    "short_evidence",
    "long_answer",
    "non_overlapping_answers",
    "collapsed_multi_answer",
    "kept",
)

# A token keeps internal '.', ',', apostrophes and hyphens between word characters (53.7, 4,761,
# o'neil, well-known); any other punctuation is a token of its own.
_TOKEN = re.compile(r"\w+(?:[.,'’\-]\w+)*|[^\w\s]")


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def word_count(text: str) -> int:
    """Whitespace-separated words, as ReEval counts evidence and answer length."""
    return len(text.split())


def triplet_key(question: str, context: str, answers: Iterable[str]) -> tuple[str, str, tuple[str, ...]]:
    """Dedupe key: whitespace-normalised, lower-cased question, context and the set of answers."""
    return _norm(question), _norm(context), tuple(sorted({_norm(a) for a in answers}))


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _contains(big: Sequence[str], small: Sequence[str]) -> bool:
    n = len(small)
    return n > 0 and any(list(big[i : i + n]) == list(small) for i in range(len(big) - n + 1))


def answers_overlap(a: str, b: str, start_a: int | None = None, start_b: int | None = None) -> bool:
    """True when one answer contains the other (whole tokens, lower-cased) or their spans intersect."""
    ta, tb = _tokens(a), _tokens(b)
    if _contains(ta, tb) or _contains(tb, ta):
        return True
    if start_a is not None and start_b is not None:
        return start_a < start_b + len(b) and start_b < start_a + len(a)
    return False


def _starts_of(example: dspy.Example, n: int) -> list[int | None]:
    starts = example.get("answer_starts")
    if not isinstance(starts, list | tuple) or len(starts) != n:
        return [None] * n
    return [s if isinstance(s, int) and not isinstance(s, bool) else None for s in starts]


def apply_reeval_filters(
    examples: Iterable[dspy.Example],
    *,
    min_evidence_words: int = 10,
    max_answer_words: int = 5,
    max_evidence_words: int | None = None,
) -> tuple[list[dspy.Example], dict[str, int]]:
    """Apply ReEval's source filters (see the module docstring for rules and order).

    Takes QA examples with ``question``, ``context``, ``answers`` (and optionally
    ``answer_starts``); returns the kept examples, in input order, and the counts dict with
    keys :data:`COUNT_KEYS`. Inputs are not modified: kept examples are copies, with
    ``answers``/``answer_starts`` reduced where answers were removed or collapsed.
    """
    counts = dict.fromkeys(COUNT_KEYS, 0)
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    kept: list[dspy.Example] = []
    for ex in examples:
        counts["input"] += 1
        answers = list(ex.answers)
        key = triplet_key(ex.question, ex.context, answers)
        if key in seen:
            counts["duplicate"] += 1
            continue
        seen.add(key)

        if word_count(ex.context) < min_evidence_words:
            counts["short_evidence"] += 1
            continue
        # Not one of ReEval's rules: an opt-in cap for small local models, where a 3,000-word
        # flattened table costs minutes per call. Counted like the others.
        if max_evidence_words is not None and word_count(ex.context) > max_evidence_words:
            counts["long_evidence"] = counts.get("long_evidence", 0) + 1
            continue

        pairs = [
            (a, s)
            for a, s in zip(answers, _starts_of(ex, len(answers)), strict=True)
            if word_count(a) <= max_answer_words
        ]
        if not pairs:
            counts["long_answer"] += 1
            continue

        if len(pairs) > 1:
            if not all(answers_overlap(a, b, sa, sb) for (a, sa), (b, sb) in combinations(pairs, 2)):
                counts["non_overlapping_answers"] += 1
                continue
            longest = max(len(a) for a, _ in pairs)
            pairs = [next(p for p in pairs if len(p[0]) == longest)]
            counts["collapsed_multi_answer"] += 1

        kept.append(ex.copy(answers=[a for a, _ in pairs], answer_starts=[s for _, s in pairs]))

    counts["kept"] = len(kept)
    logger.info(
        "ReEval filters: %s",
        ", ".join(f"{k}={v}" for k, v in counts.items()),
    )
    return kept, counts
