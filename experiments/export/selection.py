"""Which cases of a run leave: the run's case sets (one per bench generator stage or compared pivot), each
narrowed to what the user chose, every row in one public form.

- ``accepted`` (default): the cases the run accepted;
- ``reviewed-valid``: accepted cases the reviewers' majority read valid (``runs/<id>/review/``, as
  ``reeval validity`` reads them);
- ``all``: every case, rejected and errored ones included, each with its status.

A counterfactual case's closed-book twin is the baseline of a case, not a case: it never leaves.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.failures import UserError
from experiments.run_store import RunStore
from experiments.validity.inputs import load_inputs

CASE_CHOICES = ("accepted", "reviewed-valid", "all")
BENCH_GENERATE_PREFIX = "generate."
GROUPED_BY_PIVOT = ("compare_pivots",)
# Tasks whose records are not generated cases: nothing of theirs is a case set.
NOT_GENERATION = ("evaluate", "seed_selection", "judge_calibration")


@dataclass
class CaseSet:
    """The chosen cases of one generator and pivot, with what a card says of them."""

    name: str  # a config name on the hub: the stage or pivot, or "default" for a single-task run
    run_id: str  # the run store holding the records (a bench stage's own id)
    task: str
    config: dict[str, Any]
    records: list[dict[str, Any]]  # the chosen ones
    status_counts: dict[str, int]  # every case of the set, by status
    human: dict[str, bool | None] = field(default_factory=dict)  # case id -> reviewers' majority


def is_case(record: dict[str, Any]) -> bool:
    return not str(record.get("id", "")).endswith(":closed-book") and record.get("variant") != "original"


def status_kind(status: str) -> str:
    """ "accepted", "rejected" or "error": the part of a status counted on the card."""
    return status.split(":", 1)[0] if status else "unknown"


def chosen(record: dict[str, Any], choice: str, human: dict[str, bool | None]) -> bool:
    if choice == "all":
        return True
    if record.get("status") != "accepted":
        return False
    return choice == "accepted" or human.get(str(record["id"])) is True


def _hub_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "default"


def _sets_of(run_id: str, root: Path) -> list[tuple[str, str, list[dict[str, Any]], dict[str, Any]]]:
    """(name, store run id, records, config) of every case set in a run (a bench stage has its own config)."""
    store = RunStore(run_id, root=root)
    config = store.read_config()
    task = config.get("task", "")
    if task in NOT_GENERATION:
        raise UserError(
            f"{run_id!r} is a {task} run: it holds no generated cases; export the generation run whose cases it read"
        )
    if task == "bench":
        stages = sorted(p.name for p in store.dir.iterdir() if p.name.startswith(BENCH_GENERATE_PREFIX) and p.is_dir())
        out = []
        for stage in stages:
            stage_store = RunStore(f"{run_id}/{stage}", root=root)
            if stage_store.cases_path.exists():
                own = stage_store.read_config() if stage_store.exists() else config
                out.append((stage.removeprefix(BENCH_GENERATE_PREFIX), stage_store.run_id, stage_store.records(), own))
        return out
    store.require_cases()
    records = store.records()
    if task in GROUPED_BY_PIVOT:
        pivots = sorted({str(r.get("pivot", "")) for r in records})
        return [(p, run_id, [r for r in records if str(r.get("pivot", "")) == p], config) for p in pivots]
    return [("default", run_id, records, config)]


def select_case_sets(run_id: str, choice: str, root: Path) -> list[CaseSet]:
    """The run's case sets narrowed to `choice`; none with a case in it is a UserError saying why."""
    if choice not in CASE_CHOICES:
        raise UserError(f"--cases {choice!r}: choose one of {', '.join(CASE_CHOICES)}")
    sets = []
    human_by_store: dict[str, dict[str, bool | None]] = {}
    for name, store_id, records, config in _sets_of(run_id, root):
        cases = [r for r in records if is_case(r)]
        if store_id not in human_by_store:
            human_by_store[store_id] = load_inputs(store_id, root).human
        human = human_by_store[store_id]
        kept = [r for r in cases if chosen(r, choice, human)]
        counts = Counter(str(r.get("status", "")) for r in cases)
        task = next((str(r["task"]) for r in cases if r.get("task")), str(config.get("task", "")))
        if kept:
            sets.append(CaseSet(_hub_name(name), store_id, task, config, kept, dict(sorted(counts.items())), human))
    if not sets:
        why = {
            "accepted": "no case of it was accepted",
            "reviewed-valid": "no accepted case of it was read valid by a reviewer (review verdicts live in "
            "runs/<run-id>/review/; `reeval review` writes them)",
            "all": "it holds no case",
        }[choice]
        raise UserError(f"nothing to export from {run_id!r} with --cases {choice}: {why}")
    return sets
