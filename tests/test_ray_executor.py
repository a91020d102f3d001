"""The Ray executor on a local Ray instance (2 CPUs, loopback only, no dashboard, no usage stats),
with scripted DummyLM pivots built inside each actor: the same records as the local executor, a
killed driver resumed with every case exactly once, and a dying worker costing only its case. The
bench on Ray (its stages' items on actors that build the stage's models): the local bench's cases,
ledger and tables, and a local bench killed mid-stage finished on Ray."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

import mlflow
import numpy as np
import pytest
import yaml

# Read by Ray when it is imported: keep every Ray process on 127.0.0.1 and report nothing.
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'reeval[ray]' (scripts/install.sh does)")

from experiments import launch, runner  # noqa: E402
from experiments.bench import driver  # noqa: E402
from experiments.config import RunConfig  # noqa: E402
from experiments.config_loader import load_config  # noqa: E402
from experiments.run_store import RunStore  # noqa: E402
from tests.bench_fakes import ActorModels  # noqa: E402
from tests.fakes import scripted_pivot  # noqa: E402
from tests.test_bench import bench_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Scripted:
    """A picklable `build_lms` for the actors: the scripted pivot of `examples` (open-book right on
    even cases, closed-book right on every third), made by the driver so that no actor loads data.
    `delay` slows every call; the worker process exits abruptly (as on a segfault or an OOM kill)
    when asked about `doomed`."""

    def __init__(self, examples, delay: float = 0.0, doomed: str | None = None):
        self.examples = list(examples)
        self.delay = delay
        self.doomed = doomed

    def __call__(self, run):
        examples = self.examples
        opened = {e.id: (e.answers[0] if i % 2 == 0 else "wrong") for i, e in enumerate(examples)}
        closed = {e.id: (e.answers[0] if i % 3 == 0 else "nope") for i, e in enumerate(examples)}
        resolved = scripted_pivot(examples, closed, opened)
        forward = resolved.lm.forward

        def wrapped(*args, **kwargs):
            if self.doomed is not None and self.doomed in f"{args}{kwargs}":
                os._exit(1)
            time.sleep(self.delay)
            return forward(*args, **kwargs)

        resolved.lm.forward = wrapped
        return {"pivot": resolved}


@pytest.fixture(scope="module")
def ray_cluster():
    """One Ray instance for the module: starting one costs several seconds."""
    for attempt in range(3):
        try:
            ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
            break
        except Exception:  # Ray waits a fixed 30 s for its raylet, which an overloaded machine can miss
            ray.shutdown()
            if attempt == 2:
                raise
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="module")
def nq():
    """The first NQ seeds, loaded once (loading and filtering the shipped file takes seconds)."""
    path = Path(tempfile.mkdtemp()) / "nq.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "nq",
                "task": "seed_selection",
                "data": {"source": "nq", "limit": 12},
                "models": {"pivot": {"name": "qwen2.5-0.5b"}},
            }
        )
    )
    return runner.load_data(load_config(path)).examples


def make_config(tmp_path, name, limit, **run):
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": name,
                "task": "seed_selection",
                "data": {"source": "nq", "limit": limit},
                "models": {"pivot": {"name": "qwen2.5-0.5b"}},
                "run": run,
            }
        )
    )
    return load_config(path)


def comparable(records):
    return sorted(({k: v for k, v in r.items() if k != "seconds"} for r in records), key=lambda r: r["id"])


def test_ray_and_local_executors_give_identical_records(isolated, ray_cluster, nq, monkeypatch):
    monkeypatch.setattr(runner, "build_lms", Scripted(nq[:6]))
    local = runner.run_experiment(make_config(isolated, "same", 6), run_id="same-local", progress=False)
    on_ray = runner.run_experiment(
        make_config(isolated, "same", 6, executor="ray", ray={"workers": 2}), run_id="same-ray", progress=False
    )
    assert len(on_ray.records) == 6
    assert comparable(on_ray.records) == comparable(local.records)
    assert on_ray.metrics["table.open_correct__closed_correct"] == local.metrics["table.open_correct__closed_correct"]
    params = mlflow.get_run(on_ray.mlflow_run_id).data.params
    assert (params["executor"], params["executor.ray.workers"], params["executor.ray.nodes"]) == ("ray", "2", "1")
    assert params["run.executor"] == "ray"


CHILD = textwrap.dedent("""
    import sys
    from experiments import runner
    from experiments.config_loader import load_config
    from tests.test_ray_executor import Scripted

    config = load_config(sys.argv[1])
    runner.build_lms = Scripted(runner.load_data(config).examples, delay=0.3)
    runner.run_experiment(config, progress=False, ray_address=sys.argv[2])
