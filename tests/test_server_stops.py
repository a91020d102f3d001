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
