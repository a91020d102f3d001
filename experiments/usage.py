"""Tokens and wall time spent by one LM inside a block, from DSPy's own usage tracker.

Works the same for local engines and providers (whatever reports usage to DSPy); calls answered
from the cache report no usage, so a resumed or cached run shows the tokens it really spent.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import dspy


def total_tokens(entry: dict) -> int:
    if entry.get("total_tokens"):
        return int(entry["total_tokens"])
    return int((entry.get("prompt_tokens") or entry.get("input_tokens") or 0)
               + (entry.get("completion_tokens") or entry.get("output_tokens") or 0))


@contextmanager
def measured(model: str) -> Iterator[dict]:
    """Yields a dict that holds {"tokens", "seconds"} for `model` once the block ends."""
    out: dict = {}
    started = time.perf_counter()
    with dspy.track_usage() as tracker:
        yield out
    usage = tracker.get_total_tokens().get(model, {})
    out.update(tokens=total_tokens(usage), seconds=round(time.perf_counter() - started, 3))
