"""Durable per-run checkpoint (`runs/<run-id>/cases.jsonl`): the records of each row, appended as the row
completes.

The words the command line counts with, one thing each:

- a **row** is one line of the data a run reads (after its split, offset, filters and limit); a run goes
  row by row, and a resumed run skips the rows already done;
- a **record** is one line of the checkpoint: what a row gave, be it a seed's scores, a generated case or a
  target's answer; a row gives one record or several;
- a **case** is a record holding a context a generator made (:func:`is_case`), whatever its status; the
  accepted cases are what review, validity, export and evaluation read. A seed selection or an evaluation
  writes records but makes no case.

Each row's records are flushed and fsynced before the next row starts, so a SIGKILL loses at most the
row in flight. A torn last line (killed mid-write) is cut off when the run is reopened.
"""

from __future__ import annotations

import json
import logging
import os
import re
from datetime import datetime, timezone
from pathlib import Path

from experiments.config import config_from_dict
from experiments.paths import runs_dir
from experiments.secrets import redact_json_line, secret_values

logger = logging.getLogger(__name__)


def repair_torn_tail(path: Path) -> None:
    """Cut off a last line torn by a kill mid-write: it was never acknowledged, so nothing is lost."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        logger.warning("%s: dropping a torn last line (%d bytes)", path, len(data) - keep)
        with open(path, "r+b") as handle:
            handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())


def is_case(record: dict) -> bool:
    """A record holding a context a generator made. A target's answer, an original kept beside its cases
    (a closed-book twin) and a seed's scores are records but not cases."""
    return "target" not in record and record.get("variant") != "original" and bool(record.get("context"))


