"""The llama.cpp engine behind DSPy, driven by a fake model that records what it was sent."""

import dspy
import pytest

from experiments.config import LMConfig
from experiments.lm import engine as llama_engine
from experiments.lm.registry import build_lm
from programs.seed_selection import SeedSelection
from tests.fakes import FakeLlama


@pytest.fixture
def fake(monkeypatch):
    model = FakeLlama([{"answer": "Paris"}, {"answer": "Lyon"}])
    monkeypatch.setattr(llama_engine, "new_llama", lambda name, n_ctx, n_threads, cache: model)
    llama_engine.close_pools()
    yield model
    llama_engine.close_pools()


def test_structured_output_goes_to_llama_as_json_schema(fake):
    resolved = build_lm(LMConfig(name="qwen2.5-0.5b", max_tokens=20, seed=7, cache=False), "pivot")
    with dspy.context(lm=resolved.lm, adapter=resolved.adapter()):
        out = SeedSelection()(question="capital of France?", context="Paris is the capital of France.")
    assert (out.closed_answer, out.open_answer) == ("Paris", "Lyon")
    first = fake.calls[0]
    schema = first["response_format"]["schema"]
    assert first["response_format"]["type"] == "json_object"
    assert "answer" in schema["properties"] and schema["required"] == ["answer"]
    assert first["seed"] == 7 and first["max_tokens"] == 20 and first["temperature"] == 0.0
    assert first["top_k"] == 1  # greedy
    assert first["messages"][0]["role"] == "system"  # Qwen's default system prompt must not slip in
    assert resolved.usage()["calls"] == 2


def test_completion_path_for_base_model(fake):
    resolved = build_lm(LMConfig(name="gemma3-270m", cache=False), "target")
    with dspy.context(lm=resolved.lm, adapter=resolved.adapter()):
        dspy.Predict("question -> answer")(question="capital of France?")
    call = fake.calls[0]
    assert "messages" not in call and call["prompt"].endswith("Assistant:")
    assert "capital of France?" in call["prompt"]
    assert call["grammar"] is not None


def test_model_string_carries_file_hash_for_cache_keys():
    resolved = build_lm(LMConfig(name="qwen2.5-1.5b"), "pivot")
    assert resolved.lm.model == "local/qwen2.5-1.5b@cc324af070c2"
    ident = resolved.identity()
    assert ident["file_sha256"].startswith("cc324af070c2") and ident["temperature"] == 0.0


def test_engine_state_round_trips():
    engine = llama_engine.LlamaCppEngine("qwen2.5-0.5b", n_ctx=2048, n_threads=1, n_contexts=2)
    again = llama_engine.LlamaCppEngine.load_state(engine.dump_state())
    assert (again.name, again.n_ctx, again.n_threads, again.n_contexts) == ("qwen2.5-0.5b", 2048, 1, 2)
