"""The re-evaluation harness with scripted targets: paired original/perturbed answers, external files."""

import json

import dspy
import mlflow
import pytest
import yaml

from experiments import runner
from experiments.config import LMConfig
from experiments.config_loader import load_config
from experiments.lm.registry import ResolvedLM
from experiments.run_store import RunStore

CASES = [
    {
        "id": f"s{i}:swap",
        "seed_id": f"s{i}",
        "task": "answer_swap",
        "pivot": "qwen2.5-1.5b",
        "source": "nq",
        "question": f"who built tower {i}",
        "original_context": f"Tower {i} was built by Alice Smith in town {i}.",
        "context": f"Tower {i} was built by Bob Jones in town {i}.",
        "original_answers": ["Alice Smith"],
        "answers": ["Bob Jones"],
        "status": "accepted",
    }
    for i in range(3)
] + [{"id": "s9:swap", "seed_id": "s9", "status": "rejected:proposal_is_gold", "question": "q", "answers": []}]


def target(name, answers_by_text):
    lm = dspy.utils.DummyLM(answers_by_text, adapter=dspy.JSONAdapter())
    return ResolvedLM("target", LMConfig(name=f"dummy/{name}"), lm, None)


@pytest.fixture
def generated_run(isolated):
    store = RunStore("gen-run")
    store.write_config({"name": "gen"})
    for case in CASES:
        store.append(case)
    store.close()
    return "run:gen-run"


def eval_config(tmp_path, source, settings=("closed_book", "open_book", "opinion")):
    path = tmp_path / "eval.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "eval",
                "task": "evaluate",
                "data": {"source": source},
                "models": {"targets": [{"name": "qwen2.5-0.5b"}, {"name": "smollm2-135m"}]},
                "options": {"settings": list(settings), "k_shots": 0},
            }
        )
    )
    return load_config(path)


def test_paired_evaluation_of_generated_cases(generated_run, isolated, monkeypatch):
    # "faithful" follows the context; "stubborn" always says Alice Smith (what it "knows")
    faithful = {
        "Bob Jones in town": {"answer": "Bob Jones"},
        "Alice Smith in town": {"answer": "Alice Smith"},
        "who built": {"answer": "no idea"},
    }
    stubborn = {"who built": {"answer": "Alice Smith"}}
    monkeypatch.setattr(
        runner,
        "build_lms",
        lambda run: {"targets": [target("faithful", faithful), target("stubborn", stubborn)]},
    )
    result = runner.run_experiment(eval_config(isolated, generated_run), progress=False)
    records = RunStore(result.run_id).records()
    # 3 accepted cases × 2 targets × (closed-book original + open-book ×2 + opinion ×2)
    assert len(records) == 3 * 2 * 5
    by = {(r["target"], r["setting"], r["variant"]): r for r in records if r["case_id"] == "s0:swap"}
    assert by[("dummy/faithful", "open_book", "perturbed")]["task_correct"] is True
    assert by[("dummy/stubborn", "open_book", "perturbed")]["task_correct"] is False
    assert by[("dummy/stubborn", "open_book", "original")]["task_correct"] is True
    assert by[("dummy/stubborn", "closed_book", "original")]["context"] == ""
    assert result.metrics["acc.dummy/stubborn.open_book.greedy.perturbed"] == 0.0
    assert result.metrics["acc.dummy/faithful.open_book.greedy.perturbed"] == 1.0
    header, rows = result.task.table_rows(result.records)
    assert "drop [95% CI]" in header and any(r[0] == "dummy/stubborn" and r[5].startswith("+1.00") for r in rows)
    artifacts = {a.path for a in mlflow.artifacts.list_artifacts(run_id=result.mlflow_run_id, artifact_path="report")}
    assert "report/report.html" in artifacts
    html = (RunStore(result.run_id).dir / "report" / "report.html").read_text()
    assert "dummy/stubborn" in html


def test_external_flat_file_needs_no_generation(isolated, monkeypatch):
    path = isolated / "bench.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": f"b{i}",
                    "question": f"capital {i}?",
                    "context": f"The capital number {i} is Paris, a large city indeed.",
                    "answers": ["Paris"],
                }
            )
            for i in range(2)
        )
        + "\n"
    )
    monkeypatch.setattr(
        runner,
        "build_lms",
        lambda run: {"targets": [target("t", {"capital": {"answer": "Paris"}})]},
    )
    result = runner.run_experiment(eval_config(isolated, str(path), settings=("open_book",)), progress=False)
    records = RunStore(result.run_id).records()
    assert len(records) == 2 and {r["variant"] for r in records} == {"external"}
    assert all(r["em"] == 1.0 for r in records)


def test_judge_entailment_fallback_end_to_end(isolated, monkeypatch):
    path = isolated / "bench.jsonl"
    row = {
        "id": "b0",
        "question": "capital?",
        "answers": ["Paris"],
        "context": "The capital of the country is Paris, a large and old city.",
    }
    path.write_text(json.dumps(row) + "\n")
    judge = ResolvedLM(
        "judge",
        LMConfig(name="dummy/judge"),
        dspy.utils.DummyLM([{"verdict": "entailment"}], adapter=dspy.JSONAdapter()),
        None,
    )
    monkeypatch.setattr(
        runner,
        "build_lms",
        lambda run: {
            "targets": [target("t", {"capital": {"answer": "It is Paris"}})],
            "judge": judge,
        },
    )
    config_path = isolated / "nli.yaml"
    config_path.write_text(
        yaml.safe_dump(
            {
                "name": "nli",
                "task": "evaluate",
                "data": {"source": str(path)},
                "models": {"targets": [{"name": "qwen2.5-0.5b"}], "judge": {"name": "qwen2.5-0.5b"}},
                "options": {"settings": ["open_book"], "nli": "judge"},
                "validation": {"calibration_controls": 0},
            }
        )
    )
    result = runner.run_experiment(load_config(config_path), progress=False)
    [record] = RunStore(result.run_id).records()
    assert record["entailment"] is True
    html = (RunStore(result.run_id).dir / "report" / "report.html").read_text()
    assert "judge-lm:dummy/judge" in html


def test_targets_see_no_demonstration_outside_the_few_shot_setting(monkeypatch):
    """A base model shown one demonstration answered its answer to 287 of 290 bench questions."""
    from types import SimpleNamespace

    from experiments import readers as evaluate_task

    demos = [
        dspy.Example(context=f"c{i}", question=f"q{i}", answer=f"a{i}").with_inputs("context", "question")
        for i in range(3)
    ]
    monkeypatch.setattr(evaluate_task, "demo_pool", lambda source, exclude, k, seed: demos[:k])
    base = ResolvedLM("target", LMConfig(name="gemma3-270m"), None, SimpleNamespace(spec=SimpleNamespace(chat=False)))
    examples = [dspy.Example(id="s1", question="q", context="c", answers=["a"])]
    for k_shots in (0, 2):
        reader = evaluate_task.readers_for([base], examples, k_shots=k_shots)["gemma3-270m"]
        shown = {name: len(p.demos) for name, p in reader.named_predictors()}
        assert shown.pop("few_shot") == k_shots
        assert set(shown.values()) == {0}
