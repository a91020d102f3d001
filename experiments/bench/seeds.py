"""Seed selection once per seed and pivot, shared by every generator that perturbs those seeds.

The seed stage asks the pivot closed- and open-book (two calls per seed) and checkpoints the
outcome; each generator then gets a `RecordedSeedSelection` in place of its own seed-selection
program, which answers from those records and never calls an LM.
"""

from __future__ import annotations

import time

import dspy

from experiments.lm.registry import ResolvedLM
from experiments.tasks.seed_selection import select_seed
from programs.seed_selection import SeedSelection


class SeedStage:
    """The per-case unit of the seed stage (what the runner's case loop maps over)."""

    def __init__(self, pivot: ResolvedLM):
        self.pivot = pivot
        self.program = SeedSelection()

    def process(self, example: dspy.Example) -> dict:
        started = time.perf_counter()
        seed = select_seed(self.pivot, self.program, example)
        return {
            **seed,
            "id": example.id,
            "pivot": self.pivot.config.label,
            "status": "accepted",
            "seconds": round(time.perf_counter() - started, 3),
        }


class RecordedSeedSelection(SeedSelection):
    """Replays a seed stage: same inputs and outputs as SeedSelection (so its prompts are still the ones
    logged), answers looked up by (question, context)."""

    def __init__(self, records: list[dict]):
        super().__init__()
        self.answers = {
            (r["question"], r["original_context"]): (r["pivot_closed_answer"], r["pivot_open_answer"])
            for r in records
            if r.get("status") == "accepted"
        }

    def forward(self, question: str, context: str) -> dspy.Prediction:
        try:
            closed, opened = self.answers[(question, context)]
        except KeyError:
            raise LookupError("no seed-selection record for this seed (its seed stage errored on it)") from None
        return dspy.Prediction(closed_answer=closed, open_answer=opened)
