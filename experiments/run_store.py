"""Durable per-run checkpoint: one JSONL line per finished case, appended as it completes.

Each line is flushed and fsynced before the next case starts, so a SIGKILL loses at most the
case in flight. A torn last line (killed mid-write) is cut off when the run is reopened.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import datetime, timezone
from pathlib import Path

from experiments.paths import runs_dir

logger = logging.getLogger(__name__)


class RunStore:
    def __init__(self, run_id: str, root: Path | None = None):
        self.run_id = run_id
        self.dir = (root or runs_dir()) / run_id
        self.cases_path = self.dir / "cases.jsonl"
        self._handle = None

    @staticmethod
    def new_id(config_name: str, config_digest: str, fresh: bool = False) -> str:
        run_id = f"{config_name}-{config_digest[:10]}"
        if fresh:
            run_id += "-" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        return run_id

    def exists(self) -> bool:
        return (self.dir / "config.json").exists()

    def write_config(self, resolved: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / "config.json"
        if not path.exists():
            path.write_text(json.dumps(resolved, indent=2, sort_keys=True))

    def read_config(self) -> dict:
        path = self.dir / "config.json"
        if not path.exists():
            raise FileNotFoundError(f"No run {self.run_id!r} in {self.dir.parent}")
        return json.loads(path.read_text())

    def _repair_tail(self) -> None:
        if not self.cases_path.exists():
            return
        data = self.cases_path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            logger.warning("%s: dropping a torn last line (%d bytes)", self.cases_path, len(data) - keep)
            with open(self.cases_path, "r+b") as handle:
                handle.truncate(keep)

    def records(self) -> list[dict]:
        if not self.cases_path.exists():
            return []
        out = []
        with open(self.cases_path, encoding="utf-8") as handle:
            for line in handle:
                if line.endswith("\n"):
                    out.append(json.loads(line))
        # A case re-run after an error replaces its earlier line.
        latest: dict[str, dict] = {}
        for record in out:
            latest[record["id"]] = record
        return list(latest.values())

    def finished_ids(self, retry_errors: bool = False) -> set[str]:
        return {r["id"] for r in self.records()
                if not (retry_errors and str(r.get("status", "")).startswith("error:"))}

    def append(self, record: dict) -> None:
        if self._handle is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._repair_tail()
            self._handle = open(self.cases_path, "a", encoding="utf-8")
        self._handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
