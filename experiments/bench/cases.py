"""The accepted cases of a bench's generation stages, as the evaluation sees them."""

from __future__ import annotations

import dspy

from experiments.case_sets import RUN_PREFIX, load_run_cases
from experiments.run_store import RunStore


def accepted_cases(store: RunStore) -> list[dspy.Example]:
    """Accepted generated cases, each with its original (a counterfactual case's original is its
    closed-book twin: the question without context, expecting the right option).

    An inconsistent seed's modified document alone is its own accepted case in the generation run (the
    judge validates it); FaithEval's inconsistent case is the two-document one, and only that is put to
    the targets.
    """
    if not store.cases_path.exists():
        return []
    examples, _ = load_run_cases(RUN_PREFIX + store.run_id)
    return [e for e in examples if not str(e.id).endswith(":inconsistent-modified")]
