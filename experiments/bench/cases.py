"""The accepted cases of a bench's generation stages, as the evaluation sees them."""

from __future__ import annotations

import dspy

from experiments import task_registry
from experiments.case_sets import RUN_PREFIX, load_run_cases
from experiments.run_store import RunStore


def accepted_cases(store: RunStore, examples: list | None = None) -> list[dspy.Example]:
    """Accepted generated cases, each with its original (a counterfactual case's original is its
    closed-book twin: the question without context, expecting the right option).

    A record a generator writes beside its cases (`helper_suffixes` on its registered entry: an inconsistent
    seed's modified document alone, which the judge validates, is accepted in the generation run) is no case
    and is not put to the targets.

    In the order of their seeds in `examples` (a Ray stage checkpoints seeds as they finish; the demos,
    the asks and their order must not depend on it).
    """
    if not store.cases_path.exists():
        return []
    cases, _ = load_run_cases(RUN_PREFIX + store.run_id)
    cases = [e for e in cases if not task_registry.is_helper(e.id)]
    if examples is None:
        return cases
    position = {str(e.id): i for i, e in enumerate(examples)}
    return sorted(cases, key=lambda c: position.get(str(c.seed_id), len(position)))
