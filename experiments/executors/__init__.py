"""Executors map the per-case function over a run's cases: in this process (`local`) or on the
actors of a Ray cluster (`ray`). Either way the run's process is the only writer of the
checkpoint and of MLflow, so resume and exactly-once semantics do not depend on the executor."""

from __future__ import annotations

from experiments.config import RunConfig
from experiments.executors.errors import ExecutorError
from experiments.executors.local import LocalExecutor
from experiments.executors.ray_actors import RayExecutor, ray_session
from experiments.executors.worker import WorkerSpec, build_lms, build_task, process_case, role_lms

__all__ = [
    "ExecutorError",
    "LocalExecutor",
    "RayExecutor",
    "WorkerSpec",
    "build_lms",
    "build_task",
    "make_executor",
    "merge_usage",
    "process_case",
    "ray_session",
    "role_lms",
]


def make_executor(run: RunConfig, task, spec: WorkerSpec, ray_address: str | None = None):
    if run.executor == "ray":
        return RayExecutor(run, spec, ray_address)

    return LocalExecutor(task, run.threads)


def merge_usage(lms: dict, usage: dict[str, dict]) -> None:
    """Counts made by other processes (Ray actors) into the run's own engines, so the metrics
    `lm.<role>.calls/tokens/seconds` mean the same whatever the executor."""
    for label, resolved in role_lms(lms):
        # a local model's engine counts, a provider LM's meter (experiments/lm/usage.py)
        counts = resolved.engine.stats if resolved.engine is not None else getattr(resolved.lm, "meter", None)
        if counts is not None and label in usage:
            counts.merge(usage[label])
