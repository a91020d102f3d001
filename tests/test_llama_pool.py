"""Several llama.cpp contexts per local model: the core split, the pool, and a run through it
with a fake llama.cpp context (no model is loaded)."""

import threading
import time

import mlflow
import pytest
import yaml

import programs.cores as cores_module
from experiments import runner
from experiments.config_loader import load_config
from experiments.lm import engine as llama_engine
from experiments.lm.pool import ContextPool, CoreSplit, available_cores, decoding_slots, plan_split
from experiments.run_store import RunStore
from tests.fakes import ConcurrencyProbe, PromptFakeLlama


def test_split_never_oversubscribes_the_cores():
    for cores in (1, 2, 3, 4, 8, 16):
        for parallel in (1, 2, 3, 5, 16, 64):
            for contexts in (None, 1, 2, 7):
                split = plan_split(parallel, contexts, cores=cores)
                assert split.contexts * split.threads <= cores, (cores, parallel, contexts)
                assert split.contexts == min(contexts or parallel, cores)
                assert split.threads == cores // split.contexts  # no core idle by rounding more than needed


def test_split_of_the_benchmark():
    assert plan_split(1, cores=2) == CoreSplit(contexts=1, threads=2, cores=2)
    assert plan_split(2, cores=2) == CoreSplit(contexts=2, threads=1, cores=2)


