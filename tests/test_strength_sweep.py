"""`task: strength_sweep` end to end on the bench's tiny world (tests/bench_fakes.py): every level on the same
seeds, a level no seed can reach counted, success per level with the paired difference against the default,
the report's curve and table, MLflow metrics, and a resumed sweep that makes no new call."""

import json

import mlflow
import pytest
import yaml

from experiments import launch
from experiments.config_loader import load_config
from tests.bench_fakes import write_data


def sweep_config(folder, **options):
    nq, _ = write_data(folder)
    lm = {"temperature": 0.0, "max_tokens": 64, "seed": 0}
    raw = {
        "name": "sweep-test",
        "task": "strength_sweep",
        "data": {"source": nq, "limit": 3, "max_evidence_words": 300},
        "models": {
            "pivot": {"name": "qwen2.5-1.5b", **lm},
            "judge": {"name": "qwen2.5-1.5b", **lm},
            "targets": [{"name": "qwen2.5-0.5b", **lm}],
        },
        "validation": {"calibration_controls": 0, "judge_params": "reasoned"},
        "options": {"generator": "unanswerable", **options},
    }
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_config(path)


def test_a_sweep_runs_every_level_on_the_same_seeds_and_reports_the_curve(world, isolated):
    removal = {"dial": "removal", "levels": ["window", "drop", "rewrite"]}
    result = launch.run_experiment(sweep_config(isolated, **removal), progress=False)
    out = result.task.dir
    table = (out / "sweep.md").read_text()
    assert (out / "sweep.png").read_bytes()[:4] == b"\x89PNG"
    # a window removes each answer sentence with its neighbours: too little is left of a three-sentence
    # passage, so every seed is rejected at that level, and the report counts why
    assert "| window | 3 | 0 |" in table and "`rejected:rest_kept` 3" in table
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    levels = {r["level"] for r in records}
    assert levels == {"drop", "rewrite"}
    perturbed = [r for r in records if r["variant"] == "perturbed"]
    # the fake target follows its evidence: with the answer gone it says "unknown" (no attack success)
    # in the task-instruction setting, where FaithEval counts that as right
    instructed = [r for r in perturbed if r["setting"] == "task_instruction"]
    assert instructed and all(r["task_correct"] for r in instructed)
    assert {r["case_id"] for r in perturbed if r["level"] == "drop"} == {
        r["case_id"] for r in perturbed if r["level"] == "rewrite"
    }
    metrics = result.metrics
    assert metrics["sweep.window.accepted"] == 0 and metrics["sweep.rewrite.accepted"] == 3
    assert metrics["sweep.drop.qwen2.5-0.5b.task_instruction.success"] == 0.0
    assert metrics["sweep.drop.qwen2.5-0.5b.task_instruction.vs_default"] == 0.0
    run = mlflow.get_run(result.mlflow_run_id)
    assert run.data.params["sweep.dial"] == "removal" and run.data.params["sweep.default"] == "drop"
    assert "sweep.rewrite.yield" in run.data.metrics

    again = launch.run_experiment(sweep_config(isolated, **removal), progress=False)
    assert again.new_cases == 0 and again.metrics["sweep.rewrite.accepted"] == 3


def test_the_strength_ladder_is_the_default_sweep(world, isolated):
    result = launch.run_experiment(sweep_config(isolated), progress=False)
    assert {"sweep.0.accepted", "sweep.0.5.accepted", "sweep.1.accepted"} <= set(result.metrics)
    assert "| 1 | qwen2.5-0.5b | task_instruction |" in (result.task.dir / "sweep.md").read_text()


def test_a_dial_swept_directly_and_bad_sweeps_refused(world, isolated):
    result = launch.run_experiment(
        sweep_config(isolated, dial="lures", levels=["remove", "keep"], default="keep"), progress=False
    )
    assert {"sweep.remove.accepted", "sweep.keep.accepted"} <= set(result.metrics)
    with pytest.raises(Exception, match="no option of unanswerable"):
        sweep_config(isolated, dial="nonsense", levels=[1, 2])
    with pytest.raises(Exception, match="not among the levels"):
        sweep_config(isolated, dial="lures", levels=["remove"], default="keep")
    with pytest.raises(Exception, match="levels"):
        sweep_config(isolated, dial="removal", levels=["rewrite", "shred"])


def test_seeds_known_by_a_target_and_of_an_answer_kind(tmp_path, monkeypatch):
    import dspy

    from experiments.bench.scan_archive import write_archive
    from experiments.config import DataConfig
    from experiments.sweep import driver

    seeds = [
        dspy.Example(id="a", question="when did the tower open", answers=["1889"]),
        dspy.Example(id="b", question="who built the tower", answers=["Gustave Eiffel"]),
        dspy.Example(id="c", question="when did the bridge open", answers=["1932"]),
    ]
    path = tmp_path / "scan.jsonl.gz"
    write_archive(
        path,
        {"kind": "knowledge_scan", "key": {}},
        [
            {"id": "a", "closed_answer": "1889"},
            {"id": "b", "closed_answer": "Gustave Eiffel"},
            {"id": "c", "closed_answer": "1930"},
        ],
    )
    monkeypatch.setattr(driver, "archive_path", lambda source, split, target: path)
    data = DataConfig(source="nq")
    assert [e.id for e in driver.chosen_seeds(seeds, data, "qwen2.5-1.5b", [])] == ["a", "b"]
    assert [e.id for e in driver.chosen_seeds(seeds, data, "qwen2.5-1.5b", ["date"])] == ["a"]
    assert [e.id for e in driver.chosen_seeds(seeds, data, None, ["date"])] == ["a", "c"]
    monkeypatch.setattr(driver, "archive_path", lambda source, split, target: tmp_path / "none.jsonl.gz")
    with pytest.raises(Exception, match="no shipped knowledge scan"):
        driver.chosen_seeds(seeds, data, "gemma3-270m", [])
