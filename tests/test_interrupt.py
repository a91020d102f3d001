"""Ctrl-C stops a run as SIGTERM does: one line saying the finished cases are saved, exit 128 + the signal, the
MLflow run marked FAILED, and a resume that finishes with every case once."""

import signal

import pytest

from experiments.config_loader import load_config
from experiments.run_store import RunStore
from tests.run_faults import CASES, assert_each_case_once, scripted_lms, seed_config, start_child, wait_for_cases
from tests.test_cli_errors import run


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_run_with_one_line_and_a_resume_finishes_it(isolated, monkeypatch, signum):
    config_path = seed_config(isolated)
    config = load_config(config_path)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    child = start_child(config_path, delay=0.4)
    try:
        wait_for_cases(child, store.cases_path, 2)
        child.send_signal(signum)
        _, stderr = child.communicate(timeout=600)
    finally:
        child.kill()
    assert child.returncode == 128 + signum, stderr
    name = signal.Signals(signum).name
    message = f"reeval: stopped by {name}; finished cases are saved: run the same command again to resume"
    assert message in stderr.splitlines(), stderr  # a line of its own, not the end of the progress bar
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    stopped_at = len(store.records())
    assert 2 <= stopped_at < CASES

    from experiments.tracking import find_runs

    assert [r.info.status for r in find_runs(store.run_id)] == ["FAILED"]

    scripted_lms(monkeypatch)
    result = run(config_path)
    assert result.exit_code == 0, result.output
    assert f"ran {CASES - stopped_at} row" in result.stdout
    assert_each_case_once(store.cases_path)


def test_a_second_signal_while_stopping_is_not_raised_again(capsys):
    """Raised inside MLflow's or SQLAlchemy's cleanup, a second KeyboardInterrupt only printed "Exception ignored"."""
    from experiments import cli

    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        cli._end_runs_on_sigterm()
        with pytest.raises(SystemExit) as stopped:
            signal.raise_signal(signal.SIGINT)
        assert stopped.value.code == 128 + signal.SIGINT
        signal.raise_signal(signal.SIGTERM)  # returns: the stop already under way goes on
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    assert capsys.readouterr().err.splitlines()[-2:] == [
        "reeval: stopped by SIGINT; finished cases are saved: run the same command again to resume",
        "reeval: SIGTERM: already stopping",
    ]


def test_a_second_ctrl_c_while_the_run_stops_prints_no_stray_exception(isolated, monkeypatch):
    """The second SIGINT arrives just after the first one's line, while MLflow and SQLAlchemy close the run
    (where a KeyboardInterrupt only printed "Exception ignored … KeyboardInterrupt")."""
    config_path = seed_config(isolated)
    config = load_config(config_path)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    child = start_child(config_path, delay=0.4)
    message = "reeval: stopped by SIGINT; finished cases are saved: run the same command again to resume"
    try:
        wait_for_cases(child, store.cases_path, 2)
        child.send_signal(signal.SIGINT)
        seen = []
        for line in child.stderr:  # universal newlines: the progress bar's "\r" ends a line too
            seen.append(line.rstrip("\n"))
            if line.rstrip("\n") == message:
                try:
                    child.send_signal(signal.SIGINT)
                except ProcessLookupError:
                    pass  # it had already ended
                break
        rest = child.stderr.read()
        child.wait(timeout=600)
    finally:
        child.kill()
    stderr = "\n".join(seen) + "\n" + rest
    assert message in seen, stderr
    assert child.returncode == 128 + signal.SIGINT, stderr
    assert "Exception ignored" not in stderr and "Traceback" not in stderr, stderr
    assert "KeyboardInterrupt" not in stderr, stderr
    assert "reeval: SIGINT: already stopping" in stderr.splitlines(), stderr  # it came while the run stopped
    stopped_at = len(store.records())

    scripted_lms(monkeypatch)
    result = run(config_path)
    assert result.exit_code == 0, result.output
    assert f"ran {CASES - stopped_at} row" in result.stdout
    assert_each_case_once(store.cases_path)