def test_cores_come_from_reeval_threads_else_the_affinity(monkeypatch):
    monkeypatch.delenv("REEVAL_THREADS", raising=False)
    monkeypatch.setattr(cores_module.os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    monkeypatch.setattr(cores_module.os, "cpu_count", lambda: 64)
    assert available_cores() == 3  # a container or taskset narrows what os.cpu_count() says
    monkeypatch.setenv("REEVAL_THREADS", "1")
    assert available_cores() == 1


def pool_of(size, probe, contexts_made, slots=None):
    def factory():
        context = PromptFakeLlama(probe)
        contexts_made.append(context)
        return context

    return ContextPool(factory, size, slots or threading.BoundedSemaphore(size), label="fake")


def borrow(pool, probe, times=1, hold=0.03):
    for _ in range(times):
        with pool.context() as context:
            probe.enter(context)
            time.sleep(hold)
            probe.leave(context)


def test_pool_lends_each_context_to_one_call_at_a_time_and_makes_no_more_than_its_size():
    probe, made = ConcurrencyProbe(), []
    pool = pool_of(2, probe, made)
    threads = [threading.Thread(target=borrow, args=(pool, probe, 5)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 2 and len(pool.contexts) == 2
    assert probe.peak == 2  # two calls did run at once
    assert probe.overlaps == 0  # but never two in one context


def test_pool_makes_contexts_only_when_calls_overlap():
    probe, made = ConcurrencyProbe(), []
    pool = pool_of(4, probe, made)
    borrow(pool, probe, times=5)
    assert len(made) == 1  # sequential calls never pay for a second context


def test_pools_of_one_split_share_its_decoding_slots():
    """A pivot and a judge of different models, called at once by 4 cases, still decode at most
    `contexts` calls at a time: contexts × threads stays within the cores."""
    split = CoreSplit(contexts=2, threads=1, cores=2)
    probe, made = ConcurrencyProbe(), []
    pools = [pool_of(2, probe, made, decoding_slots(split)) for _ in range(2)]
    threads = [threading.Thread(target=borrow, args=(pools[i % 2], probe, 4)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert probe.peak == 2 and probe.overlaps == 0
    assert decoding_slots(split) is decoding_slots(CoreSplit(contexts=2, threads=1, cores=2))


def test_a_context_that_fails_to_load_frees_its_place():
    attempts = []

    def factory():
        attempts.append(1)
        if len(attempts) == 1:
            raise MemoryError("no room for a KV cache")
        return object()

    pool = ContextPool(factory, 1, threading.BoundedSemaphore(1))
    with pytest.raises(MemoryError), pool.context():
        pass
    with pool.context() as context:  # the failed load did not use up the pool's only place
        assert context is not None


@pytest.fixture
def fake_contexts(monkeypatch):
    """Every llama.cpp context the engine makes is a PromptFakeLlama; returns the probe and them."""
    probe, made = ConcurrencyProbe(), []

    def new_llama(name, n_ctx, n_threads, cache):
        context = PromptFakeLlama(probe, delay=0.05)
        context.n_threads = n_threads
        made.append(context)
        return context

    monkeypatch.setattr(llama_engine, "new_llama", new_llama)
    monkeypatch.setenv("REEVAL_THREADS", "2")
    llama_engine.close_pools()
    yield probe, made
    llama_engine.close_pools()


def test_a_released_model_is_loaded_again_on_its_next_call(fake_contexts):
    """A bench stage starts with the models it does not use released (experiments.bench.stages): their
    contexts close, and a later call to one makes a new context as if it had never loaded."""
    _, made = fake_contexts
    split = CoreSplit(contexts=1, threads=2, cores=2)

    def call(name):
        with llama_engine.context_pool(name, 512, split).context() as context:
            return context

    first, kept = call("qwen2.5-0.5b"), call("smollm2-135m")
    assert llama_engine.release_models(keep={"smollm2-135m"}) == ["qwen2.5-0.5b"]
    assert first.closed and not kept.closed
    assert call("smollm2-135m") is kept  # a kept model keeps its context
    again = call("qwen2.5-0.5b")
    assert again is not first and not again.closed and len(made) == 3  # loaded again, transparently
    assert llama_engine.release_models() == ["qwen2.5-0.5b", "smollm2-135m"]
    assert again.closed and kept.closed
    assert llama_engine.release_models() == []  # nothing left loaded


def local_config(tmp_path, threads):
    path = tmp_path / f"local{threads}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "pool",
                "task": "seed_selection",
                "data": {"source": "nq", "limit": 8},
                "models": {"pivot": {"name": "qwen2.5-0.5b", "cache": False}},
                "run": {"threads": threads},
            }
        )
    )
    return load_config(path)


def comparable(records):
    return sorted(({k: v for k, v in r.items() if k != "seconds"} for r in records), key=lambda r: r["id"])


def test_parallel_cases_run_on_several_contexts_with_the_same_records(isolated, fake_contexts):
    probe, made = fake_contexts
    one = runner.run_experiment(local_config(isolated, 1), run_id="one-context", progress=False)
    assert len(made) == 1 and made[0].n_threads == 2 and probe.peak == 1
    llama_engine.close_pools()
    two = runner.run_experiment(local_config(isolated, 2), run_id="two-contexts", progress=False)
    assert len(made) == 3 and {c.n_threads for c in made[1:]} == {1}  # 2 contexts × 1 thread on 2 cores
    assert probe.peak == 2 and probe.overlaps == 0
    assert comparable(RunStore("one-context").records()) == comparable(RunStore("two-contexts").records())
    assert one.metrics["lm.pivot.calls"] == two.metrics["lm.pivot.calls"] == 16

    models = mlflow.artifacts.load_dict(f"runs:/{two.mlflow_run_id}/models.json")
    assert (models["pivot"]["n_contexts"], models["pivot"]["n_threads"], models["pivot"]["cores"]) == (2, 1, 2)
    # the llama.cpp build's CPU features: install.sh builds for the CPU, and another build may round otherwise
    assert models["pivot"]["llama_cpp_features"] == llama_engine.build_features()
    assert "SSE3" in models["pivot"]["llama_cpp_features"].split()
    params = mlflow.get_run(one.mlflow_run_id).data.params
    assert (params["lm.pivot.n_contexts"], params["lm.pivot.n_threads"]) == ("1", "2")
    assert params["executor"] == "local" and params["executor.threads"] == "1"


def test_threads_and_contexts_do_not_change_the_run_id(tmp_path):
    assert local_config(tmp_path, 1).digest() == local_config(tmp_path, 4).digest()


def test_two_contexts_loading_at_once_do_not_silence_the_process(monkeypatch, tmp_path):
    """llama-cpp-python silences a model load by pointing fds 1 and 2 at /dev/null and back. Two loads in
    two threads interleaved that and left the process writing to /dev/null (a benchmark's results
    vanished, exit code 0). Loads are serialised; this fake load does what the real one does, slowly."""
    import os

    import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr

    class SlowLoad:
        def __init__(self, **_):
            with suppress_stdout_stderr(disable=False):
                time.sleep(0.2)

        def set_cache(self, cache):
            pass

    monkeypatch.setattr(llama_cpp, "Llama", SlowLoad)
    monkeypatch.setattr(llama_engine, "model_path", lambda name: tmp_path / "model.gguf")
    before = os.fstat(1)
    threads = [threading.Thread(target=llama_engine.new_llama, args=("qwen2.5-0.5b", 512, 1, None)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = os.fstat(1)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)  # still where it was, not /dev/null
