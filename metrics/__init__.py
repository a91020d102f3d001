"""Pure scoring functions for reeval: no LM calls, no imports of programs or experiments.

Heavy scorers (NLI, embedders) are passed in as callables by the caller, never loaded here.
"""

from .intervals import bootstrap_ci, rate_with_ci, wilson_interval
from .keywords import CONFLICT_PHRASES, TASK_ANSWERS, UNKNOWN_PHRASES, keyword_match
from .normalize import answer_tokens, normalize_answer
from .qa import (
    F1_PASS_THRESHOLD,
    contains_answer,
    correct_metric,
    em_metric,
    exact_match,
    f1_metric,
    is_correct,
    token_f1,
)
from .seed_table import ERRORS_KEY, SEED_CELLS, seed_cell, seed_table

__all__ = [
    "CONFLICT_PHRASES",
    "ERRORS_KEY",
    "F1_PASS_THRESHOLD",
    "SEED_CELLS",
    "TASK_ANSWERS",
    "UNKNOWN_PHRASES",
    "answer_tokens",
    "bootstrap_ci",
    "contains_answer",
    "correct_metric",
    "em_metric",
    "exact_match",
    "f1_metric",
    "is_correct",
    "keyword_match",
    "normalize_answer",
    "rate_with_ci",
    "seed_cell",
    "seed_table",
    "token_f1",
    "wilson_interval",
]
