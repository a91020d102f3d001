"""A team tracking server: `mlflow server` on a real PostgreSQL, shared by machines that each have their own
run store. One machine generates cases, another evaluates them, a third shows, reports and reproduces the
evaluation by run id: everything it needs comes from the server."""

import json
import time

import pytest
import yaml
from typer.testing import CliRunner

from experiments import runner
from experiments.cli import app
from experiments.config import LMConfig
from experiments.lm.registry import ResolvedLM
from experiments.run_store import RunStore
from tests.browser import free_port
from tests.test_tasks_end_to_end import scripted_lm
from tests.tracking_server import mlflow_server, postgres, require_postgres


@pytest.fixture
def team_server(tmp_path, monkeypatch):
    bindir, account = require_postgres()
    with postgres(bindir, account) as database, mlflow_server(database, tmp_path / "artifacts") as url:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", url)
        yield database, tmp_path / "artifacts"


@pytest.fixture
def scripted(monkeypatch):
    """Generation roles and evaluation targets answer from a script (DummyLM); no model is loaded."""

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        if run.config.task == "evaluate":
            lm = scripted_lm(examples, "evaluate")
            return {"targets": [ResolvedLM("target", LMConfig(name="dummy/target"), lm, None)]}
        lm = scripted_lm(examples, run.config.task)
        return {role: ResolvedLM(role, LMConfig(name=f"dummy/{role}"), lm, None) for role in ("pivot", "judge")}

    monkeypatch.setattr(runner, "build_lms", build_lms)


def on_machine(monkeypatch, tmp_path, name: str) -> None:
    """Another machine: its own run store and caches, the same tracking server."""
    monkeypatch.setenv("REEVAL_RUNS_DIR", str(tmp_path / name / "runs"))
    monkeypatch.setenv("REEVAL_CACHE_DIR", str(tmp_path / name / "cache"))


def cli(*args: str) -> str:
    """The command's output with rich's line wrapping undone."""
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, f"reeval {' '.join(args)} exited {result.exit_code}:\n{result.output[-3000:]}"
    return " ".join(result.output.split())


def only_run(tmp_path, machine: str) -> str:
    [run_dir] = (tmp_path / machine / "runs").iterdir()
    return run_dir.name


@pytest.mark.postgres
def test_machines_share_runs_through_a_postgres_backed_server(team_server, scripted, tmp_path, monkeypatch):
    import psycopg

    from experiments.tracking import find_runs

    database, artifacts = team_server
    models = {"pivot": {"name": "qwen2.5-0.5b"}, "judge": {"name": "qwen2.5-0.5b"}}
    swap = tmp_path / "swap.yaml"
    swap.write_text(
        yaml.safe_dump(
            {
                "name": "swap",
                "task": "answer_swap",
                "data": {"source": "nq", "limit": 3},
                "models": models,
                "validation": {"calibration_controls": 0},
            }
        )
    )
    on_machine(monkeypatch, tmp_path, "a")
    cli("run", str(swap))
    generated = only_run(tmp_path, "a")
    accepted = [r for r in RunStore(generated).records() if r["status"] == "accepted"]
    assert accepted

    # b evaluates a's cases by run id: they come from the server
    evaluate = tmp_path / "eval.yaml"
    evaluate.write_text(
        yaml.safe_dump(
            {
                "name": "eval",
                "task": "evaluate",
                "data": {"source": f"run:{generated}"},
                "models": {"targets": [{"name": "qwen2.5-0.5b"}]},
                "options": {"settings": ["open_book"], "k_shots": 0},
            }
        )
    )
    on_machine(monkeypatch, tmp_path, "b")
    cli("run", str(evaluate))
    evaluation = next(r for r in (tmp_path / "b" / "runs").iterdir() if r.name != generated).name
    made_on_a = (tmp_path / "a" / "runs" / generated / "cases.jsonl").read_text()
    assert RunStore(generated).cases_path.read_text() == made_on_a

    # the runs are rows in PostgreSQL, their artifacts files behind the server, nested runs beside their parent
    [parent] = find_runs(evaluation)
    with psycopg.connect(database) as connection:
        rows = connection.execute(
            "SELECT r.status, r.experiment_id FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid "
            "WHERE t.key = 'reeval.run_id' AND t.value = %s",
            (evaluation,),
        ).fetchall()
    assert sorted(rows) == [("FINISHED", int(parent.info.experiment_id))] * 2  # the parent and its target's run
    assert parent.info.artifact_uri.startswith("mlflow-artifacts:/")
    logged = artifacts / parent.info.experiment_id / parent.info.run_id / "artifacts"
    assert json.loads((logged / "cases" / "config.json").read_text())["data"]["source"] == f"run:{generated}"

    # c has neither run: show, report and reproduce by run id
    on_machine(monkeypatch, tmp_path, "c")
    shown = cli("show", evaluation)
    assert f"MLflow run {parent.info.run_id} (FINISHED)" in shown and "acc.dummy/target.open_book" in shown
    # the validity of a's cases, fetched for c
    assert f"validity — {generated}" in shown and f"The judge accepted {len(accepted)} of" in shown
    cli("report", evaluation)
    page = (tmp_path / "c" / "runs" / evaluation / "report" / "report.html").read_text()
    assert evaluation in page and "dummy/target" in page
    assert (logged / "report" / "report.html").exists()  # and logged back to the server
    reproduced = cli("reproduce", evaluation)
    assert f"reproduced exactly: {len(RunStore(evaluation).records())} records" in reproduced


def test_an_unreachable_server_is_named_at_once(tmp_path, monkeypatch):
    import mlflow  # noqa: F401 - imported before the clock starts: a busy machine takes long to import it

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("REEVAL_RUNS_DIR", str(tmp_path / "runs"))
    started = time.monotonic()
    result = CliRunner().invoke(app, ["show", "some-run"])
    output = " ".join(result.output.split())
    assert result.exit_code == 2, output
    assert "MLflow tracking server http://127.0.0.1:" in output and "cannot connect" in output
    assert "unset MLFLOW_TRACKING_URI" in output
    assert time.monotonic() - started < 30  # MLflow's client alone retried for 4 min 24 s


def test_a_tls_answer_is_an_answer_and_silence_is_named(monkeypatch):
    import requests

    from experiments.tracking import TrackingUnavailable, check_server

    def refuse(url, timeout):
        raise requests.exceptions.SSLError("self-signed certificate")  # MLflow's client has its own TLS settings

    monkeypatch.setattr(requests, "get", refuse)
    check_server("https://tls.invalid:5000")

    def silent(url, timeout):
        raise requests.exceptions.ConnectTimeout("timed out")

    monkeypatch.setattr(requests, "get", silent)
    with pytest.raises(TrackingUnavailable, match=r"silent.invalid:5000 \(MLFLOW_TRACKING_URI\): no answer in 10 s"):
        check_server("http://silent.invalid:5000")
