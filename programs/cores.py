"""How many cores this process may use: what llama.cpp contexts and bulk embedding split between them."""

from __future__ import annotations

import os


def available_cores() -> int:
    """REEVAL_THREADS when set (jobs sharing a machine split it), else the cores this process may
    run on (its CPU affinity, which containers and taskset narrow), else os.cpu_count()."""
    if os.environ.get("REEVAL_THREADS"):
        return max(1, int(os.environ["REEVAL_THREADS"]))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
