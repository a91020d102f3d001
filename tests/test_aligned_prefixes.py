"""Prefixes reused only where a cold decode would match them (experiments/lm/aligned_prefixes.py), through the
real engine, pool and PrefixStateCache on llama-cpp-python's own completion code (tests/llama_stand_in.py).
The stand-in's KV cache records which decode wrote each position: a prompt's positions must have been
written by the decodes a cold context makes, whatever the context served before."""

import pytest

from experiments.lm import engine as llama_engine
from experiments.lm.aligned_prefixes import ALIGN, MIN_BATCH, batches, reusable
from experiments.lm.engine import LlamaCppEngine
from experiments.lm.prompt_reads import PromptCounting
from tests.llama_stand_in import decoded_as_cold, install, kept, lcp
from tests.test_prompt_reads import INSTRUCTIONS, VERDICT, ask, the_context

# Predictors taking turns, as a run's do: prompts sharing the system prompt and a passage, another
# predictor between them (its prompt pushes the first out of the context, so the state cache restores it),
# the same prompt twice, and a judge whose verdict is rescored for its log-probabilities.
PASSAGE = "Passage: The tower of Portvale was built by Alice Smith in 1889 for the harbour. "
CALLS = [
    (INSTRUCTIONS, PASSAGE + "Question: who built the tower?", "Alice Smith", None),
    (INSTRUCTIONS, PASSAGE + "Question: when was the tower built?", "1889", None),
    ("Reply with one word.", "Is the sky blue?", "yes", None),
    (INSTRUCTIONS, PASSAGE + "Question: what was the tower built for?", "the harbour", None),
    (INSTRUCTIONS, PASSAGE + "Question: what was the tower built for?", "the harbour", None),
    (INSTRUCTIONS, "Claim: the tower is old. " + PASSAGE, '{"reason": "it says so", "verdict": "yes"}', VERDICT),
    (INSTRUCTIONS, "Claim: the tower is new. " + PASSAGE, '{"reason": "it says not", "verdict": "no"}', VERDICT),
    (INSTRUCTIONS, PASSAGE + "Question: who built the tower? Answer in one word.", "Alice", None),
]


@pytest.fixture
def world(monkeypatch, tmp_path):
    install(monkeypatch, tmp_path)
    llama_engine.close_pools()
    yield monkeypatch
    llama_engine.close_pools()


def serve(engine) -> list[bool]:
    """Asks CALLS in turn; per call, whether every prompt position was written as a cold decode writes it."""
    cold = []
    for system, user, reply, schema in CALLS:
        ask(engine, system, user, reply, schema, logprobs=5 if schema else None)
        llama = the_context(engine)
        prompt = llama.prompts[-1]
        cold.append(decoded_as_cold(llama._ctx.batches, len(prompt)))
    return cold


def test_every_prompt_reads_the_kv_state_a_cold_context_would_have(world):
    engine = LlamaCppEngine("qwen2.5-1.5b", n_ctx=512, n_threads=1)
    assert serve(engine) == [True] * len(CALLS)
    stats = engine.stats.as_dict()
    # and prefixes were still reused, from the context and from saved states
    assert stats["prefix_hits_context"] >= 3 and stats["prefix_hits_state_cache"] >= 1
    assert stats["prompt_tokens_read"] < 0.7 * stats["prompt_tokens"]


def test_without_alignment_reused_prefixes_were_decoded_otherwise(world):
    """The property above is not automatic: llama-cpp-python's own reuse breaks it."""
    world.setattr(llama_engine, "context_class", lambda base: type("Counting", (PromptCounting, base), {}))
    engine = LlamaCppEngine("qwen2.5-1.5b", n_ctx=512, n_threads=1)
    cold = serve(engine)
    assert cold[0] and not all(cold)


def test_a_restored_state_brings_the_frontier_of_the_context_that_saved_it(world):
    engine = LlamaCppEngine("qwen2.5-1.5b", n_ctx=512, n_threads=1)
    ask(engine, INSTRUCTIONS, PASSAGE + "Question: who built the tower?", "Alice Smith")
    llama = the_context(engine)
    frontier = llama._frontier
    first = llama.prompts[0]
    assert frontier == len(first) // ALIGN * ALIGN > 0
    [state] = llama.cache.cache_state.values()
    assert state.aligned_frontier == frontier  # the reply's tokens, decoded past the prompt, did not move it
    ask(engine, "Reply with one word.", "Is the sky blue?", "yes")
    assert llama._frontier < frontier  # the other prompt shares only the chat template's opening
    ask(engine, INSTRUCTIONS, PASSAGE + "Question: who built the tower? Be brief.", "Alice")
    third = llama.prompts[2]
    assert lcp(first, third) > llama.n_batch
    assert engine.stats.as_dict()["prefix_tokens_state_cache"] == kept(lcp(first, third), len(first), len(third))


def test_batches_start_on_the_grid_and_none_but_a_whole_short_prompt_is_short():
    assert batches(0, 100, 512) == [(0, 100)]
    assert batches(0, 10, 512) == [(0, 10)]  # a short prompt decodes whole, as a cold context does
    assert batches(0, 515, 512) == [(0, 496), (496, 515)]  # not (512, 515): three tokens take another path
    assert batches(0, 1030, 512) == [(0, 512), (512, 1008), (1008, 1030)]
    for start in range(0, 200, ALIGN):
        for end in range(start + MIN_BATCH, 1300, 7):
            cut = batches(start, end, 512)
            assert [a for a, _ in cut[1:]] == [b for _, b in cut[:-1]] and (cut[0][0], cut[-1][1]) == (start, end)
            assert all(a % ALIGN == 0 and MIN_BATCH <= b - a <= 512 for a, b in cut)


def test_a_batch_size_off_the_grid_is_refused():
    with pytest.raises(ValueError, match="n_batch 24"):
        batches(0, 100, 24)
    with pytest.raises(ValueError, match="n_batch 16"):
        batches(0, 100, 16)  # a short tail could not be merged into the batch before it


def test_a_prefix_is_kept_to_the_grid_inside_the_frontier_leaving_a_full_batch():
    assert reusable(100, 200, 150) == 96
    assert reusable(100, 64, 150) == 64  # past the frontier the entries came from a reply or a short batch
    assert reusable(149, 160, 150) == 128  # 144 would leave 6 tokens to decode, a batch of another kind
    assert reusable(10, 100, 12) == 0
