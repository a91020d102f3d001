"""`reeval reproduce`: a greedy run reproduces exactly; a changed data file is refused by name."""

import gzip
import json

import pytest
import yaml

from experiments import runner
from experiments.config_loader import load_config
from experiments.reproduce import InputChanged, reproduce
from tests.fakes import scripted_pivot


@pytest.fixture
def small_nq(isolated):
    rows = [json.loads(line) for line in gzip.open("data/nq.jsonl.gz", "rt").read().splitlines()[:8]]
    path = isolated / "nq_small.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def scripted(monkeypatch):
    def build_lms(run):
        examples = runner.load_data(run.config).examples
        opened = {e.id: e.answers[0] for e in examples}
        return {"pivot": scripted_pivot(examples, {}, opened)}

    monkeypatch.setattr(runner, "build_lms", build_lms)


def make_run(isolated, data_path):
    config_path = isolated / "repro.yaml"
    config_path.write_text(
        yaml.safe_dump(
            {
                "name": "repro",
                "task": "seed_selection",
                "data": {"source": str(data_path)},
                "models": {"pivot": {"name": "qwen2.5-0.5b"}},
            }
        )
    )
    return runner.run_experiment(load_config(config_path), progress=False)


def test_greedy_run_reproduces_exactly(isolated, small_nq, scripted):
    first = make_run(isolated, small_nq)
    outcome = reproduce(first.run_id, progress=False)
    assert outcome.matches, outcome.record_mismatches + outcome.metric_mismatches
    assert outcome.records_compared == len(first.records) > 0
    assert outcome.new_run_id != first.run_id


def test_changed_data_file_is_refused_by_name(isolated, small_nq, scripted):
    first = make_run(isolated, small_nq)
    lines = small_nq.read_text().splitlines()
    row = json.loads(lines[0])
    row["question"] += " (edited)"
    small_nq.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    with pytest.raises(InputChanged, match="nq_small.jsonl"):
        reproduce(first.run_id, progress=False)
    # an edit that also moves the answer offsets (the row no longer parses) is still a changed input
    row["context"] = "An inserted sentence. " + row["context"]
    small_nq.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    with pytest.raises(InputChanged, match="data changed: .*nq_small.jsonl"):
        reproduce(first.run_id, progress=False)


def test_a_different_answer_is_reported(isolated, small_nq, scripted, monkeypatch):
    first = make_run(isolated, small_nq)

    def changed_pivot(run):
        examples = runner.load_data(run.config).examples
        return {"pivot": scripted_pivot(examples, {}, {e.id: "something else" for e in examples})}

    monkeypatch.setattr(runner, "build_lms", changed_pivot)
    outcome = reproduce(first.run_id, progress=False)
    assert not outcome.matches
    assert any("open_answer" in line for line in outcome.record_mismatches)
    assert any(line.startswith("metric open_book_accuracy") for line in outcome.metric_mismatches)


def test_sampled_reruns_are_compared_within_the_recorded_intervals():
    from experiments.reproduce import compare_metrics

    recorded = {"acceptance_rate": 0.5, "cases_accepted": 25.0, "f1_mean_tokens": 7.5, "wall_seconds": 10.0}
    # 50 cases: the Wilson interval of 25/50 is about 0.37–0.63
    close = {"acceptance_rate": 0.58, "cases_accepted": 29.0, "f1_mean_tokens": 99.0, "wall_seconds": 99.0}
    assert compare_metrics(recorded, close, sampled=True, n=50) == []
    far = {**close, "acceptance_rate": 0.7, "cases_accepted": 14.0}
    problems = compare_metrics(recorded, far, sampled=True, n=50)
    assert [p.split(":")[0] for p in problems] == ["metric acceptance_rate", "metric cases_accepted"]
    assert "95% interval" in problems[0]
    # greedy: any difference counts, the unbounded mean included; timings never
    assert compare_metrics(recorded, close, sampled=False, n=50) == [
        "metric acceptance_rate: recorded 0.5, rerun 0.58",
        "metric cases_accepted: recorded 25, rerun 29",
        "metric f1_mean_tokens: recorded 7.5, rerun 99",
    ]


def test_another_llama_build_is_named_before_a_rerun(isolated, small_nq, scripted, monkeypatch, caplog):
    """A native llama.cpp build for another CPU can pick other greedy tokens: reproduce says so up front."""
    import logging

    import mlflow

    from experiments.lm import engine
    from experiments.lm.roster import ROSTER
    from experiments.reproduce import check_inputs

    first = make_run(isolated, small_nq)
    run = mlflow.get_run(first.mlflow_run_id)
    config = mlflow.artifacts.load_dict(f"runs:/{first.mlflow_run_id}/config.json")
    models = {
        "pivot": {
            "kind": "local",
            "name": "qwen2.5-0.5b",
            "file_sha256": ROSTER["qwen2.5-0.5b"].sha256,
            "llama_cpp_features": "SSE3 AVX2 AVX512 AVX512_VNNI",
        }
    }
    monkeypatch.setattr(engine, "build_features", lambda: "SSE3 AVX2")
    with caplog.at_level(logging.WARNING, logger="experiments.reproduce"):
        check_inputs(run, config, models)
    assert "used SSE3 AVX2 AVX512 AVX512_VNNI, this one uses SSE3 AVX2" in caplog.text
    caplog.clear()
    models["pivot"]["llama_cpp_features"] = "SSE3 AVX2"
    with caplog.at_level(logging.WARNING, logger="experiments.reproduce"):
        check_inputs(run, config, models)
    assert "llama.cpp build" not in caplog.text


def test_a_pivot_comparisons_wall_time_and_cache_answers_are_not_compared():
    """A reproduction runs with the LM cache off: its pivot calls are all real, the recorded run's may
    have come from the cache; the tokens they took are the same either way."""
    from experiments.reproduce import compare, compare_metrics

    recorded = {"id": "q1:p", "pivot_tokens": 900, "pivot_seconds": 0.2, "pivot_cached_calls": 3, "status": "accepted"}
    fresh = {**recorded, "pivot_seconds": 14.0, "pivot_cached_calls": 0}
    assert compare([recorded], [fresh], sampled=False) == ([], 1)
    assert compare([recorded], [{**fresh, "pivot_tokens": 0}], sampled=False)[0] == [
        "record q1:p: differs in pivot_tokens"
    ]
    metrics = {"pivot.p.cached_calls": 3.0, "pivot.p.tokens": 900.0}
    assert compare_metrics(metrics, {**metrics, "pivot.p.cached_calls": 0.0}, sampled=False, n=1) == []
