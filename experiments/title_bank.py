"""The bank a swap of a work, a band, a team or a river draws real names of the same type from: the subjects the
shipped Wikipedia pool's passages open by typing (programs/title_bank.py)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from experiments.data.loaders import load_passages
from experiments.data.registry import DATASETS
from programs.title_bank import TitleBank


@cache
def _bank() -> TitleBank:
    return TitleBank(load_passages(DATASETS["wiki_passages"][0])["text"])


def bank_titles(question: str, context: str, answer: str, key: str) -> Iterator[str]:
    """Candidates for `programs.answer_swap.AnswerSwap(title_candidates=...)`; the bank is built on first use."""
    return _bank()(question, context, answer, key)
