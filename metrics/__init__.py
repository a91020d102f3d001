"""Pure scoring functions for reeval: no LM calls, no imports of programs or experiments.

Heavy scorers (NLI, embedders) are passed in as callables by the caller, never loaded here.
"""

from .choices import choice_of, mc_correct
from .evaluation import (
    accuracy_table,
    answer_position,
    breakdown,
    normalised_accuracy,
    paired_drop,
    sycophancy,
)
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
from .scores import SCORES, Score, score_record, score_records
from .seed_table import ERRORS_KEY, SEED_CELLS, seed_cell, seed_table
from .transfer import average_ranks, rank_changes, transfer_matrix

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
    # target evaluation (metrics.scores, metrics.choices, metrics.evaluation, metrics.transfer)
    "accuracy_table",
    "answer_position",
    "average_ranks",
    "breakdown",
    "choice_of",
    "mc_correct",
    "normalised_accuracy",
    "paired_drop",
    "rank_changes",
    "SCORES",
    "Score",
    "score_record",
    "score_records",
    "sycophancy",
    "transfer_matrix",
]
