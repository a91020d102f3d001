"""Archive the knowledge scans of a bench run under data/knowledge_scans/, so a later scan with the same
reader, model, decoding and build starts from them (experiments/bench/scan_archive.py).

    python3 scripts/archive_knowledge_scan.py <bench-run-id> [--runs-dir runs]

Rows already archived are kept; rows the run added are merged in. The header lists every run that added
rows: its id, the commit and machine that asked them, when they were archived and how many.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's code and data/, whichever checkout is installed

from experiments.bench.scan_archive import archive_path, archived_rows, read_key, write_archive  # noqa: E402
from experiments.paths import runs_dir  # noqa: E402
from experiments.run_store import RunStore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_id")
    parser.add_argument("--runs-dir", type=Path, default=None)
    args = parser.parse_args()
    root = args.runs_dir or runs_dir()
    stages = sorted(p for p in (root / args.run_id).glob("knowledge.*") if (p / "scan_key.json").exists())
    if not stages:
        raise SystemExit(f"no knowledge scan stage with a scan_key.json under {root / args.run_id}")
    for stage in stages:
        described = read_key(stage)
        records = RunStore(f"{args.run_id}/{stage.name}", root=root).records()
        rows = archived_rows(records)
        header = {"kind": "knowledge_scan", **{k: described[k] for k in ("source", "split", "target", "key")}}
        source = {
            "run": args.run_id,
            **described.get("asked_by", {}),
            "archived_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        path = archive_path(described["source"], described["split"], described["target"])
        total = write_archive(path, header, rows, source)
        print(f"{path}: {total} rows ({len(rows)} from {stage.name})")


if __name__ == "__main__":
    main()
