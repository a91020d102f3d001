"""One writer per run folder: an invocation that writes into `runs/<run-id>/` (run, resume, reproduce, rejudge,
accept, a bench and each of its stages) holds that folder's lock until it ends.

Two invocations of one config at once each appended every case, so the checkpoint held every case twice and
both summaries counted them twice. The lock is an OS file lock (`flock`, through filelock): the kernel drops it
when its process dies, however it dies, so a lock left by a killed run is simply taken by the next one. The
holder writes who it is into the lock file; a refused invocation reads it back to name that process.

A start refused before anything but its config was written leaves no folder behind: the folder is removed while
its lock is still held, and an invocation that locked the removed file tries again on the new one.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import cache
from pathlib import Path

LOCK_FILE = ".lock"
# What a start writes before its first case; a folder holding nothing else was made by a start that failed.
START_FILES = frozenset({LOCK_FILE, "config.json", "inputs.json"})


class RunBusy(RuntimeError):
    """Another live process writes into this run folder (the message names it)."""


class _Replaced(Exception):
    """The locked file was removed (by a start that failed) between opening it and locking it."""


def _owner_line() -> bytes:
    owner = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "",
    }
    return (json.dumps(owner) + "\n").encode()


@cache
def _on_acquired(path: Path):
    # One hook object per path: filelock hands a path's one lock instance back only to the same hook.
    def record(fd: int) -> None:
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if not same:
            raise _Replaced(str(path))
        os.write(fd, _owner_line())

    return record


def holder(folder: Path) -> dict:
    """Who holds `folder`'s lock, as it wrote itself down; {} while it has not yet (it writes just after locking)."""
    for _ in range(20):
        try:
            text = (folder / LOCK_FILE).read_text(encoding="utf-8")
            return json.loads(text)
        except (OSError, ValueError):
            time.sleep(0.05)
    return {}


def _busy(folder: Path) -> RunBusy:
    owner = holder(folder)
    if owner:
        who = f"pid {owner.get('pid')} on {owner.get('host')}, since {owner.get('started')}: {owner.get('command')}"
    else:
        who = "another process"
    return RunBusy(
        f"{folder}: in use by {who}; a run folder takes one writer at a time: wait for that one to end, or stop it "
        "(its finished cases are saved) and run the same command again"
    )


def _lock(folder: Path):
    from filelock import FileLock

    # is_singleton with thread_local off: a bench and its stages, or a run inside a reproduction, lock again in
    # one process, which must count up rather than wait on itself.
    return FileLock(
        folder / LOCK_FILE,
        timeout=0,
        is_singleton=True,
        thread_local=False,
        preserve_lock_file=True,
        on_acquired=_on_acquired(folder / LOCK_FILE),
    )


def _acquire(folder: Path):
    from filelock import Timeout

    for _ in range(5):
        folder.mkdir(parents=True, exist_ok=True)
        lock = _lock(folder)
        try:
            lock.acquire()
            return lock
        except Timeout:
            raise _busy(folder) from None
        except _Replaced:
            continue
    raise _busy(folder)


@contextmanager
def hold(folder: Path):
    """`folder` locked for this process until the block ends; RunBusy at once if another process holds it."""
    created = not folder.exists()
    lock = _acquire(folder)
    try:
        yield
    except BaseException:
        if created and lock.lock_counter == 1:
            _remove_if_only_started(folder)
        raise
    finally:
        lock.release()


def _remove_if_only_started(folder: Path) -> None:
    try:
        left = {p.name for p in folder.iterdir()}
    except OSError:
        return
    if left <= START_FILES:
        shutil.rmtree(folder, ignore_errors=True)
