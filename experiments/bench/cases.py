"""The accepted cases of a bench's generation stages, as the evaluation sees them."""

from __future__ import annotations

import dspy

from experiments.case_sets import RUN_PREFIX, load_run_cases
from experiments.run_store import RunStore


def accepted_cases(store: RunStore, examples: list | None = None) -> list[dspy.Example]:
    """Accepted generated cases, each with its original (a counterfactual case's original is its
    closed-book twin: the question without context, expecting the right option).

    An inconsistent seed's modified document alone is its own accepted case in the generation run (the
    judge validates it); FaithEval's inconsistent case is the two-document one, and only that is put to
    the targets.

    In the order of their seeds in `examples` (a Ray stage checkpoints seeds as they finish; the demos,
    the asks and their order must not depend on it).
    """
    if not store.cases_path.exists():
        return []
    cases, _ = load_run_cases(RUN_PREFIX + store.run_id)
    cases = [e for e in cases if not str(e.id).endswith(":inconsistent-modified")]
    if examples is None:
        return cases
    position = {str(e.id): i for i, e in enumerate(examples)}
    return sorted(cases, key=lambda c: position.get(str(c.seed_id), len(position)))
