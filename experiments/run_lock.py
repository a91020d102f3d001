"""One writer per run folder: an invocation that writes into `runs/<run-id>/` (run, resume, reproduce, rejudge,
accept, unpack, an export into the folder, a bench and each of its stages) holds that folder's lock until it ends.
A Ray actor writes into it only for the driver that holds it (`check_held_by`).

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
from contextlib import ExitStack, contextmanager
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


def _who(folder: Path) -> str:
    owner = holder(folder)
    if owner:
        return f"pid {owner.get('pid')} on {owner.get('host')}, since {owner.get('started')}: {owner.get('command')}"
    return "another process"


def _busy(folder: Path) -> RunBusy:
    return RunBusy(
        f"{folder}: in use by {_who(folder)}; a run folder takes one writer at a time: wait for that one to end, or "
        "stop it (its finished cases are saved) and run the same command again"
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


def run_folders_above(path: Path, root: Path) -> list[Path]:
    """The run folders under `root` that `path` lies in, outermost first (a bench's, then its stage's): each one
    that holds what a start writes first (its lock file or config.json)."""
    try:
        parts = path.resolve().relative_to(root.resolve()).parts
    except ValueError:
        return []
    above = [root.resolve().joinpath(*parts[:i]) for i in range(1, len(parts))]
    return [f for f in above if (f / LOCK_FILE).exists() or (f / "config.json").exists()]


@contextmanager
def hold_all(folders: list[Path]):
    """Each of `folders` locked, outermost first (the order a bench and its stages lock in)."""
    with ExitStack() as stack:
        for folder in folders:
            stack.enter_context(hold(folder))
        yield


def owner() -> dict:
    """This process as a lock's holder names itself (what a Ray actor is told its driver is)."""
    return {"pid": os.getpid(), "host": socket.gethostname()}


def check_held_by(folder: Path, driver: dict) -> None:
    """Refuse to write into `folder` from a process working for `driver` (a Ray actor, on the driver's machine or
    one that shares its file system) unless the driver holds its lock now: an actor left running by a driver
    that died would otherwise write beside the run that took the folder over. A folder not on this machine's
    file system is another machine's copy, none of this run's."""
    if not (folder / LOCK_FILE).exists():
        return
    locked = _locked(folder)
    if locked and {k: holder(folder).get(k) for k in driver} == driver:
        return
    served = f"the run's process this worker serves (pid {driver.get('pid')} on {driver.get('host')})"
    if locked:
        raise RunBusy(f"{folder}: in use by {_who(folder)}, not by {served}; this worker writes nothing there")
    raise RunBusy(
        f"{folder}: {served} no longer holds it; this worker writes nothing there: run the same command again "
        "(finished cases are saved)"
    )


def _locked(folder: Path) -> bool:
    """Whether some process holds `folder`'s lock now: a probe that takes the lock and at once lets it go, as
    its own file descriptor (not filelock's per-path instance, which this process may hold itself)."""
    import fcntl

    fd = os.open(folder / LOCK_FILE, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
