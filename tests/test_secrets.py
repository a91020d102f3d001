"""Provider keys never reach MLflow or the run store.

Every task runs against the fake OpenAI-compatible server (tests/fake_openai.py) with the
provider keys in the environment set to marker values; then every MLflow param, tag, metric
name and dataset input, and every byte of every file under the MLflow store (database and
artifacts) and the run store is searched for the markers. The server sees the key on each
request, so the key really was in play; one server also repeats it in an error message.
"""

from pathlib import Path

import dspy
import mlflow
import pytest
import yaml
from mlflow.utils.autologging_utils import autologging_is_disabled

from experiments import launch, runner
from experiments.config import ConfigError
from experiments.config_loader import load_config
from experiments.run_store import RunStore
from experiments.task_registry import entries
from tests.fake_openai import FakeOpenAI, loopback_only, replies_from
from tests.shipped import nq_head
from tests.test_context_enrich import FakeRetriever
from tests.test_tasks_end_to_end import scripted_lm

pytestmark = pytest.mark.timeout(300)  # a hang guard, far above what the tests take

MARKERS = {
    name: f"sk-reeval-canary-{name.lower().replace('_', '-')}-5e1f0c9a"
    for name in (
        "OPENAI_API_KEY",
        "TOGETHER_API_KEY",
        "ANTHROPIC_API_KEY",
        "HOSTED_VLLM_API_KEY",
        "AZURE_API_KEY",
        "GEMINI_API_KEY",
        "HF_TOKEN",
    )
}
SENT = {f"Bearer {MARKERS['OPENAI_API_KEY']}", f"Bearer {MARKERS['TOGETHER_API_KEY']}"}


def leaks_in(root: Path) -> dict[str, list[str]]:
    """Marker -> files under root whose bytes contain it (as written, or as JSON would escape it)."""
    found: dict[str, list[str]] = {}
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for marker in MARKERS.values():
                if marker.encode() in data or marker.encode("utf-16-le") in data:
                    found.setdefault(marker, []).append(str(path.relative_to(root)))
    return found


GENERATED_CASES = [  # an answer swap's accepted cases, as the evaluation reads them from a run store
    {
        "id": f"s{i}:swap",
        "seed_id": f"s{i}",
        "task": "answer_swap",
        "pivot": "openai/fake-pivot",
        "source": "nq",
        "question": f"who built tower {i}",
        "original_context": f"Tower {i} was built by Alice Smith in town {i}.",
        "context": f"Tower {i} was built by Bob Jones in town {i}.",
        "original_answers": ["Alice Smith"],
        "answers": ["Bob Jones"],
        "status": "accepted",
    }
    for i in range(3)
]


def task_config(root: Path, task: str, api_base: str) -> Path:
    lm = {"api_base": api_base, "num_retries": 0, "timeout": 5}
    pivot, judge = {"name": "openai/fake-pivot", **lm}, {"name": "openai/fake-judge", **lm}
    # DSPy sends openai/ through its own client, together_ai/ through LiteLLM's: both paths are searched.
    targets = [{"name": "openai/fake-target", **lm}, {"name": "together_ai/fake-litellm-target", **lm}]
    data = {"source": str(nq_head(root, 12)), "limit": 4}
    no_calibration = {"calibration_controls": 0}
    generation = {"models": {"pivot": pivot, "judge": judge}, "data": data, "validation": no_calibration}
    body = {
        "seed_selection": {"models": {"pivot": pivot}, "data": data},
        "answer_swap": {**generation, "run": {"autolog_traces": True}},  # MLflow traces of every call too
        "context_enrich": generation,
        "unanswerable": generation,
        "inconsistent": generation,
        "counterfactual": {**generation, "data": {"source": "arc_challenge", "limit": 2}},
        "judge_calibration": {"models": {"judge": judge}, "data": data, "options": {"families": ["extract"]}},
        "evaluate": {
            "models": {"targets": targets, "judge": judge},
            "data": {"source": "run:swapped-secrets"},
            "options": {"settings": ["closed_book", "open_book"], "k_shots": 0, "nli": "judge"},
            "validation": no_calibration,
        },
        "compare_pivots": {
            "models": {
                "pivots": [pivot, {**pivot, "name": "openai/fake-pivot-2"}],
                "judge": judge,
                "targets": targets[:1],
            },
            "data": data,
            "options": {"generator": "answer_swap"},
            "validation": no_calibration,
        },
        "optimize": {
            "models": {"pivot": pivot, "judge": judge, "targets": targets[:1]},
            "data": {**data, "limit": 6},
            "validation": no_calibration,
            "options": {
                "generator": "answer_swap",
                "optimizers": ["bootstrap_fewshot"],
                "train": 2,
                "val": 2,
                "test": 2,
                "max_demos": 1,
            },
        },
        "optimize_compare": {
            "models": {"pivot": pivot, "judge": judge, "targets": targets[:1]},
            "data": {**data, "limit": 6},
            "validation": no_calibration,
            "options": {
                "generator": "answer_swap",
                "optimizers": ["bootstrap_fewshot"],
                "seeds": "all",
                "train": 2,
                "val": 2,
                "test": 2,
                "max_demos": 1,
                "strengths": [0.5],
            },
        },
        "bench": {
            "models": {"pivot": pivot, "judge": judge, "targets": targets[:1]},
            "data": data,
            "validation": no_calibration,
            "options": {
                "tasks": ["answer_swap", "unanswerable"],
                "settings": {"answer_swap": ["open_book"], "unanswerable": ["open_book"]},
            },
        },
        "strength_sweep": {
            "models": {"pivot": pivot, "judge": judge, "targets": targets[:1]},
            "data": data,
            "validation": no_calibration,
            "options": {"generator": "unanswerable", "dial": "lures", "levels": ["remove", "keep"], "default": "keep"},
        },
    }[task]
    # The proxy's echoing error fails one small run's case in four, over the default error budget (which
    # small runs answer to): this test is about where the key lands, so the run goes on to its end.
    body = {**body, "run": {**body.get("run", {}), "error_budget": 1.0}}
    path = root / f"{task}.yaml"
    path.write_text(yaml.safe_dump({"name": f"{task}-secrets", "task": task, **body}))
    return path


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory):
    """One fake server, one MLflow store and one run store for the module, with every key variable set
    to a marker: each test runs a task into them and searches all of them."""
    root = tmp_path_factory.mktemp("secrets")
    with pytest.MonkeyPatch.context() as mp, FakeOpenAI(reply=lambda prompt: "{}", max_requests=3000) as server:
        loopback_only(mp)
        for name, marker in MARKERS.items():
            mp.setenv(name, marker)
        mp.setenv("REEVAL_RUNS_DIR", str(root / "runs"))
        mp.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{root / 'mlflow.db'}")
        mp.setenv("REEVAL_CACHE_DIR", str(root / "cache"))
        # Traces are written as the calls happen: an exporter thread would race the run's own writes to sqlite.
        mp.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
        mp.setattr("experiments.corpus.default_retriever", lambda embedder, **options: FakeRetriever())
        store = RunStore("swapped-secrets")
        store.write_config({"name": "swapped"})
        store.append(GENERATED_CASES)
        store.close()
        yield root, server


