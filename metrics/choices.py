"""Which option of a multiple-choice question an answer chooses: by its label ("B", "(B)", "Answer: B") or by the
option's text, and whether that is the right one (counterfactual cases)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .normalize import answer_tokens, normalize_answer
from .qa import _contains_run


def option_labels(options: Sequence[Any]) -> list[tuple[str, str]]:
    """(label, text) pairs. Plain strings are labelled A, B, C, ...; dicts give label/text."""
    pairs = []
    for i, opt in enumerate(options):
        if isinstance(opt, Mapping):
            label = str(opt.get("label") or chr(ord("A") + i))
            text = str(opt.get("text") or "")
        else:
            label, text = chr(ord("A") + i), str(opt)
        pairs.append((label, text))
    return pairs


_FRAME_WORDS = frozenset({"answer", "is", "the", "correct", "option", "choice", "and", "or", "final"})


def _labels_named(prediction: str, labels: Sequence[str]) -> set[str]:
    """Option labels the prediction names explicitly ("B", "(B)", "Answer: B", "B. text", ...).

    Only upper-case letters count as labels, and a bare letter only when the whole answer is
    labels plus framing words ("Answer is B", "B or C"): in running text "A" is an article.
    """
    alt = "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))
    text = prediction.strip()
    found: set[str] = set()
    words = re.findall(r"[A-Za-z0-9]+", text)
    if len(words) == 1 and words[0].upper() in labels and len(text) <= 4:
        return {words[0].upper()}  # "b", "(b)", "b." : a lone letter is a choice in any case
    if words and all(w in labels or w.lower() in _FRAME_WORDS for w in words):
        found.update(w for w in words if w in labels)
        if found:
            return found
    # Leading marker: "B. photosynthesis", "(B) photosynthesis", "B) ..." , "B: ...".
    lead = re.match(rf"^\s*[\(\[]?({alt})(?:[\)\]]|[.:](?=\s|$))", text)
    if lead:
        found.add(lead.group(1))
    # Marked anywhere: "(B)", "[B]", "answer is B", "answer: (B)", "option B".
    found.update(re.findall(rf"[\(\[]({alt})[\)\]]", text))
    found.update(re.findall(rf"(?i:answer(?:\s+is)?|option|choice)\s*[:\-]?\s*[\(\[]?({alt})\b(?![-'])", text))
    return found


def _options_by_text(prediction: str, pairs: Sequence[tuple[str, str]]) -> set[str]:
    """Labels whose option text the prediction gives: equal after normalisation, else contained.

    Containment is on whole normalised tokens; an option whose match lies inside a longer
    matching option ("water" inside "salt water") is not counted as named separately.
    """
    pred_norm = normalize_answer(prediction)
    if not pred_norm:
        return set()
    equal = {label for label, text in pairs if normalize_answer(text) and normalize_answer(text) == pred_norm}
    if equal:
        return equal
    pred_toks = answer_tokens(prediction)
    hits = [(label, answer_tokens(text)) for label, text in pairs]
    hits = [(label, toks) for label, toks in hits if toks and _contains_run(pred_toks, toks)]
    return {
        label
        for label, toks in hits
        if not any(len(other) > len(toks) and _contains_run(other, toks) for _, other in hits)
    }


def _list_items(text: str) -> frozenset[str]:
    """The items of a list answer ("sand, clay, and dead plants"), each normalised."""
    parts = re.split(r",|;|\band\b", text)
    return frozenset(n for n in (normalize_answer(p) for p in parts) if n)


def _options_by_items(prediction: str, pairs: Sequence[tuple[str, str]]) -> set[str]:
    """Labels of list options the prediction gives in another order ("clay, sand, dead plants, dead animals"
    for "sand, clay, dead plants, and dead animals."). Whole items only: a reordering inside an item
    ("low runoff, high evaporation" for "high runoff, low evaporation") is a different answer."""
    items = _list_items(prediction)
    if len(items) < 2:
        return set()
    return {label for label, text in pairs if _list_items(text) == items}


def choice_of(prediction: str | None, options: Sequence[Any]) -> str | None:
    """The single option label a prediction chooses, or None (no option, or several)."""
    if not prediction or not options:
        return None
    pairs = option_labels(options)
    named = _labels_named(prediction, [label for label, _ in pairs])
    if not named:
        named = _options_by_text(prediction, pairs) or _options_by_items(prediction, pairs)
    return next(iter(named)) if len(named) == 1 else None


def mc_correct(prediction: str | None, options: Sequence[Any], answer_label: str) -> bool:
    """The prediction chooses exactly the option `answer_label` (by letter or by option text)."""
    return choice_of(prediction, options) == str(answer_label)
