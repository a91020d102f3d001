"""One writer per run folder: a second invocation of a running config is refused in one line naming the process
that runs it, and a lock left by a killed process is taken over."""

import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from experiments.config_loader import load_config
from experiments.run_lock import LOCK_FILE, RunBusy, hold, holder
from experiments.run_store import RunStore
from tests.run_faults import (
    ROOT,
    assert_each_case_once,
    only_line,
    scripted_lms,
    seed_config,
    start_child,
    wait_for_cases,
)
from tests.test_cli_errors import run


def _store(config_path) -> RunStore:
    config = load_config(config_path)
    return RunStore(RunStore.new_id(config.name, config.digest()))


def test_a_second_invocation_of_a_running_config_is_refused(isolated, monkeypatch):
    config_path = seed_config(isolated)
    store = _store(config_path)
    child = start_child(config_path, delay=0.5)
    try:
        wait_for_cases(child, store.cases_path, 1)
        scripted_lms(monkeypatch)
        line = only_line(run(config_path))
        assert child.poll() is None, "the first invocation ended before the second was refused"
        assert line.startswith(f"{store.dir}: in use by pid {child.pid} on {socket.gethostname()}, since "), line
        assert "wait for that one to end, or stop it" in line
        _, stderr = child.communicate(timeout=600)
    finally:
        child.kill()
    assert child.returncode == 0, stderr
    assert_each_case_once(store.cases_path)

    from experiments.tracking import find_runs

    runs = find_runs(store.run_id)
    assert [r.info.status for r in runs] == ["FINISHED"]  # the refused invocation opened no MLflow run


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from experiments.run_lock import hold
    with hold(Path(sys.argv[1])):
        print("held", flush=True)
        time.sleep(600)
""")


def test_a_lock_left_by_a_killed_process_is_taken_over(isolated, monkeypatch):
    config_path = seed_config(isolated)
    store = _store(config_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store.dir)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunBusy, match=f"in use by pid {holder.pid} on "):
            with hold(store.dir):
                pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
    finally:
        holder.kill()
    assert f'"pid": {holder.pid}' in (store.dir / LOCK_FILE).read_text()  # its record is still there

    scripted_lms(monkeypatch)
    result = run(config_path)
    assert result.exit_code == 0, result.output
    assert_each_case_once(store.cases_path)


def test_one_process_may_lock_a_folder_inside_its_own_hold(tmp_path):
    """A bench holds its folder while each stage holds its own, and a reproduction's run may lock again."""
    with hold(tmp_path / "run"):
        with hold(tmp_path / "run"):
            pass
        with hold(tmp_path / "run" / "stage"):
            pass
        assert (tmp_path / "run" / LOCK_FILE).exists()


def test_a_refused_start_leaves_no_folder_and_a_started_run_keeps_its_own(tmp_path):
    with pytest.raises(ValueError):
        with hold(tmp_path / "refused"):
            (tmp_path / "refused" / "config.json").write_text("{}")
            raise ValueError("refused before its first case")
    assert not (tmp_path / "refused").exists()

    with pytest.raises(ValueError):
        with hold(tmp_path / "started"):
            (tmp_path / "started" / "cases.jsonl").write_text('{"id": "a"}\n')
            raise ValueError("stopped after a case")
    assert (tmp_path / "started" / "cases.jsonl").exists()


