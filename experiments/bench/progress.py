"""How far a bench's run folder got, for an estimate of what is left: the stages its ledger records finished (a
resume reuses them without loading a model or making a call), and the items each other stage's store holds.

A stage counts as finished here by name, as the ledger records it: one whose inputs changed since (another program
version, other seeds) runs again on resuming, which only the run itself can tell.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from experiments.bench.stages import LEDGER_FILE
from experiments.run_store import RunStore, stage_run_id


@dataclass
class Progress:
    finished: list[str] = field(default_factory=list)
    items: dict[str, int] = field(default_factory=dict)  # per unfinished stage that began: the items it holds

    def __bool__(self) -> bool:
        return bool(self.finished or self.items)


def stage_items(run_id: str, stage: str) -> int:
    """The items a stage of the bench `run_id` has finished (seeds, or a target's asks)."""
    bench = RunStore(run_id)
    store = RunStore(stage_run_id(run_id, stage), root=bench.dir.parent)
    return len(store.finished_ids()) if store.cases_path.exists() else 0


def progress(run_id: str, stages: Iterable[str]) -> Progress:
    """Of `stages`, those the bench `run_id` finished, and the items of those it began."""
    ledger = RunStore(run_id).dir / LEDGER_FILE
    recorded = json.loads(ledger.read_text()) if ledger.exists() else {}
    out = Progress()
    for stage in stages:
        if stage in recorded:
            out.finished.append(stage)
        elif done := stage_items(run_id, stage):
            out.items[stage] = done
    return out
