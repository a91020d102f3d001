"""What a process needs to run cases: the task built from the config, and the per-case function.

The local executor builds the task once in the run's own process; each Ray actor builds its own
copy from a WorkerSpec (the resolved run plus what the driver resolved for it), so an actor
loads its models once and then runs any number of cases.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from experiments import run_lock
from experiments.errors import error_record
from experiments.lm.registry import build_lm
from experiments.resolved_run import ResolvedRun

logger = logging.getLogger(__name__)


@dataclass
class WorkerSpec:
    """Everything an actor needs to build the run's task; pickled once per run."""

    run: ResolvedRun
    judge_params: dict | None  # resolved by the driver: `run:<id>` params live in its run store
    examples: list  # the run's seeds, for tasks whose prepare() looks at them (demonstration pools)
    run_dir: str
    build_lms: Callable  # build_lms below; tests swap in fakes
    driver: dict = field(default_factory=run_lock.owner)  # the process that made the spec and holds run_dir

    def build(self) -> tuple[dict, object]:
        """The run's models and task in this process (models load on their first call)."""
        lms = self.build_lms(self.run)
        task, _ = build_task(self.run, lms, self.judge_params)
        if hasattr(task, "prepare"):
            # prepare() may write into the run folder (an optimisation's compiled programs): only while the
            # driver this actor serves still holds it.
            run_lock.check_held_by(Path(self.run_dir), self.driver)
            task.prepare(self.examples, Path(self.run_dir))
        return lms, task


def build_lms(run: ResolvedRun) -> dict:
    """The run's models in this process, by role (a list for "targets" and "pivots"); nothing loads until the
    first call."""
    lms = {}
    for role, entry in run.models.items():
        entries = entry if isinstance(entry, list) else [entry]
        built = [build_lm(config, role.removesuffix("s"), run.split) for config in entries]
        lms[role] = built if isinstance(entry, list) else built[0]
    return lms


def build_task(run: ResolvedRun, lms: dict, judge_params: dict | None):
    """The task with the run's judge, and that judge (the one the opening calibration measures)."""
    task = run.task.cls(lms, run.options)
    run_judge = None
    if judge_params is not None:
        from experiments.judging.params import judge_from

        run_judge = judge_from(judge_params)
        # Tasks build a default judge; the run's judge is the one its parameters say.
        for holder in (task, getattr(task, "scorer", None)):
            if holder is not None and hasattr(holder, "judge"):
                holder.judge = run_judge
    if run.config.validation.acceptance == "auto" and hasattr(task, "acceptance"):
        from experiments.judging.acceptance import AcceptanceDecision

        task.acceptance = AcceptanceDecision.shipped(run.config.task)
    return task, run_judge


def process_case(task, example) -> list[dict]:
    """One seed → its records; any failure of the case is that case's error record.

    The case's calls are tracked (`case_keys`) so that a reply the adapter could not parse can be
    evicted from the call cache (errors.error_status): a redo of the case (`--retry-errors`) then asks
    the LM again for that call only, instead of replaying the unparseable reply."""
    from experiments.call_cache import case_keys

    with case_keys():
        try:
            result = task.process(example)
        except Exception as exc:  # noqa: BLE001 - any failure of one case is that case's error
            logger.debug("case %s failed", example.id, exc_info=True)
            result = error_record(example.id, exc)
    records = [result] if isinstance(result, dict) else result
    return [{**r, "seed_id": example.id} for r in records]


def role_lms(lms: dict):
    """(label, ResolvedLM) pairs: one per role, one per target."""
    for role, value in lms.items():
        if isinstance(value, list):
            yield from ((f"{r.role}/{r.config.label}", r) for r in value)
        else:
            yield role, value


class CaseWorker:
    """A Ray actor's body: builds the task once (models load on their first call), runs cases.

    `spec` is anything with `build() -> (lms, task)`: a run's WorkerSpec, or a bench stage's
    (experiments.bench.placement.StageSpec), whose task is the stage's per-item unit."""

    def __init__(self, spec):
        from experiments.lm.offline import apply_offline_defaults

        apply_offline_defaults()  # an actor is a process of its own: the driver's environment is not its
        self.lms, self.task = spec.build()

    def ready(self) -> dict:
        import experiments

        return {"host": socket.gethostname(), "pid": os.getpid(), "code": str(Path(experiments.__file__).parent)}

    def process(self, example) -> list[dict]:
        return process_case(self.task, example)

    def usage(self) -> dict[str, dict]:
        """LM calls, tokens and seconds this actor spent, per role label (local engines only)."""
        return {label: r.usage() for label, r in role_lms(self.lms) if r.usage()}