@pytest.mark.parametrize("task", list(entries()))
def test_no_task_logs_a_provider_key(keyed_server, task, tmp_path, monkeypatch):
    root, server = keyed_server
    # A cache of its own: every call goes to the server, whatever ran before.
    monkeypatch.setattr(dspy, "cache", dspy.cache)
    dspy.configure_cache(disk_cache_dir=str(tmp_path / "dspy-cache"))
    config = load_config(task_config(root, task, server.api_base))
    examples = runner.load_data(config).examples
    answers = {"Literal['entailment'": {"verdict": "entailment"}, **scripted_lm(examples, task).answers}
    server.reply = replies_from(answers)  # what the DummyLM tests answer
    if task == "seed_selection":  # a careless proxy: one call fails with the request's key in its text
        server.faults = {examples[0].question: ["echo_auth"]}
    asked = len(server.seen)
    result = launch.run_experiment(config, progress=False)
    # a run that traced its calls leaves autologging off for what this process runs next
    assert autologging_is_disabled("dspy")

    sent = {s.authorization for s in server.seen[asked:]}
    assert sent == (SENT if task == "evaluate" else {f"Bearer {MARKERS['OPENAI_API_KEY']}"})  # the keys were used
    errors = [r for r in result.records if r["status"].startswith("error:")]
    if task == "seed_selection":
        assert [r["status"] for r in errors] == ["error:server"] and "Bearer [redacted]" in errors[0]["error"]
    else:
        assert errors == []
    runs = mlflow.search_runs(search_all_experiments=True, output_format="list")
    mine = [r for r in runs if r.data.tags.get("reeval.run_id") == result.run_id]
    assert len(mine) >= 2  # the parent and a nested run per model
    logged = []
    for run in runs:
        logged += list(run.data.params) + list(run.data.params.values())
        logged += list(run.data.tags) + list(run.data.tags.values()) + list(run.data.metrics)
        for dataset_input in run.inputs.dataset_inputs:
            ds = dataset_input.dataset
            logged += [ds.name, ds.digest, ds.source, ds.source_type, ds.schema or "", ds.profile or ""]
    assert any("fake-" in text for text in logged)  # the search sees what the runs logged
    assert not [text for text in logged for marker in MARKERS.values() if marker in text]
    assert (root / "mlflow.db").exists() and (root / "artifacts").is_dir() and (root / "runs").is_dir()
    assert leaks_in(root) == {}, "a provider key was written to disk"


def test_the_scan_finds_a_planted_key(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "artifact.json").write_text(f'{{"kwargs": {{"api_key": "{MARKERS["HF_TOKEN"]}"}}}}')
    assert leaks_in(tmp_path) == {MARKERS["HF_TOKEN"]: ["a/artifact.json"]}


def test_a_config_that_holds_a_key_is_refused_without_repeating_it(tmp_path):
    path = tmp_path / "keyed.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "k",
                "task": "seed_selection",
                "data": {"source": "nq"},
                "models": {"pivot": {"name": "openai/gpt-4o-mini", "api_key": "sk-in-a-config"}},
            }
        )
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    message = str(raised.value)
    assert "models.pivot.api_key: a config never holds a secret" in message and "OPENAI_API_KEY" in message
    assert "sk-in-a-config" not in message


@pytest.mark.parametrize(
    "api_base", ["http://user:sk-in-a-url@localhost:8000/v1", "https://example.test/v1?api-key=sk-in-a-url"]
)
def test_an_api_base_with_a_credential_is_refused_without_repeating_it(tmp_path, api_base):
    path = tmp_path / "keyed.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "k",
                "task": "seed_selection",
                "data": {"source": "nq"},
                "models": {"pivot": {"name": "hosted_vllm/m", "api_base": api_base}},
            }
        )
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert "models.pivot.api_base: holds a credential" in str(raised.value)
    assert "sk-in-a-url" not in str(raised.value)
