"""Shared fixtures: every test runs offline, with its own run store, MLflow store and caches."""

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# DSPy reads its cache location at import: point it away from the user's cache before any test imports it.
_SESSION_TMP = Path(tempfile.mkdtemp(prefix="reeval-tests-"))
os.environ["DSPY_CACHEDIR"] = str(_SESSION_TMP / "dspy")
for key, value in {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "MLFLOW_DISABLE_TELEMETRY": "true",
}.items():
    os.environ.setdefault(key, value)


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """A private runs/ dir and MLflow store for one test."""
    monkeypatch.setenv("REEVAL_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("REEVAL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


# Property-based tests (tests/test_*_properties.py): no deadline (two shared cores make timings noisy) and a
# modest number of examples, so they stay seconds long; CI derandomizes, so a failure there reproduces
# anywhere. HYPOTHESIS_PROFILE=thorough searches longer before a release.
settings.register_profile("dev", max_examples=40, deadline=None)
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="module")
def module_mlflow(tmp_path_factory):
    """One MLflow store for a module: creating one costs seconds; each test's runs have their own ids."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


@pytest.fixture
def provider_env(isolated, module_mlflow, monkeypatch):
    """For tests against fake OpenAI-compatible servers (tests/fake_openai.py): no host but this one,
    a provider key, and a DSPy call cache of the test's own (an answer cached by another test would
    hide this test's faults)."""
    import dspy

    from tests.fake_openai import loopback_only

    loopback_only(monkeypatch)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", module_mlflow)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-server-key")
    monkeypatch.setattr(dspy, "cache", dspy.cache)  # restored after the test
    dspy.configure_cache(disk_cache_dir=str(isolated / "dspy-cache"))
    return isolated


def fixed_prior_scorer(text: str) -> list:
    """A token scorer that gives the whole answer after "Answer:" one token of probability 0.9."""
    import math

    from experiments.lm.token_scorer import ScoredToken

    start = text.index("\nAnswer:") + len("\nAnswer:")
    return [ScoredToken(0, start, 0.0), ScoredToken(start, len(text), math.log(0.9))]


@pytest.fixture
def world(isolated, monkeypatch, tmp_path):
    """The bench's world (tests/bench_fakes.py): fake llama.cpp models behind the real engine, a private
    DSPy cache, the fake retriever."""
    import dspy
    from dspy.clients import configure_cache

    from experiments.lm import engine as llama_engine
    from tests.bench_fakes import POLICIES, PromptReadingLlama
    from tests.test_context_enrich import FakeRetriever

    models = {name: PromptReadingLlama(policy) for name, policy in POLICIES.items()}
    monkeypatch.setattr(llama_engine, "new_llama", lambda name, n_ctx, n_threads, cache: models[name])
    llama_engine.close_pools()
    monkeypatch.setattr(llama_engine, "choice_logprobs", lambda *args, **kwargs: None)
    monkeypatch.setattr("experiments.lm.roster.model_path", lambda name: tmp_path / f"{name}.gguf")
    monkeypatch.setattr("experiments.corpus.default_retriever", lambda embedder, **options: FakeRetriever())
    # the fake models have no weights to score text with: every closed-book answer gets the prior 0.9
    monkeypatch.setattr("experiments.bench.conflict_prior.scorer_for", lambda target: lambda: fixed_prior_scorer)
    previous = dspy.cache
    configure_cache(disk_cache_dir=str(tmp_path / "dspy-cache"))
    yield models
    dspy.cache = previous
    llama_engine.close_pools()
