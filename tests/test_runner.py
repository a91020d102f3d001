"""End to end through the runner with a scripted pivot: checkpoint, resume, MLflow contents."""

import json

import mlflow
import pytest
import yaml

from experiments import runner
from experiments.config_loader import load_config
from experiments.errors import ErrorBudgetExceeded
from experiments.run_store import RunStore
from tests.fakes import scripted_pivot


def make_config(tmp_path, limit=6, **run):
    data = {
        "name": "unit",
        "task": "seed_selection",
        "data": {"source": "nq", "limit": limit},
        "models": {"pivot": {"name": "qwen2.5-0.5b"}},
        "run": run,
    }
    path = tmp_path / "unit.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_config(path)


@pytest.fixture
def scripted(monkeypatch):
    """Pivot: open-book right on even cases, closed-book right on every third; case 'boom' raises."""
    state = {}

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        state["examples"] = examples
        opened = {e.id: (e.answers[0] if i % 2 == 0 else "wrong") for i, e in enumerate(examples)}
        closed = {e.id: (e.answers[0] if i % 3 == 0 else "nope") for i, e in enumerate(examples)}
        return {"pivot": scripted_pivot(examples, closed, opened)}

    monkeypatch.setattr(runner, "build_lms", build_lms)
    return state


def test_seed_selection_run_checkpoints_and_tracks(isolated, scripted):
    config = make_config(isolated)
    result = runner.run_experiment(config, progress=False)
    assert result.new_cases == 6
    table = {k: v for k, v in result.metrics.items() if k.startswith("table.")}
    # i in 0..5: open right for 0,2,4; closed right for 0,3
    assert table == {
        "table.open_correct__closed_correct": 1,
        "table.open_correct__closed_wrong": 2,
        "table.open_wrong__closed_correct": 1,
        "table.open_wrong__closed_wrong": 2,
    }
    records = RunStore(result.run_id).records()
    assert len(records) == 6 and all(r["status"] == "accepted" for r in records)

    run = mlflow.get_run(result.mlflow_run_id)
    assert run.data.params["models.pivot.name"] == "qwen2.5-0.5b"
    assert run.data.metrics["table.open_correct__closed_wrong"] == 2
    assert run.data.tags["reeval.run_id"] == result.run_id
    assert "data.nq.sha256" in run.data.tags
    assert run.inputs.dataset_inputs[0].dataset.name == "nq"
    artifacts = {a.path for a in mlflow.artifacts.list_artifacts(run_id=result.mlflow_run_id)}
    assert {"cases", "programs", "config.json", "models.json"} <= artifacts
    programs = {a.path for a in mlflow.artifacts.list_artifacts(run_id=result.mlflow_run_id, artifact_path="programs")}
    assert "programs/seed_selection.open_book.prompt.txt" in programs
    prompt = mlflow.artifacts.load_text(f"runs:/{result.mlflow_run_id}/programs/seed_selection.open_book.prompt.txt")
    assert "{context}" in prompt and "evidence passage" in prompt
    children = mlflow.search_runs(
        filter_string=f"tags.mlflow.parentRunId = '{result.mlflow_run_id}'",
        search_all_experiments=True,
        output_format="list",
    )
    assert [c.data.tags["reeval.role"] for c in children] == ["pivot"]

    # same config again: nothing left to do, same run id, one more MLflow invocation
    again = runner.run_experiment(config, progress=False)
    assert again.run_id == result.run_id and again.new_cases == 0
    assert again.metrics["table.open_correct__closed_wrong"] == 2


def test_case_errors_are_recorded_and_budget_stops(isolated, monkeypatch):
    config = make_config(isolated, limit=12, error_budget=0.25, min_cases_before_budget=4)

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        # no scripted answers at all: DummyLM replies "No more responses" which does not parse as JSON
        resolved = scripted_pivot(examples, {}, {})
        resolved.lm.answers = {}
        return {"pivot": resolved}

    monkeypatch.setattr(runner, "build_lms", build_lms)
    with pytest.raises(ErrorBudgetExceeded):
        runner.run_experiment(config, progress=False)
    records = RunStore(RunStore.new_id(config.name, config.digest())).records()
    assert len(records) == 4  # stopped as soon as the budget was exceeded, every case kept
    assert all(r["status"] == "error:parse" for r in records), json.dumps(records)[:300]


def test_a_run_with_nothing_left_to_do_still_answers_to_the_budget(isolated, monkeypatch):
    config = make_config(isolated, limit=4, error_budget=0.25, min_cases_before_budget=4)

    def build_lms(run):
        resolved = scripted_pivot(runner.load_data(run.config).examples, {}, {})
        resolved.lm.answers = {}  # no reply parses: every case is error:parse
        return {"pivot": resolved}

    monkeypatch.setattr(runner, "build_lms", build_lms)
    with pytest.raises(ErrorBudgetExceeded, match="4 of 4 records errored"):
        runner.run_experiment(config, progress=False)
    with pytest.raises(ErrorBudgetExceeded, match="4 of 4 records errored"):  # every case finished: none runs again
        runner.run_experiment(config, progress=False)
