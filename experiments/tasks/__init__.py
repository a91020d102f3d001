"""The tasks the runner's case loop runs: a task glues programs, roles, data and metrics for one kind of
experiment. Importing this package registers them (`experiments.registry`)."""

from experiments.tasks import (  # noqa: F401 - imported for their registrations
    answer_swap,
    compare_pivots,
    context_enrich,
    evaluate,
    faitheval,
    judge_calibration,
    optimize,
    seed_selection,
)
