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

from experiments import runner
from experiments.config import ConfigError, load_config
from experiments.run_store import RunStore
from tests.fake_openai import FakeOpenAI, loopback_only, replies_from
from tests.shipped import nq_head
from tests.test_context_enrich import FakeRetriever
from tests.test_tasks_end_to_end import scripted_lm

pytestmark = pytest.mark.timeout(600)  # a hang guard, far above what the tests take

MARKERS = {name: f"sk-reeval-canary-{name.lower().replace('_', '-')}-5e1f0c9a" for name in (
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HOSTED_VLLM_API_KEY", "AZURE_API_KEY", "GEMINI_API_KEY", "HF_TOKEN")}


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


def task_configs(tmp_path: Path, api_base: str) -> dict[str, dict]:
    nq = nq_head(tmp_path, 12)
    lm = {"api_base": api_base, "num_retries": 0, "timeout": 5}
    pivot, judge = {"name": "openai/fake-pivot", **lm}, {"name": "openai/fake-judge", **lm}
    targets = [{"name": "openai/fake-target", **lm}, {"name": "hosted_vllm/fake-server-target", **lm}]
    data = {"source": str(nq), "limit": 4}
    no_calibration = {"calibration_controls": 0}
    generation = {"models": {"pivot": pivot, "judge": judge}, "data": data, "validation": no_calibration}
    return {
        "seed_selection": {"models": {"pivot": pivot}, "data": data},
        "answer_swap": {**generation, "run": {"autolog_traces": True}},  # MLflow traces of every call too
        "context_enrich": generation,
        "unanswerable": generation,
        "inconsistent": generation,
        "counterfactual": {**generation, "data": {"source": "arc_challenge", "limit": 2}},
        "judge_calibration": {"models": {"judge": judge}, "data": {**data, "limit": 4},
                              "options": {"families": ["extract"]}},
        "evaluate": {"models": {"targets": targets, "judge": judge}, "data": {"source": "run:answer_swap-secrets"},
                     "options": {"settings": ["closed_book", "open_book"], "k_shots": 0, "nli": "judge"},
                     "validation": no_calibration},
        "compare_pivots": {"models": {"pivots": [pivot, {**pivot, "name": "openai/fake-pivot-2"}], "judge": judge,
                                      "targets": targets[:1]}, "data": data, "validation": no_calibration},
        "optimize": {"models": {"pivot": pivot, "judge": judge, "targets": targets[:1]},
                     "data": {**data, "limit": 6}, "validation": no_calibration,
                     "options": {"optimizers": ["bootstrap_fewshot"], "train": 2, "val": 2, "test": 2,
                                 "max_demos": 1}},
    }


@pytest.fixture
def keys_in_env(isolated, monkeypatch):
    loopback_only(monkeypatch)
    for name, marker in MARKERS.items():
        monkeypatch.setenv(name, marker)
    # Traces are written as the calls happen: an exporter thread would race the run's own writes to sqlite.
    monkeypatch.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    monkeypatch.setattr(dspy, "cache", dspy.cache)  # restored after the test
    dspy.configure_cache(disk_cache_dir=str(isolated / "dspy-cache"))
    monkeypatch.setattr("programs.retriever.default_retriever", lambda embedder, **options: FakeRetriever())
    return isolated


def test_no_task_logs_a_provider_key(keys_in_env):
    root = keys_in_env
    with FakeOpenAI(reply=lambda prompt: "{}", max_requests=3000) as server:
        configs = task_configs(root, server.api_base)
        ran = {}
        for task in configs:
            config = load_config(write(root, task, configs[task]))
            examples = runner.load_data(config).examples
            answers = {"Literal['entailment'": {"verdict": "entailment"}, **scripted_lm(examples, task).answers}
            server.reply = replies_from(answers)  # what the DummyLM tests answer
            if task == "seed_selection":  # a careless proxy: one call fails with the request's key in its text
                server.faults = {examples[0].question: ["echo_auth"]}
            # the answer swap's run id is the evaluation's case set
            result = runner.run_experiment(config, run_id="answer_swap-secrets" if task == "answer_swap" else None,
                                           progress=False)
            ran[task] = result
            errors = [r for r in result.records if r["status"].startswith("error:")]
            assert len(errors) == (task == "seed_selection"), (task, errors[:1])  # only the proxy's echo

    assert {s.authorization for s in server.seen} >= {f"Bearer {MARKERS['OPENAI_API_KEY']}"}
    echoed = next(r for r in RunStore(ran["seed_selection"].run_id).records() if r["status"].startswith("error:"))
    assert echoed["status"] == "error:server" and "Bearer [redacted]" in echoed["error"]

    store = root / "mlflow.db"
    assert store.exists() and (root / "artifacts").is_dir() and (root / "runs").is_dir()
    runs = mlflow.search_runs(search_all_experiments=True, output_format="list")
    assert len(runs) >= 2 * len(configs)  # a parent and at least one nested run per task
    logged = []
    for run in runs:
        logged += list(run.data.params) + list(run.data.params.values())
        logged += list(run.data.tags) + list(run.data.tags.values()) + list(run.data.metrics)
        for dataset_input in run.inputs.dataset_inputs:
            ds = dataset_input.dataset
            logged += [ds.name, ds.digest, ds.source, ds.source_type, ds.schema or "", ds.profile or ""]
    assert any("fake-target" in text for text in logged)  # the scan sees what the runs logged
    assert not [text for text in logged for marker in MARKERS.values() if marker in text]
    assert leaks_in(root) == {}, "a provider key was written to disk"


def write(root: Path, task: str, body: dict) -> Path:
    path = root / f"{task}.yaml"
    path.write_text(yaml.safe_dump({"name": f"{task}-secrets", "task": task, **body}))
    return path


def test_the_scan_finds_a_planted_key(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "artifact.json").write_text(f'{{"kwargs": {{"api_key": "{MARKERS["HF_TOKEN"]}"}}}}')
    assert leaks_in(tmp_path) == {MARKERS["HF_TOKEN"]: ["a/artifact.json"]}


def test_a_config_that_holds_a_key_is_refused_without_repeating_it(tmp_path):
    path = tmp_path / "keyed.yaml"
    path.write_text(yaml.safe_dump({"name": "k", "task": "seed_selection", "data": {"source": "nq"},
                                    "models": {"pivot": {"name": "openai/gpt-4o-mini", "api_key": "sk-in-a-config"}}}))
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    message = str(raised.value)
    assert "models.pivot.api_key: a config never holds a secret" in message and "OPENAI_API_KEY" in message
    assert "sk-in-a-config" not in message


@pytest.mark.parametrize("api_base", ["http://user:sk-in-a-url@localhost:8000/v1",
                                      "https://example.test/v1?api-key=sk-in-a-url"])
def test_an_api_base_with_a_credential_is_refused_without_repeating_it(tmp_path, api_base):
    path = tmp_path / "keyed.yaml"
    path.write_text(yaml.safe_dump({"name": "k", "task": "seed_selection", "data": {"source": "nq"},
                                    "models": {"pivot": {"name": "hosted_vllm/m", "api_base": api_base}}}))
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert "models.pivot.api_base: holds a credential" in str(raised.value)
    assert "sk-in-a-url" not in str(raised.value)
