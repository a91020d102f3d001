"""A real team tracking server for tests: Debian's PostgreSQL in a temporary directory and `mlflow server`
on it, each on 127.0.0.1 at a free port, torn down however the test ends.

The server binaries come from scripts/install.sh: Debian's package keeps them in
/usr/lib/postgresql/<version>/bin, off PATH. PostgreSQL refuses to run as root, so as root the
server runs as the `postgres` user that package creates.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.browser import free_port

DEBIAN_ROOT = Path("/usr/lib/postgresql")
SERVER_BINARIES = ("initdb", "pg_ctl", "postgres")
SUPERUSER = "reeval"  # the cluster's superuser, trusted on 127.0.0.1 and the private socket only
# mlflow server on a machine without internet: litellm (imported for MLflow's job runner) deadlocks
# fetching its price list; reeval needs no server-side jobs, and the server starts quicker without.
SERVER_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "1",
}


def postgres_bindir() -> Path | None:
    """The newest Debian PostgreSQL's bin directory, else wherever PATH has pg_ctl (other systems)."""

    def version(folder: Path) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", folder.parent.name))

    found = [d for d in DEBIAN_ROOT.glob("*/bin") if all((d / b).is_file() for b in SERVER_BINARIES)]
    if found:
        return max(found, key=version)
    pg_ctl = shutil.which("pg_ctl")
    folder = Path(pg_ctl).resolve().parent if pg_ctl else None
    return folder if folder and all((folder / b).is_file() for b in SERVER_BINARIES) else None


def require_postgres() -> tuple[Path, pwd.struct_passwd | None]:
    """The server binaries and the user to run them as (None: this user). Skips with the reason when
    something is missing; under CI=true that is a failure, so CI cannot pass without running it."""
    reason = account = None
    bindir = postgres_bindir()
    try:
        import psycopg  # noqa: F401 - mlflow server's driver for postgresql:// (SQLAlchemy 2.1's default)
    except ImportError:
        reason = "the psycopg driver is not installed (pip install -e '.[dev]')"
    if reason is None and bindir is None:
        reason = (
            f"no PostgreSQL server ({', '.join(SERVER_BINARIES)}) in {DEBIAN_ROOT}/*/bin or on PATH: "
            "scripts/install.sh installs Debian's postgresql"
        )
    if reason is None and os.geteuid() == 0:
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            reason = "running as root and there is no 'postgres' user to run PostgreSQL as"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL tracking test cannot run under CI: {reason}")
        pytest.skip(reason)
    return bindir, account


def _as(account: pwd.struct_passwd | None) -> dict:
    if account is None:
        return {}
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


@contextmanager
def postgres(bindir: Path, account: pwd.struct_passwd | None, database: str = "mlflow"):
    """A throwaway cluster listening on 127.0.0.1 only (socket in its own directory); yields the
    database URI. Not under pytest's tmp_path: the postgres user cannot enter root's."""
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="reeval-postgres-"))
    data, log = root / "data", root / "postgres.log"
    if account is not None:
        os.chown(root, account.pw_uid, account.pw_gid)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(root)}

    def run(*args: str | Path) -> None:
        done = subprocess.run(
            [str(a) for a in args], cwd=root, env=env, capture_output=True, text=True, timeout=60, **_as(account)
        )
        if done.returncode:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{Path(args[0]).name} failed ({done.returncode}): {done.stderr[-2000:]}{tail}")

    try:
        run(bindir / "initdb", "-D", data, "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
        port = free_port()
        # durability off: the cluster lives for one test
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off -c synchronous_commit=off "
            "-c full_page_writes=off"
        )
        run(bindir / "pg_ctl", "-D", data, "-l", log, "-o", options, "-w", "-t", "30", "start")
        with psycopg.connect(
            f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres", autocommit=True, connect_timeout=10
        ) as connection:
            connection.execute(f'CREATE DATABASE "{database}"')
        yield f"postgresql://{SUPERUSER}@127.0.0.1:{port}/{database}"
    finally:
        pid_file = data / "postmaster.pid"
        if pid_file.exists():
            subprocess.run(
                [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "-t", "20", "stop"],
                cwd=root,
                env=env,
                capture_output=True,
                timeout=40,
                **_as(account),
            )
        if pid_file.exists():  # pg_ctl could not stop it: end the postmaster this test started
            try:
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
            except (ProcessLookupError, ValueError, IndexError):
                pass
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def mlflow_server(backend_uri: str, artifacts: Path, timeout: float = 180.0, port: int | None = None):
    """`mlflow server` on 127.0.0.1:`port` (default: a free one), serving artifacts from `artifacts`; yields its
    URL once /health answers (within `timeout` seconds, else fails with the end of its log). The bound is wide:
    its 69 schema migrations and two imports of MLflow took over 90 s on 2 cores shared with a dozen jobs.
    Leaving the block kills it (SIGKILL), as a crash or an OOM kill would."""
    import requests

    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = artifacts.parent / "mlflow-server.log"
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"} | SERVER_ENV
    with open(log_path, "wb") as log:
        # its own process group: the uvicorn worker it spawns is ended with it
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mlflow",
                "server",
                "--backend-store-uri",
                backend_uri,
                "--artifacts-destination",
                str(artifacts),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"mlflow server exited ({server.returncode}):\n{log_path.read_text()[-3000:]}")
            try:
                if requests.get(f"{url}/health", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"mlflow server not healthy after {timeout:.0f} s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.25)
        yield url
    finally:
        _end_group(server)


def _end_group(process: subprocess.Popen) -> None:
    """SIGKILL to the server's group (it and its uvicorn worker): the database is thrown away next."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    process.wait(30)
