"""The run directories the measuring scripts read (the reviewed runs archived under docs/reviews/ by default)
and their records as the run store reads them (each seed's latest finished attempt)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.run_store import RunStore  # noqa: E402


def run_dirs(args: list[str]) -> list[Path]:
    if args:
        return [Path(a).resolve() for a in args]
    found = sorted(p.parent for p in (ROOT / "docs" / "reviews").rglob("cases.jsonl"))
    return [d for d in found if ".superseded-" not in d.name]


def latest_records(run: Path) -> list[dict]:
    return RunStore(run.name, root=run.parent).records()
