"""The bank a person swap at a distance draws real people from: every shipped NQ and SQuAD question answered by
a person, embedded by the default retrieval embedder."""

from __future__ import annotations

from functools import cache

from experiments.data.loaders import load_qa_dataset
from experiments.data.registry import DATASETS
from programs.embedders import DEFAULT_EMBEDDER, get_embedder
from programs.name_ladder import NameLadder


@cache
def _ladder() -> NameLadder:
    questions: list[str] = []
    answers: list[str] = []
    for source in ("nq", "squad"):
        rows = load_qa_dataset(DATASETS[source][0])
        questions += rows["question"]
        answers += [a[0] for a in rows["answers"]]
    return NameLadder(questions, answers, lambda texts: get_embedder(DEFAULT_EMBEDDER).encode(texts))


def bank_names(question: str, context: str, answer: str, level: str):
    """Candidates for `programs.answer_swap.AnswerSwap(name_candidates=...)`; the bank is loaded on first use."""
    return _ladder()(question, context, answer, level)