def counted(n: int, word: str) -> str:
    """`n` and `word` ("row", "record", "case"), plural unless one."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def run_counts(records: list[dict]) -> str:
    """The rows, records and cases of a run, in the words every command uses."""
    rows = len({r.get("seed_id", r["id"]) for r in records})
    cases = [r for r in records if is_case(r)]
    accepted = sum(r.get("status") == "accepted" for r in cases)
    made = f"{counted(len(cases), 'case')} ({accepted} accepted)" if cases else "no cases (nothing generated)"
    return f"{counted(rows, 'row')}, {counted(len(records), 'record')}, {made}"


class RunNotFound(FileNotFoundError):
    """A run id with nothing behind it; the message names the id and where it was looked for."""


STORED_CONFIG_HINT = "written by another version of reeval? start the run again with `reeval run <its config> --fresh`"


class RunStoreError(ValueError):
    """A run directory that cannot be used as it is (a damaged file, or another config's run)."""


_RUN_ID = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*")


def stage_run_id(bench_run_id: str, stage: str) -> str:
    """The run id of a bench stage's own case store: "<bench id>/<stage>". Provider model names carry
    "/": a stage's folder must stay one level below the bench's."""
    return f"{bench_run_id}/{stage.replace('/', '__')}"


def is_run_id(text: str) -> bool:
    """A name a run directory can have under runs/ (an MLflow run id is one too)."""
    return bool(_RUN_ID.fullmatch(text)) and not {".", ".."} & set(text.split("/"))


class RunStore:
    def __init__(self, run_id: str, root: Path | None = None):
        if not is_run_id(run_id):
            # An id names a directory under runs/ (a bench's stages: "<bench id>/<stage>"); "../x" or "/x"
            # would read or write outside it.
            raise RunStoreError(
                f"{run_id!r} is not a run id: a run id is a name of letters, digits, '.', '_' "
                f"and '-' (a bench stage: '<bench id>/<stage>'), as `reeval run` prints it"
            )
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

    def _not_found(self, missing: Path) -> RunNotFound:
        return RunNotFound(
            f"no run {self.run_id!r}: {missing} does not exist; check the id "
            f"(run ids are the folder names in {self.dir.parent})"
        )

    def require_cases(self) -> Path:
        """The run's cases file; an unknown run id is a :class:`RunNotFound` that says where it looked."""
        if not self.cases_path.exists():
            raise self._not_found(self.cases_path)
        return self.cases_path

    def read_config(self) -> dict:
        path = self.dir / "config.json"
        if not path.exists():
            raise self._not_found(path)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RunStoreError(
                f"{path}: damaged ({exc}); the run cannot be resumed: start it again with "
                "`reeval run <its config> --fresh`"
            ) from None

    def experiment_config(self):
        """The run's own config, validated against the schema; one this code cannot read is a ConfigError
        naming the file. (Against the task registry too: `experiments.config_loader.config_from_dict`.)"""
        return config_from_dict(self.read_config(), self.dir / "config.json", hint=STORED_CONFIG_HINT)

    def _repair_tail(self) -> None:
        repair_torn_tail(self.cases_path)

    def _lines(self) -> list[dict]:
        if not self.cases_path.exists():
            return []
        lines = []
        # Bytes, decoded line by line: an undecodable line is named like a line of bad JSON, not left to crash the
        # whole read.
        with open(self.cases_path, "rb") as handle:
            for lineno, raw in enumerate(handle, start=1):
                if not raw.endswith(b"\n") or not raw.strip():
                    continue  # a torn last line was never acknowledged; it is cut off when the run reopens
                try:
                    # Without its newline: a line cut short would otherwise be reported at column 1 of a next line.
                    record = json.loads(raw.decode("utf-8").rstrip("\r\n"))
                except UnicodeDecodeError as exc:
                    problem = f"not valid UTF-8 ({exc.reason} at byte {exc.start + 1} of the line)"
                except json.JSONDecodeError as exc:
                    problem = f"not valid JSON ({exc.msg}, column {exc.colno})"
                else:
                    if isinstance(record, dict) and isinstance(record.get("id"), str):
                        lines.append(record)
                        continue
                    problem = "field 'id': expected a JSON object with a string id"
                raise RunStoreError(
                    f"{self.cases_path}:{lineno}: {problem}; fix or delete that line "
                    "(its case is then redone on resume)"
                )
        return lines

    def records(self) -> list[dict]:
        """Case records of each seed's latest attempt (a seed re-run after an error replaces its lines)."""
        lines = self._lines()
        groups: dict[tuple[str, int], list[dict]] = {}
        for record in lines:
            groups.setdefault((record.get("seed_id", record["id"]), record.get("attempt", 1)), []).append(record)
        latest: dict[str, int] = {}
        for (seed, attempt), group in groups.items():
            # A batch cut short by a kill (fewer lines than it announced) does not count as done.
            if len(group) == group[0].get("batch_size", len(group)):
                latest[seed] = max(latest.get(seed, 0), attempt)
        return [r for (seed, attempt), group in groups.items() if latest.get(seed) == attempt for r in group]

    def finished_ids(self, retry_errors: bool = False) -> set[str]:
        """Seeds whose processing finished; with retry_errors, a seed that ended in error is not finished."""
        finished = set()
        for record in self.records():
            seed = record.get("seed_id", record["id"])
            if not (retry_errors and str(record.get("status", "")).startswith("error:")):
                finished.add(seed)
        return finished

    def append(self, records: dict | list[dict]) -> None:
        """Write all records of one seed, then fsync: a seed is checkpointed whole or not at all."""
        batch = [records] if isinstance(records, dict) else records
        if self._handle is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._repair_tail()
            self._attempts = {}
            for record in self._lines():
                seed = record.get("seed_id", record["id"])
                self._attempts[seed] = max(self._attempts.get(seed, 0), record.get("attempt", 1))
            self._handle = open(self.cases_path, "ab", buffering=0)
        seeds = {r.get("seed_id", r["id"]) for r in batch}
        for seed in seeds:
            self._attempts[seed] = self._attempts.get(seed, 0) + 1
        lines = []
        secrets = secret_values()
        for record in batch:
            seed = record.get("seed_id", record["id"])
            line = json.dumps(
                {
                    **record,
                    "seed_id": seed,
                    "attempt": self._attempts[seed],
                    "batch_size": sum(r.get("seed_id", r["id"]) == seed for r in batch),
                },
                ensure_ascii=False,
                sort_keys=True,
            )
            # A provider's message that repeats a request's key must not reach the store (or MLflow from it).
            lines.append(redact_json_line(line, secrets) + "\n")
        self._write("".join(lines).encode("utf-8"))

    def _write(self, data: bytes) -> None:
        """`data` appended whole and fsynced, or not at all: a write that fails (a full disk) is cut back off, so
        the checkpoint keeps every finished case once and no torn line; the error names the file."""
        fd = self._handle.fileno()
        start = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[self._handle.write(view) :]
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass  # left torn, the line is cut off when the run is reopened
            self.close()
            if exc.filename is None:
                exc.filename = str(self.cases_path)
            raise

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
