"""A machine that cannot store what a command writes: a full disk, a read-only store, a folder this user may not
write, a tracking server that stopped answering. These are the user's to fix, so they end like a user mistake
(exit 2, one line naming the path and the cause) rather than as an internal error whose cause lies inside
tracebacks.

They arrive wrapped: the checkpoint's own write raises the OSError, but MLflow's sqlite store raises
`MlflowException` over SQLAlchemy over sqlite3, whose messages carry no errno and no path.
"""

from __future__ import annotations

import errno
import os

from experiments.paths import mlruns_dir

_AGAIN = "then run the same command again (finished cases are saved)"
_ELSEWHERE = "or point REEVAL_HOME (runs/, mlruns/) or MLFLOW_TRACKING_URI at a place that is writable"

# errno -> (its name, what it means, what to do)
_FAULTS: dict[int, tuple[str, str, str]] = {
    errno.ENOSPC: ("ENOSPC", "no space left on the device", f"free space on that disk, {_AGAIN}"),
    errno.EDQUOT: ("EDQUOT", "disk quota exceeded", f"free space or raise the quota, {_AGAIN}"),
    errno.EROFS: ("EROFS", "read-only file system", f"make it writable {_ELSEWHERE}, {_AGAIN}"),
    errno.EACCES: ("EACCES", "permission denied", f"give this user access to it {_ELSEWHERE}, {_AGAIN}"),
    errno.EPERM: ("EPERM", "operation not permitted", f"give this user access to it {_ELSEWHERE}, {_AGAIN}"),
}

# sqlite's words for the same faults (MLflow's store), with the errno they stand for.
_SQLITE = {
    "database or disk is full": errno.ENOSPC,
    "attempt to write a readonly database": errno.EROFS,
}


def _chain(exc: BaseException):
    """The exception and those it was raised from or during, as a traceback would show them."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)


def _sqlite_store() -> str:
    uri = os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{mlruns_dir() / 'mlflow.db'}"
    return uri.removeprefix("sqlite:///") if uri.startswith("sqlite:///") else uri


def describe(path: object, code: int) -> str:
    name, meaning, todo = _FAULTS[code]
    return f"{path}: {meaning} ({name}); {todo}"


def storage_fault(exc: BaseException) -> str | None:
    """The one line that says which path could not be written and why, if `exc` comes from such a fault."""
    for link in _chain(exc):
        if isinstance(link, OSError) and link.errno in _FAULTS:
            path = link.filename if link.filename is not None else "a file this command writes"
            return describe(path, link.errno)
    for link in _chain(exc):
        text = str(link).lower()
        for words, code in _SQLITE.items():
            if words in text:
                return describe(f"the MLflow store {_sqlite_store()}", code)
    return _server_gone(exc)


def _server_gone(exc: BaseException) -> str | None:
    """MLflow's client gave up on the tracking server (it raises its own exception over requests')."""
    links = list(_chain(exc))
    asked = any(str(link).startswith("API request to ") for link in links)
    unanswered = any(type(link).__module__.startswith("requests") for link in links)
    if not (asked and unanswered):
        return None
    timed_out = any("timeout" in type(link).__name__.lower() for link in links)
    reason = "no answer in time" if timed_out else "cannot connect"
    return (
        f"MLflow tracking server {os.environ.get('MLFLOW_TRACKING_URI')} (MLFLOW_TRACKING_URI) stopped answering "
        f"({reason}); finished cases are saved: start it again (docs/guides/tracking.md), then run the same "
        "command again"
    )
