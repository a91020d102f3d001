"""A disk that fills, a store that is read-only or not this user's, a checkpoint line that is not UTF-8: each is
a user error (exit 2, one line naming the path and the cause), and every finished case is kept exactly once."""

import errno
import json
import os
import sqlite3
from contextlib import contextmanager

import pytest

from experiments.config_loader import load_config
from experiments.run_store import RunStore
from experiments.storage_faults import storage_fault
from tests.run_faults import CASES, assert_each_case_once, only_line, scripted_lms, seed_config
from tests.test_cli_errors import invoke, run


def _store(config_path) -> RunStore:
    config = load_config(config_path)
    return RunStore(RunStore.new_id(config.name, config.digest()))


def test_a_disk_that_fills_while_cases_are_written(isolated, monkeypatch):
    from experiments import run_store

    config_path = seed_config(isolated)
    store = _store(config_path)
    scripted_lms(monkeypatch)
    synced = []
    real_fsync = os.fsync

    def fsync(fd):
        # The third case's bytes reach the file, then the disk is full: as a delayed allocation fails at fsync.
        synced.append(fd)
        if len(synced) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(run_store.os, "fsync", fsync)
    line = only_line(run(config_path))
    assert line == (
        f"{store.cases_path}: no space left on the device (ENOSPC); free space on that disk, then run the same "
        "command again (finished cases are saved)"
    )
    assert len(store.records()) == 2
    assert store.cases_path.read_bytes().endswith(b"\n")  # the failed case's line was cut back off

    from experiments.tracking import find_runs

    assert [r.info.status for r in find_runs(store.run_id)] == ["FAILED"]

    monkeypatch.setattr(run_store.os, "fsync", real_fsync)
    again = run(config_path)
    assert again.exit_code == 0, again.output
    assert f"ran {CASES - 2} row" in again.stdout
    assert_each_case_once(store.cases_path)


def _nothing_left(isolated) -> None:
    runs = isolated / "runs"
    assert not runs.exists() or not any(runs.iterdir()), sorted(runs.rglob("*"))


def test_a_read_only_mlflow_store_is_refused_and_leaves_no_run_folder(isolated, monkeypatch):
    from experiments import tracking

    lock = isolated / "mlflow.lock"

    @contextmanager
    def read_only(uri):
        # What filelock raises creating the store's lock file on a read-only mount.
        raise OSError(errno.EROFS, "Read-only file system", str(lock))
        yield

    monkeypatch.setattr(tracking, "store_lock", read_only)
    scripted_lms(monkeypatch)
    line = only_line(run(seed_config(isolated)))
    assert line.startswith(f"{lock}: read-only file system (EROFS); make it writable or point REEVAL_HOME")
    _nothing_left(isolated)


def test_a_run_folder_this_user_may_not_write(isolated, monkeypatch):
    config_path = seed_config(isolated)
    target = _store(config_path).dir / "config.json"

    def refuse(self, resolved):
        raise PermissionError(errno.EACCES, "Permission denied", str(target))

    monkeypatch.setattr(RunStore, "write_config", refuse)
    scripted_lms(monkeypatch)
    line = only_line(run(config_path))
    assert line.startswith(f"{target}: permission denied (EACCES); give this user access to it or point ")
    _nothing_left(isolated)


def test_a_full_sqlite_store_is_named_with_its_cause(isolated, monkeypatch):
    """MLflow's store reports a full disk as sqlite does, with no errno and no path, inside its own exception."""
    from mlflow.exceptions import MlflowException

    db = isolated / "full.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{db}")
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA max_page_count = 2")
    connection.execute("CREATE TABLE t (x TEXT)")
    try:
        try:
            connection.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))
        except sqlite3.OperationalError as exc:
            raise MlflowException(f"(sqlite3.OperationalError) {exc}") from exc
    except MlflowException as wrapped:
        fault = storage_fault(wrapped)
    assert fault.startswith(f"the MLflow store {db}: no space left on the device (ENOSPC); free space")
    assert storage_fault(ValueError("database or dusk is full")) is None


def _finished_run(isolated, monkeypatch) -> RunStore:
    config_path = seed_config(isolated)
    scripted_lms(monkeypatch)
    assert run(config_path).exit_code == 0
    return _store(config_path)


def test_undecodable_bytes_in_a_checkpoint_line(isolated, monkeypatch):
    store = _finished_run(isolated, monkeypatch)
    lines = store.cases_path.read_bytes().splitlines(keepends=True)
    at = lines[1].index(b'"question": "') + len(b'"question": "') + 3
    lines[1] = lines[1][:at] + b"\xff" + lines[1][at:]
    store.cases_path.write_bytes(b"".join(lines))
    for command in (("resume", store.run_id), ("show", store.run_id), ("report", store.run_id)):
        line = only_line(invoke(*command, "--log-level", "WARNING"))
        assert line == (
            f"{store.cases_path}:2: not valid UTF-8 (invalid start byte at byte {at + 1} of the line); fix or "
            "delete that line (its case is then redone on resume)"
        ), command

    del lines[1]
    store.cases_path.write_bytes(b"".join(lines))
    again = invoke("resume", store.run_id, "--log-level", "WARNING")
    assert again.exit_code == 0, again.output
    assert "ran 1 row " in again.stdout
    assert_each_case_once(store.cases_path)


def test_a_checkpoint_line_cut_short_is_named_at_its_column(isolated, monkeypatch):
    store = _finished_run(isolated, monkeypatch)
    lines = store.cases_path.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = lines[2][: len(lines[2]) // 2]
    lines[2] = cut.rstrip() + "\n"
    store.cases_path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as error:
        json.loads(lines[2].rstrip("\n"))
    column = error.value.colno
    assert column > 1
    line = only_line(invoke("resume", store.run_id, "--log-level", "WARNING"))
    assert line.startswith(f"{store.cases_path}:3: not valid JSON (")
    assert f", column {column}); fix or delete that line" in line


def test_a_data_row_cut_short_is_named_at_its_column(isolated):
    from tests.test_cli_errors import eval_config, row

    data = isolated / "cases.jsonl"
    cut = row("b")[:-10]
    data.write_text(row("a") + "\n" + cut + "\n")
    with pytest.raises(json.JSONDecodeError) as error:
        json.loads(cut)
    assert error.value.colno > 1
    expected = f"{data}:2: invalid JSON: {error.value.msg} (column {error.value.colno})"
    assert only_line(run(eval_config(isolated, data))) == expected