""")


def test_driver_killed_mid_run_then_resumed_runs_each_case_once(isolated, ray_cluster, nq, monkeypatch):
    config = make_config(isolated, "kill", 12, executor="ray", ray={"workers": 2})
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(isolated / "kill.yaml"), ray_cluster],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.time() + 240
    while time.time() < deadline:
        if store.cases_path.exists() and len(store.cases_path.read_text().splitlines()) >= 4:
            break
        assert child.poll() is None, "the driver finished or died before it could be killed"
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    killed_at = len(store.records())
    assert 4 <= killed_at < 12

    monkeypatch.setattr(runner, "build_lms", Scripted(nq))
    result = runner.run_experiment(config, progress=False)  # the same run id: a resume, on Ray again
    assert result.run_id == store.run_id and result.new_cases == 12 - killed_at
    lines = [yaml.safe_load(line)["id"] for line in store.cases_path.read_text().splitlines()]
    assert len(lines) == 12 and max(Counter(lines).values()) == 1  # every case exactly once
    order = {e.id: i for i, e in enumerate(nq)}
    assert all(r["open_correct"] == (order[r["id"]] % 2 == 0) for r in result.records)


def test_a_worker_that_dies_costs_only_its_case(isolated, ray_cluster, nq, monkeypatch):
    doomed = nq[2]
    monkeypatch.setattr(runner, "build_lms", Scripted(nq[:8], doomed=doomed.question))
    # the death may come among the first 4 cases: 1 of 4 (25%) is within this budget
    config = make_config(
        isolated, "die", 8, executor="ray", ray={"workers": 2}, error_budget=0.3, min_cases_before_budget=4
    )
    result = runner.run_experiment(config, progress=False)
    statuses = {r["id"]: r["status"] for r in result.records}
    assert len(statuses) == 8
    assert statuses.pop(doomed.id) == "error:worker"
    assert set(statuses.values()) == {"accepted"}  # the run went on: a new worker took the dead one's place
    assert result.metrics["error.worker"] == 1
    assert mlflow.get_run(result.mlflow_run_id).data.params["executor.ray.worker_deaths"] == "1"


def test_an_unreachable_cluster_is_reported_at_once():
    from experiments.executors import ExecutorError
    from experiments.executors.ray_actors import check_reachable

    with pytest.raises(ExecutorError, match="--ray-address 127.0.0.1:1: no Ray cluster answers there"):
        check_reachable("127.0.0.1:1", timeout=1)


def _fake_embedder():
    from tests.test_retriever import FakeEmbedder

    return FakeEmbedder()


def test_an_index_embedded_by_ray_data_on_the_workers_equals_the_local_build(ray_cluster, tmp_path):
    """On a cluster the corpus is embedded by Ray Data `map_batches` over the workers; the
    vectors come back in corpus order, so the index (and every search) is the local build's."""
    from experiments.executors.ray_embedding import RayDataEncoder
    from programs.retriever import PassageRetriever
    from tests.test_retriever import FakeEmbedder

    passages = [
        {"id": f"p{i}", "title": f"T{i % 7}", "text": f"passage {i} about topic {i % 13} and word{i}"}
        for i in range(600)
    ]
    local = PassageRetriever(passages, FakeEmbedder(), "1" * 64).build_or_load(tmp_path / "local")
    encoder = RayDataEncoder(_fake_embedder, workers=2, batch_size=50)
    spread = PassageRetriever(passages, FakeEmbedder(), "1" * 64).build_or_load(tmp_path / "ray", encoder)
    assert spread.meta["encoded_by"].startswith("ray data: 2 workers")
    assert spread.index.ntotal == local.index.ntotal == 600
    np.testing.assert_allclose(spread.index.reconstruct_n(0, 600), local.index.reconstruct_n(0, 600), atol=1e-6)
    for query in ("topic 3", "word599 passage", "T5"):
        assert [h.id for h in spread.search(query, k=5)] == [h.id for h in local.search(query, k=5)]