def test_a_bench_stage_holds_its_folder_while_it_works(tmp_path, monkeypatch):
    import contextlib

    import mlflow

    from experiments.bench.stages import StageRunner

    monkeypatch.setattr(mlflow, "log_metrics", lambda *a, **k: None)
    monkeypatch.setattr("experiments.tracking.nested_run", lambda *a, **k: contextlib.nullcontext())
    seen = {}

    def work(store):
        seen["holder"] = holder(store.dir)
        probe = subprocess.run(
            [sys.executable, "-c", HOLDER.replace("time.sleep(600)", "pass"), str(store.dir)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        seen["probe"] = probe.stderr.strip().splitlines()[-1]
        return {"items": 0}

    StageRunner(RunStore("bench-x", root=tmp_path), {}, "bench-x").run("generate.t.p", "inputs", work)
    assert seen["holder"]["pid"] == os.getpid()
    assert seen["probe"].startswith(f"experiments.run_lock.RunBusy: {tmp_path / 'bench-x' / 'generate.t.p'}: in use")


def test_a_lock_file_removed_under_a_waiting_process_is_not_taken(tmp_path):
    """A failed start removes its folder while it holds the lock; a process that had opened that file before
    must lock the new one, not the removed one (two holders)."""
    from experiments.run_lock import _on_acquired, _Replaced

    folder = tmp_path / "run"
    folder.mkdir()
    path = folder / LOCK_FILE
    path.write_text("")
    fd = os.open(path, os.O_RDWR)
    try:
        path.unlink()
        path.write_text("")  # the next start's file
        with pytest.raises(_Replaced):
            _on_acquired(path)(fd)
    finally:
        os.close(fd)
    with hold(folder):
        assert holder(folder)["pid"] == os.getpid()


@pytest.mark.parametrize("command", ["rejudge", "accept", "report"])
def test_rejudge_accept_and_report_are_refused_while_another_process_writes_the_run(isolated, command):
    from tests.test_cli_errors import invoke

    folder = isolated / "runs" / "judged"
    folder.mkdir(parents=True)
    (folder / "cases.jsonl").write_text('{"id": "a", "status": "accepted"}\n')
    holder_process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder_process.stdout.readline().strip() == "held"
        line = only_line(invoke(command, "judged", "--log-level", "WARNING"))
    finally:
        holder_process.kill()
        holder_process.wait(timeout=60)
    assert line.startswith(f"{folder}: in use by pid {holder_process.pid} on "), line
    assert (folder / "cases.jsonl").read_text() == '{"id": "a", "status": "accepted"}\n'


def _held_by_another_process(folder):
    """A real second process holding `folder`'s lock (the Popen; kill it when done)."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def test_an_export_into_a_run_folder_and_an_unpack_over_it_wait_for_its_writer(isolated):
    from experiments.run_bundle import pack
    from tests.test_cli_errors import invoke
    from tests.test_export import _config, _swap, _write_run

    folder = _write_run(isolated / "runs", "swap-run", _config("answer_swap"), [_swap(1, "accepted")])
    pack("swap-run", isolated / "swap-run.tar.gz")
    (folder / "cases.jsonl").write_text("")  # behind the bundle: an unpack would restore it
    out = folder / "export"
    holding = _held_by_another_process(folder)
    try:
        exported = only_line(invoke("export", "swap-run", "--out", str(out)))
        unpacked = only_line(invoke("unpack", str(isolated / "swap-run.tar.gz")))
    finally:
        holding.kill()
        holding.wait(timeout=60)
    for line in (exported, unpacked):
        assert line.startswith(f"{folder}: in use by pid {holding.pid} on "), line
    assert not out.exists() and (folder / "cases.jsonl").read_text() == ""

    assert invoke("unpack", str(isolated / "swap-run.tar.gz")).exit_code == 0
    assert len(RunStore("swap-run").records()) == 1
    assert invoke("export", "swap-run", "--out", str(out)).exit_code == 0
    assert (out / "README.md").exists()


class _Preparing:
    """A task whose prepare() writes into the run folder, as an optimisation's compiled programs do."""

    def __init__(self, lms, options):
        pass

    def prepare(self, examples, run_dir):
        (run_dir / "prepared").write_text(str(os.getpid()))


def _no_lms(run):
    return {}


def _worker_spec(folder, driver=None):
    from types import SimpleNamespace

    from experiments.executors.worker import WorkerSpec

    run = SimpleNamespace(
        task=SimpleNamespace(cls=_Preparing), options=None, config=SimpleNamespace(validation=SimpleNamespace())
    )
    run.config.validation.acceptance = "none"
    spec = WorkerSpec(run, None, [], str(folder), _no_lms)
    return spec if driver is None else WorkerSpec(run, None, [], str(folder), _no_lms, driver)


ACTOR = textwrap.dedent("""
    import pickle, sys
    spec = pickle.loads(open(sys.argv[1], "rb").read())
    spec.build()
    print("built")
""")


def _actor(spec, tmp_path) -> subprocess.CompletedProcess:
    """`spec` built in a process of its own, as a Ray actor builds it."""
    import pickle

    path = tmp_path / "spec.pickle"
    path.write_bytes(pickle.dumps(spec))
    return subprocess.run([sys.executable, "-c", ACTOR, str(path)], cwd=ROOT, capture_output=True, text=True)


def test_a_ray_actor_writes_into_the_run_folder_only_for_the_driver_that_holds_it(tmp_path):
    folder = tmp_path / "run"
    with hold(folder):  # this process is the driver
        built = _actor(_worker_spec(folder), tmp_path)
        assert built.returncode == 0, built.stderr
        assert int((folder / "prepared").read_text()) not in (os.getpid(), 0)  # the actor's write
    (folder / "prepared").unlink()

    # The driver has ended (its lock is gone): its actor writes nothing.
    left = _actor(_worker_spec(folder), tmp_path)
    assert left.returncode != 0
    assert left.stderr.strip().splitlines()[-1] == (
        f"experiments.run_lock.RunBusy: {folder}: the run's process this worker serves (pid {os.getpid()} on "
        f"{socket.gethostname()}) no longer holds it; this worker writes nothing there: run the same command "
        "again (finished cases are saved)"
    )

    # Another invocation took the folder over: the old driver's actor writes nothing beside it.
    holding = _held_by_another_process(folder)
    try:
        taken = _actor(_worker_spec(folder), tmp_path)
        served = _actor(_worker_spec(folder, {"pid": holding.pid, "host": socket.gethostname()}), tmp_path)
    finally:
        holding.kill()
        holding.wait(timeout=60)
    assert taken.returncode != 0
    assert f"{folder}: in use by pid {holding.pid} on " in taken.stderr
    assert f", not by the run's process this worker serves (pid {os.getpid()} on " in taken.stderr
    assert served.returncode == 0, served.stderr
    assert (folder / "prepared").exists()


def test_an_actor_on_a_machine_without_the_run_folder_checks_nothing(tmp_path):
    from experiments.run_lock import check_held_by

    check_held_by(tmp_path / "elsewhere", {"pid": 1, "host": "another-host"})
