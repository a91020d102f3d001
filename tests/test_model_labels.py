"""A model entry's label: what case ids, records, tables and metric names call it.

Entries of one name that differ in endpoint (anywhere in the config), or targets and pivots of one name
that differ in decoding, are labelled by what differs; a label the config gives is kept; a config
without such entries keeps the ids it had. End to end, two fake OpenAI-compatible servers under one
model name, one answering right and one wrong, are two targets with two accuracies.
"""

import json

import mlflow
import pytest
import yaml

from experiments import runner
from experiments.config import ExperimentConfig, LMConfig, ModelsConfig
from experiments.config_loader import load_config
from experiments.lm.registry import ResolvedLM
from experiments.run_store import RunStore
from experiments.tasks.compare_pivots import CompareOptions, ComparePivotsTask
from experiments.tracking import find_runs
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.timeout(300)  # a hang guard, far above what the tests take

QUESTIONS = ["What is the capital of France?", "Which city is the capital of France?", "Name the French capital."]


def models(**roles) -> ModelsConfig:
    return ModelsConfig.model_validate(roles)


def test_one_name_on_two_servers_is_two_labels_and_validate_says_why():
    m = models(
        targets=[
            {"name": "openai/m", "api_base": "http://gpu-a:8000/v1"},
            {"name": "openai/m", "api_base": "http://gpu-b:8000/v1"},
            {"name": "qwen2.5-0.5b"},
        ]
    )
    assert [t.label for t in m.targets] == ["openai/m@gpu-a:8000", "openai/m@gpu-b:8000", "qwen2.5-0.5b"]
    assert len(m.label_notes) == 2 and "models.targets.1: labelled openai/m@gpu-b:8000" in m.label_notes[1]
    assert "differs in api_base" in m.label_notes[1]
    # Same host and port, another path: the path tells them apart.
    m = models(
        targets=[
            {"name": "openai/m", "api_base": "http://box:8000/a/v1"},
            {"name": "openai/m", "api_base": "http://box:8000/b/v1"},
        ]
    )
    assert [t.label for t in m.targets] == ["openai/m@box:8000/a/v1", "openai/m@box:8000/b/v1"]


def test_targets_of_one_name_with_other_decoding_are_labelled_by_it_but_roles_are_not():
    m = models(targets=[{"name": "qwen2.5-0.5b"}, {"name": "qwen2.5-0.5b", "temperature": 0.7}])
    assert [t.label for t in m.targets] == ["qwen2.5-0.5b@temperature=0.0", "qwen2.5-0.5b@temperature=0.7"]
    # A judge's decoding differs from its pivot's as a matter of course: the role tells them apart.
    m = models(pivot={"name": "qwen2.5-1.5b", "max_tokens": 300}, judge={"name": "qwen2.5-1.5b", "max_tokens": 64})
    assert m.pivot.label == m.judge.label == "qwen2.5-1.5b" and m.label_notes == []
    # A pivot and a judge of one name on two servers are two models.
    m = models(
        pivot={"name": "openai/m", "api_base": "http://gpu-a:8000/v1"},
        judge={"name": "openai/m", "api_base": "http://gpu-b:8000/v1"},
    )
    assert (m.pivot.label, m.judge.label) == ("openai/m@gpu-a:8000", "openai/m@gpu-b:8000")


def test_a_given_label_is_kept_and_entries_no_label_can_tell_apart_are_refused():
    m = models(
        pivots=[
            {"name": "openai/m", "api_base": "http://gpu-a:8000/v1", "label": "q4"},
            {"name": "openai/m", "api_base": "http://gpu-b:8000/v1"},
        ]
    )
    assert [p.label for p in m.pivots] == ["q4", "openai/m@gpu-b:8000"]
    with pytest.raises(ValueError, match="listed twice with the same settings"):
        models(targets=[{"name": "qwen2.5-0.5b"}, {"name": "qwen2.5-0.5b"}])
    with pytest.raises(ValueError, match="two entries labelled same"):
        models(targets=[{"name": "qwen2.5-0.5b", "label": "same"}, {"name": "smollm2-135m", "label": "same"}])


