"""Exact span replacement in code: small LMs replaced only the first occurrence, or the wrong span."""

from __future__ import annotations

import re
from collections.abc import Iterable


def span_pattern(span: str) -> re.Pattern:
    """Whole-word, case-insensitive, whitespace-tolerant (NQ text is tokenised: 'July 30 , 2017')."""
    tokens = re.findall(r"\w+|[^\w\s]", span)
    pattern = re.escape(tokens[0])
    for prev, token in zip(tokens, tokens[1:], strict=False):
        # Words need a space between them; punctuation may or may not have one ("30 ," vs "30,").
        pattern += (r"\s+" if prev[-1].isalnum() and token[0].isalnum() else r"\s*") + re.escape(token)
    return re.compile(r"(?<!\w)" + pattern + r"(?!\w)", re.IGNORECASE)


def _match_case(found: str, new: str) -> str:
    # Keep a sentence-initial capital; never lower-case a proper noun the proposal capitalised.
    if found[:1].isupper() and new[:1].islower():
        return new[:1].upper() + new[1:]
    return new


def replace_spans(text: str, olds: Iterable[str], new: str) -> tuple[str, int]:
    """Replace every occurrence of every old span (longest first, so aliases nested in it go too)."""
    total = 0
    for old in sorted({o for o in olds if o.strip()}, key=len, reverse=True):
        text, count = span_pattern(old).subn(lambda m: _match_case(m.group(0), new), text)
        total += count
    return text, total
