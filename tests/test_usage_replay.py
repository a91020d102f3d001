"""A block's cost (experiments/lm/usage.measured) through DSPy's real call cache and the real local
engine (tests/llama_stand_in.py; no model): a reply the cache answers counts the tokens it took when it
was made, so a pivot comparison re-run from the cache keeps its token costs."""

import dspy
from dspy.clients import configure_cache

from experiments.lm import engine as llama_engine
from experiments.lm.engine import LlamaCppEngine
from experiments.lm.usage import measured
from tests.llama_stand_in import StandInLlama, install


def test_a_cached_reply_counts_the_tokens_it_took_when_it_was_made(monkeypatch, tmp_path):
    install(monkeypatch, tmp_path)
    llama_engine.close_pools()
    previous = dspy.cache
    configure_cache(disk_cache_dir=str(tmp_path / "dspy-cache"))
    try:
        lm = dspy.LM("local/qwen2.5-0.5b@test", engine=LlamaCppEngine("qwen2.5-0.5b", n_ctx=512, n_threads=1))
        StandInLlama.replies.append("Alice Smith")
        with measured(lm.model) as cold:
            assert lm("Passage: The tower was built by Alice Smith. Who built it?") == ["Alice Smith"]
        with measured(lm.model) as warm:
            assert lm("Passage: The tower was built by Alice Smith. Who built it?") == ["Alice Smith"]
        StandInLlama.replies.append("Carol")
        with measured(lm.model) as other:
            lm("Passage: The door was painted by Carol Brown. Who painted it?")
    finally:
        dspy.cache = previous
        llama_engine.close_pools()
    assert cold["tokens"] > 0 and cold["cached_calls"] == 0
    assert warm["tokens"] == cold["tokens"] and warm["cached_calls"] == 1
    assert other["cached_calls"] == 0 and other["tokens"] > 0
