"""Sentence boundaries with character offsets (pysbd: rule-based, no model download)."""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str


# 2: one segmenter per thread (a shared one mixed concurrent texts up). Part of every bench generation
# stage's inputs: the splitter shapes every generator's output and the judge's rivals.
VERSION = "sentences/2"
_LOCAL = threading.local()


def _segmenter():
    """One segmenter per thread: pysbd keeps the text being split on the instance
    (`Segmenter.original_text`) and finds each sentence's offsets in it afterwards, so two threads
    sharing one mixed their texts up — 99 of 120 concurrent splits came out wrong (cases made two at
    a time lost sentences: an unanswerable context cut short at "... software for mobile phones .")."""
    segmenter = getattr(_LOCAL, "segmenter", None)
    if segmenter is None:
        import pysbd

        segmenter = _LOCAL.segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)
    return segmenter


def split_sentences(text: str) -> list[Sentence]:
    return [Sentence(s.start, s.end, s.sent.strip()) for s in _segmenter().segment(text) if s.sent.strip()]


def sentence_at(text: str, offset: int) -> Sentence | None:
    return next((s for s in split_sentences(text) if s.start <= offset < s.end), None)
