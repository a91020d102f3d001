"""Sentence boundaries with character offsets (pysbd: rule-based, no model download)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str


@lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def split_sentences(text: str) -> list[Sentence]:
    return [Sentence(s.start, s.end, s.sent.strip()) for s in _segmenter().segment(text) if s.sent.strip()]


def sentence_at(text: str, offset: int) -> Sentence | None:
    return next((s for s in split_sentences(text) if s.start <= offset < s.end), None)
