"""Sampled retries of a generation step that the checks refused.

The first try is the configured (greedy) call; each retry samples at RETRY_TEMPERATURE with a seed of its
own, the LM's seed plus the attempt. With the LM's one seed for every retry, llama.cpp draws the same random
numbers each time: a retry of an unchanged prompt returns the previous retry's reply word for word, and a
retry whose prompt changed a little (a longer avoid list) mostly does too (three identical "Sheree Julienne
Wilson" proposals for that gold answer in the archived knowledge-conflict swaps). Still seeded, so a re-run
makes the same calls; the rollout id keeps each attempt's cache entry apart.
"""

from __future__ import annotations

import dspy

RETRY_TEMPERATURE = 0.8


def retry_config(attempt: int) -> dict:
    """Per-call settings of try `attempt` (0: the first, as configured)."""
    if not attempt:
        return {}
    config: dict = {"temperature": RETRY_TEMPERATURE, "rollout_id": attempt}
    seed = (getattr(dspy.settings.lm, "kwargs", None) or {}).get("seed")
    if seed is not None:  # an LM configured without a seed (some providers refuse one) gets none
        config["seed"] = int(seed) + attempt
    return config