def test_a_label_equal_to_the_name_leaves_the_stored_config_and_the_run_id_as_they_were():
    raw = {
        "name": "labels",
        "task": "evaluate",
        "data": {"source": "nq"},
        "models": {"targets": [{"name": "qwen2.5-0.5b"}]},
    }
    plain = ExperimentConfig.model_validate(raw)
    assert plain.models.targets[0].label == "qwen2.5-0.5b"
    assert "label" not in plain.model_dump(mode="json")["models"]["targets"][0]
    named = ExperimentConfig.model_validate(
        {**raw, "models": {"targets": [{"name": "qwen2.5-0.5b", "label": "qwen2.5-0.5b"}]}}
    )
    assert named.digest() == plain.digest()
    # A derived label is stored, so a resumed run (and a Ray worker) reads the labels the run was made with.
    two = {"targets": [{"name": "openai/m", "api_base": f"http://gpu-{x}:8000/v1"} for x in "ab"]}
    clashing = ExperimentConfig.model_validate({**raw, "models": two})
    again = ExperimentConfig.model_validate(clashing.model_dump(mode="json"))
    assert [t.label for t in again.models.targets] == ["openai/m@gpu-a:8000", "openai/m@gpu-b:8000"]
    assert again.digest() == clashing.digest() != plain.digest()
    # A config built from some of the entries (a bench stage's) calls them as the whole config did.
    stage = ModelsConfig(pivot=clashing.models.targets[1])
    assert stage.pivot.label == "openai/m@gpu-b:8000" and stage.label_notes == []


class Refusing:
    """A pivot LM whose every call fails: each pivot's case ends as its own error record."""

    model = "openai/m"

    def __call__(self, *args, **kwargs):
        raise RuntimeError("no answer")


def test_compare_pivots_keeps_two_pivots_of_one_name_apart():
    import dspy

    pivots = [
        ResolvedLM("pivot", LMConfig(name="openai/m", api_base=f"http://gpu-{x}:8000/v1", label=f"m-{x}"), lm, None)
        for x, lm in (("a", Refusing()), ("b", Refusing()))
    ]
    judge = ResolvedLM("judge", LMConfig(name="qwen2.5-1.5b"), Refusing(), None)
    task = ComparePivotsTask({"pivots": pivots, "judge": judge, "targets": []}, CompareOptions(generator="answer_swap"))
    example = dspy.Example(id="q0", question="q?", context="c.", answers=["a"]).with_inputs("question", "context")
    records = task.process(example)
    assert [(r["id"], r["pivot"]) for r in records] == [("q0:m-a", "m-a"), ("q0:m-b", "m-b")]
    metrics = task.summarize(records)
    assert metrics["pivot.m-a.errors"] == metrics["pivot.m-b.errors"] == 1


def reply(answer: str):
    return lambda prompt: json.dumps({"answer": answer})


def test_two_servers_under_one_model_name_are_two_targets(provider_env):
    data = provider_env / "qa.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": q, "context": "Paris is France's capital.", "answers": ["Paris"]})
            + "\n"
            for i, q in enumerate(QUESTIONS)
        )
    )
    with FakeOpenAI(reply=reply("Paris")) as right, FakeOpenAI(reply=reply("London")) as wrong:
        path = provider_env / "two_servers.yaml"
        targets = [{"name": "openai/fake-model", "api_base": server.api_base} for server in (right, wrong)]
        path.write_text(
            yaml.safe_dump(
                {
                    "name": "two-servers",
                    "task": "evaluate",
                    "data": {"source": str(data)},
                    "models": {"targets": targets},
                    "options": {"settings": ["open_book"], "decodings": ["greedy"]},
                }
            )
        )
        config = load_config(path)
        result = runner.run_experiment(config, progress=False)
        assert len(right.seen) == len(wrong.seen) == len(QUESTIONS)

    first, second = (f"openai/fake-model@127.0.0.1:{server.port}" for server in (right, wrong))
    records = RunStore(result.run_id).records()
    assert len({r["id"] for r in records}) == len(records) == 2 * len(QUESTIONS)
    assert {r["target"]: r["prediction"] for r in records} == {first: "Paris", second: "London"}

    header, rows = result.task.table_rows(records)
    accuracy = {row[header.index("target")]: row[header.index("accuracy [95% CI]")][:4] for row in rows}
    assert accuracy == {first: "1.00", second: "0.00"}

    names = {label: f"acc.{label.replace('@', '_')}.open_book.greedy.external" for label in (first, second)}
    logged = mlflow.get_run(result.mlflow_run_id).data.metrics
    assert (logged[names[first]], logged[names[second]]) == (1.0, 0.0)
    for label in (first, second):  # what each target spent is its own
        assert logged[f"lm.target/{label.replace('@', '_')}.calls"] == len(QUESTIONS)
    nested = {r.info.run_name for r in mlflow.search_runs(search_all_experiments=True, output_format="list")}
    assert {f"target/{first}", f"target/{second}"} <= nested
    assert find_runs(result.run_id)[0].info.run_id == result.mlflow_run_id
