"""What target models are asked with: the decodings, and one reader per target with its demonstrations.

Shared by the evaluate task, the attack scorer and the bench's target stage, so it sits below all three.
"""

from __future__ import annotations

import random

import dspy

from experiments.case_sets import is_run_source, load_run_cases
from experiments.data.loaders import load_qa
from experiments.data.registry import resolve_dataset
from experiments.filters import apply_reeval_filters
from experiments.lm.registry import ResolvedLM
from programs.target_reader import TargetReader

DECODINGS = {"greedy": {}, "sampled": {"temperature": 0.3, "top_p": 0.9}}


def demo_pool(source: str, exclude: set[str], k: int, seed: int) -> list[dspy.Example]:
    if is_run_source(source):
        pool, _ = load_run_cases(source)
    else:
        pool, _ = apply_reeval_filters(load_qa(resolve_dataset(source).path), max_evidence_words=150)
    pool = [e for e in pool if e.get("seed_id", e.id) not in exclude and e.id not in exclude]
    chosen = random.Random(seed).sample(pool, min(k, len(pool)))
    return [
        dspy.Example(context=e.context, question=e.question, answer=e.answers[0]).with_inputs("context", "question")
        for e in chosen
    ]


def readers_for(
    targets: list[ResolvedLM], examples: list, k_shots: int = 0, demo_source: str = "nq", seed: int = 0
) -> dict[str, TargetReader]:
    """One reader per target; demonstrations come from a pool disjoint from `examples`."""
    # No demonstration for a completion-prompted base model outside the few-shot setting: the JSON
    # grammar already fixes the reply's shape, and gemma3-270m shown one demonstration answered its
    # answer ("a new career in advertising") to 287 of 290 bench questions.
    exclude = {e.get("seed_id", e.id) for e in examples} | {e.id for e in examples}
    demos = demo_pool(demo_source, exclude, k_shots, seed) if k_shots > 0 else []
    return {target.config.label: TargetReader(demos[:k_shots]) for target in targets}
