"""A tracking server that stops answering during a run fails its next request within seconds, not after the
minutes MLflow's client retries by default (measured: over four minutes after every case was saved)."""

import os
import time

import pytest

from experiments import tracking
from tests.browser import free_port


def _unset(monkeypatch, name: str) -> None:
    monkeypatch.setenv(name, "restored after the test")
    monkeypatch.delenv(name)


def test_a_server_gone_after_it_answered_fails_a_request_within_seconds(monkeypatch):
    import mlflow  # noqa: F401 - imported before the clock starts: a busy machine takes long to import it

    for name in tracking.SERVER_RETRIES:
        _unset(monkeypatch, name)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "45")  # the user's own setting is kept
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setattr(tracking, "check_server", lambda uri: None)  # it answered when the run started
    started = time.monotonic()
    with pytest.raises(Exception, match="Max retries exceeded|Connection refused"):
        tracking.setup_mlflow()
    assert time.monotonic() - started < 60
    assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == "3"
    assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "45"


def test_a_run_whose_server_stopped_answering_ends_in_one_line(isolated, monkeypatch):
    from tests.run_faults import scripted_lms, seed_config
    from tests.test_cli_errors import run

    for name in tracking.SERVER_RETRIES:
        _unset(monkeypatch, name)
    uri = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setattr(tracking, "check_server", lambda uri: None)  # it answered when the run started
    scripted_lms(monkeypatch)
    result = run(seed_config(isolated))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output, result.output
    # Above it, urllib3 says each retry: the wait is bounded, not silent.
    assert result.stderr.strip().splitlines()[-1] == (
        f"MLflow tracking server {uri} (MLFLOW_TRACKING_URI) stopped answering (cannot connect); finished cases "
        "are saved: start it again (docs/guides/tracking.md), then run the same command again"
    )


def test_a_tracking_server_killed_mid_run_loses_no_case_and_is_waited_on_briefly(isolated, monkeypatch):
    """A real `mlflow server` (sqlite behind it) killed with SIGKILL while the run's cases are made: the cases go
    on (they need no server), every one is saved, and the run's closing requests give up within seconds of the
    last case. With the server back, the same command completes the interrupted MLflow run."""
    from contextlib import ExitStack

    from experiments.config_loader import load_config
    from experiments.run_store import RunStore
    from tests.run_faults import CASES, assert_each_case_once, scripted_lms, seed_config, start_child, wait_for_cases
    from tests.test_cli_errors import run
    from tests.tracking_server import mlflow_server

    for name in tracking.SERVER_RETRIES:
        _unset(monkeypatch, name)
    config_path = seed_config(isolated)
    config = load_config(config_path)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    backend, artifacts, port = f"sqlite:///{isolated / 'server.db'}", isolated / "artifacts", free_port()
    with ExitStack() as server:
        uri = server.enter_context(mlflow_server(backend, artifacts, port=port))
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        child = start_child(config_path, delay=0.3)
        try:
            wait_for_cases(child, store.cases_path, 1)
            server.close()  # SIGKILL to the server and its worker
            wait_for_cases(child, store.cases_path, CASES)
            cases_done = time.monotonic()
            _, stderr = child.communicate(timeout=600)
            waited = time.monotonic() - cases_done
        finally:
            child.kill()
    assert child.returncode == 2, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"MLflow tracking server {uri} (MLFLOW_TRACKING_URI) stopped answering (cannot connect); finished cases "
        "are saved: start it again (docs/guides/tracking.md), then run the same command again"
    )
    # Three retries per request, about 10 s each, for the run's closing requests (it was over four minutes).
    assert waited < 120, f"{waited:.0f} s after the last case"
    assert_each_case_once(store.cases_path)

    with mlflow_server(backend, artifacts, port=port):
        scripted_lms(monkeypatch)
        again = run(config_path)
        assert again.exit_code == 0, again.output
        assert "ran 0 rows" in again.stdout

        from experiments.tracking import find_runs

        assert [r.info.status for r in find_runs(store.run_id)] == ["FINISHED"]  # the interrupted one, completed
    assert_each_case_once(store.cases_path)
    print(f"waited {waited:.1f} s after the last case")


@pytest.mark.parametrize("server", ["down", "hangs"])
def test_a_run_on_a_tracking_server_that_is_down_or_hangs_leaves_nothing_behind(isolated, monkeypatch, server):
    """Refused before its first case, a new run leaves no runs/<id>/ folder; a run with finished cases keeps
    each of them once."""
    import socket

    from tests.run_faults import assert_each_case_once, only_line, scripted_lms, seed_config
    from tests.test_cli_errors import run

    config_path = seed_config(isolated)
    scripted_lms(monkeypatch)
    finished = run(config_path, "--fresh")  # on the test's own sqlite store: a run with every case finished
    assert finished.exit_code == 0, finished.output
    (kept,) = [p.parent for p in (isolated / "runs").rglob("cases.jsonl")]
    before = (kept / "cases.jsonl").read_bytes()

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        if server == "hangs":
            listening.listen(1)  # connections queue and are never answered
        uri = f"http://127.0.0.1:{listening.getsockname()[1]}"
        monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
        monkeypatch.setattr(tracking, "SERVER_TIMEOUT", 1.0)
        reason = "cannot connect" if server == "down" else "no answer in 1 s"
        expected = (
            f"MLflow tracking server {uri} (MLFLOW_TRACKING_URI): {reason}. Start it (docs/guides/tracking.md) or "
            "unset MLFLOW_TRACKING_URI to track into mlruns/mlflow.db."
        )
        assert only_line(run(config_path)) == expected
        assert sorted(p.name for p in (isolated / "runs").iterdir()) == [kept.name]  # no new folder
        assert only_line(run(config_path, "--resume", kept.name)) == expected
    assert (kept / "cases.jsonl").read_bytes() == before
    assert_each_case_once(kept / "cases.jsonl")