def test_ray_data_workers_read_a_memory_mapped_corpus_themselves(ray_cluster, tmp_path):
    """At 21M passages the texts (13 GB) must not pass through the driver: the driver sends row numbers
    and a corpus that pickles as its Arrow files' paths; the workers read the rows. The index is the
    local build's."""
    import pickle

    import datasets

    from experiments.executors.ray_embedding import RayDataEncoder
    from programs.retrieval.passages import PassageTable
    from programs.retriever import PassageRetriever
    from tests.test_retriever import FakeEmbedder

    rows = [
        {"id": f"m{i}", "title": f"T{i % 5}", "text": f"mapped passage {i} on subject {i % 11} " * 8}
        for i in range(300)
    ]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "corpus"))
    mapped = datasets.load_from_disk(str(tmp_path / "corpus"))
    assert len(pickle.dumps(PassageTable(mapped))) < sum(len(r["text"]) for r in rows) / 20
    local = PassageRetriever(mapped, FakeEmbedder(), "2" * 64).build_or_load(tmp_path / "local")
    encoder = RayDataEncoder(_fake_embedder, workers=2, batch_size=40)
    spread = PassageRetriever(mapped, FakeEmbedder(), "2" * 64).build_or_load(tmp_path / "ray", encoder)
    np.testing.assert_allclose(spread.index.reconstruct_n(0, 300), local.index.reconstruct_n(0, 300), atol=1e-6)
    assert [h.id for h in spread.search("subject 4", k=4)] == [h.id for h in local.search("subject 4", k=4)]


def _stage_records(run_id: str, stages) -> dict[str, list[dict]]:
    return {stage: comparable(RunStore(f"{run_id}/{stage}").records()) for stage in stages}


def _ledger(run_id: str) -> dict[str, dict]:
    """stages.json without what a clock measures."""
    ledger = json.loads((RunStore(run_id).dir / "stages.json").read_text())
    return {
        stage: {
            "inputs": entry["inputs"],
            "metrics": {k: v for k, v in entry["metrics"].items() if not k.endswith("seconds")},
        }
        for stage, entry in ledger.items()
    }


def test_the_bench_on_ray_makes_the_local_cases_ledger_and_tables(world, isolated, ray_cluster, monkeypatch):
    """Each stage's items on 2 actors that build the stage's models themselves: the same checkpointed
    cases and answers, the same stage ledger (inputs, items, LM calls and tokens), the same tables. A local
    bench killed within a stage is then finished on Ray: nothing done is redone, the tables are the same."""
    monkeypatch.setattr(driver, "build_lm", ActorModels(isolated))
    config = bench_config(isolated, cache=False, tasks=["answer_swap", "unanswerable"])  # no call cache
    on_ray = config.model_copy(update={"run": RunConfig(executor="ray", ray={"workers": 2})})
    local = launch.run_experiment(config, run_id="bench-local", progress=False)
    calls = {name: len(model.calls) for name, model in world.items()}
    ray_run = launch.run_experiment(on_ray, run_id="bench-ray", progress=False)

    assert {name: len(model.calls) for name, model in world.items()} == calls  # every call made by an actor
    stages = sorted(_ledger("bench-local"))
    assert stages == [
        "evaluate.qwen2.5-0.5b",
        "evaluate.smollm2-135m",
        "generate.answer_swap.qwen2.5-1.5b",
        "generate.unanswerable.qwen2.5-1.5b",
        "seeds.qwen2.5-1.5b",
    ]
    assert _ledger("bench-ray") == _ledger("bench-local")
    assert _ledger("bench-ray")["evaluate.qwen2.5-0.5b"]["metrics"]["lm.calls"] > 0  # the actors' calls counted
    assert _stage_records("bench-ray", stages) == _stage_records("bench-local", stages)
    assert ray_run.task.tables == local.task.tables
    assert ray_run.task.tables["main"]["smollm2-135m"]["answer_swap"]["drop"] == 1.0
    children = mlflow.search_runs(
        filter_string=f"tags.mlflow.parentRunId = '{ray_run.mlflow_run_id}'",
        search_all_experiments=True,
        output_format="list",
    )
    executors = {
        c.data.tags["reeval.stage"]: (c.data.params["executor"], c.data.params["executor.ray.workers"])
        for c in children
    }
    assert executors == dict.fromkeys(stages, ("ray", "2"))

    follower = world["qwen2.5-0.5b"]
    follower.interrupt_after = len(follower.calls) + 2  # killed while the first target answers, after two
    with pytest.raises(KeyboardInterrupt):
        launch.run_experiment(config, run_id="bench-resumed", progress=False)
    follower.interrupt_after = None
    resumed = launch.run_experiment(on_ray, run_id="bench-resumed", progress=False)
    assert resumed.metrics["stages_reused"] == 3 and resumed.metrics["stages_run"] == 2
    answers = RunStore("bench-resumed/evaluate.qwen2.5-0.5b").cases_path.read_text().splitlines()
    assert len(answers) == len({json.loads(line)["id"] for line in answers})  # the two answers were kept
    assert _stage_records("bench-resumed", stages) == _stage_records("bench-local", stages)
    assert resumed.task.tables == local.task.tables
