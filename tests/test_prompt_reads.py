"""Prompt tokens read against sent (experiments/lm/prompt_reads.py), through the real engine, pool and
PrefixStateCache on llama-cpp-python's own completion code (tests/llama_stand_in.py; no model)."""

from types import SimpleNamespace

import pytest

from experiments.lm import engine as llama_engine
from experiments.lm.engine import EngineStats, LlamaCppEngine
from experiments.lm.prompt_reads import CONTEXT, STATE_CACHE, PromptCount
from tests.llama_stand_in import N_VOCAB, StandInLlama, decoded_as_cold, install, kept, lcp, token_ids

INSTRUCTIONS = (
    "You answer questions about a passage. Read the passage, then the question, and reply with the shortest "
    "span of the passage that answers it, or unknown when the passage does not say."
)
VERDICT = {
    "type": "object",
    "properties": {"reason": {"type": "string"}, "verdict": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["reason", "verdict"],
}


@pytest.fixture
def world(monkeypatch, tmp_path):
    install(monkeypatch, tmp_path)
    llama_engine.close_pools()
    yield
    llama_engine.close_pools()


def ask(engine, system, user, reply, schema=None, logprobs=None, max_tokens=64):
    from dspy.lm15 import Config, Message, Request

    StandInLlama.replies.append(reply)
    config = Config(
        max_tokens=max_tokens,
        temperature=0.0,
        seed=0,
        response_format={"type": "json_schema", "schema": schema} if schema else None,
        logprobs=logprobs,
    )
    return engine.complete(
        Request(model=f"local/{engine.name}", messages=(Message.user(user),), system=system, config=config)
    )


def the_context(engine):
    [llama] = llama_engine.context_pool(engine.name, engine.n_ctx, engine.split).contexts
    return llama


def test_a_prompt_sharing_the_previous_prompts_prefix_reads_only_the_rest(world):
    engine = LlamaCppEngine("qwen2.5-0.5b", n_ctx=512, n_threads=1)
    first = ask(
        engine, INSTRUCTIONS, "Passage: The tower was built by Alice Smith. Question: who built it?", "Alice Smith"
    )
    llama = the_context(engine)
    decoded = llama._ctx.decoded
    second = ask(
        engine, INSTRUCTIONS, "Passage: The door was painted by Carol Brown. Question: who painted it?", "Carol"
    )
    one, two = llama.prompts
    shared = lcp(one, two)
    assert len(token_ids(INSTRUCTIONS)) < shared < len(two)  # the system prompt and the user turn's opening
    # reused up to the last full batch of the shared prefix (experiments/lm/aligned_prefixes.py)
    reused = kept(shared, len(one), len(two))
    assert 0 < reused < shared
    assert (first.usage.input_tokens, second.usage.input_tokens) == (len(one), len(two))
    stats = engine.stats.as_dict()
    assert stats["prompt_tokens"] == len(one) + len(two)
    assert stats["prompt_tokens_read"] == len(one) + len(two) - reused
    assert (stats["prefix_hits_context"], stats["prefix_tokens_context"]) == (1, reused)
    assert (stats["prefix_hits_state_cache"], stats["prefix_tokens_state_cache"]) == (0, 0)
    assert stats["prompt_read_share"] == round(stats["prompt_tokens_read"] / stats["prompt_tokens"], 4)
    # what the stand-in's KV cache decoded: the prompt past the reused prefix, then each reply token
    assert llama._ctx.decoded - decoded == len(two) - reused + second.usage.output_tokens
    assert llama._ctx.kv == two + token_ids("Carol")
    assert decoded_as_cold(llama._ctx.batches, len(two))


def test_a_prefix_saved_two_calls_back_is_restored_from_the_state_cache(world):
    engine = LlamaCppEngine("qwen2.5-0.5b", n_ctx=512, n_threads=1)
    ask(engine, INSTRUCTIONS, "Passage: The tower was built by Alice Smith. Question: who built it?", "Alice Smith")
    ask(engine, "Reply with one word.", "Is the sky blue?", "yes")  # another predictor: the context moves on
    llama = the_context(engine)
    decoded = llama._ctx.decoded
    third = ask(engine, INSTRUCTIONS, "Passage: The door was painted by Carol Brown. Question: who painted it?", "x")
    a, b, a2 = llama.prompts
    assert lcp(b, a2) < lcp(a, a2)  # the context's own tokens share less with the prompt than the saved state
    from_state, from_context = kept(lcp(a, a2), len(a), len(a2)), kept(lcp(a, b), len(a), len(b))
    assert from_state > 0
    stats = engine.stats.as_dict()
    assert (stats["prefix_hits_state_cache"], stats["prefix_tokens_state_cache"]) == (1, from_state)
    # the second call kept the chat template's opening of the first, as far as its full batches go
    hits_context = int(from_context > 0)
    assert (stats["prefix_hits_context"], stats["prefix_tokens_context"]) == (hits_context, from_context)
    assert stats["prompt_tokens_read"] == len(a) + len(b) - from_context + len(a2) - from_state
    assert stats["prompt_tokens"] == stats["prompt_tokens_read"] + from_context + from_state
    assert llama._ctx.decoded - decoded == len(a2) - from_state + third.usage.output_tokens
    assert decoded_as_cold(llama._ctx.batches, len(a2))
    # The logits buffer is one row (engine.drop_logits_buffer), so are the saved states' copies, and restoring
    # a prefix longer than the stand-in's batch of 32 tokens wrote no more.
    assert llama.scores.shape == (1, N_VOCAB) and from_state > llama.n_batch
    assert all(state.scores.shape[0] <= 1 for state in llama.cache.cache_state.values())


def test_a_state_saved_after_a_reply_cut_by_max_tokens_is_counted_as_it_holds(world):
    """Its key ends with the last sampled token, which the state never decoded: the count is what it held,
    to the last full batch."""
    engine = LlamaCppEngine("qwen2.5-0.5b", n_ctx=512, n_threads=1)
    user = "Passage: The tower was built by Alice Smith. Question: who built it?"
    first = ask(engine, INSTRUCTIONS, user, "Alice Smith built it long ago", max_tokens=3)
    assert first.finish_reason == "length"
    ask(engine, "Reply with one word.", "Is the sky blue?", "yes")
    llama = the_context(engine)
    # the first prompt again: its saved state holds the whole prompt; generate replays its last token, and
    # the part of the prompt past its last full batch is read again with it
    third = ask(engine, INSTRUCTIONS, user, "Alice")
    a, b, a2 = llama.prompts
    assert a2 == a and third.usage.input_tokens == len(a)
    stats = engine.stats.as_dict()
    from_state = kept(len(a) - 1, len(a), len(a))
    assert (stats["prefix_hits_state_cache"], stats["prefix_tokens_state_cache"]) == (1, from_state)
    assert stats["prompt_tokens"] == stats["prompt_tokens_read"] + kept(lcp(a, b), len(a), len(b)) + from_state


def test_the_same_prompt_again_reads_its_last_token_only(world):
    """generate replays one token when the whole prompt is held, to have logits to sample from; the tokens
    since the prompt's last full batch go with it."""
    engine = LlamaCppEngine("qwen2.5-0.5b", n_ctx=512, n_threads=1)
    ask(engine, INSTRUCTIONS, "Question: who built the tower?", "Alice")
    ask(engine, INSTRUCTIONS, "Question: who built the tower?", "Alice")
    stats = engine.stats.as_dict()
    sent = stats["prompt_tokens"] // 2
    reused = kept(sent - 1, sent, sent)
    assert sent - reused < 32
    assert stats["prompt_tokens_read"] == sent + sent - reused
    assert (stats["prefix_hits_context"], stats["prefix_tokens_context"]) == (1, reused)


def test_json_schema_and_choice_logprobs_count_the_rescored_tokens_apart(world):
    engine = LlamaCppEngine("qwen2.5-1.5b", n_ctx=512, n_threads=1)
    reply = '{"reason": "the passage says so", "verdict": "yes"}'
    out = ask(engine, INSTRUCTIONS, "Claim: the tower is old. Passage: the tower is old.", reply, VERDICT, logprobs=5)
    assert out.logprobs[0].token == "yes"
    llama = the_context(engine)
    [prompt] = llama.prompts
    stats = engine.stats.as_dict()
    assert stats["prompt_tokens_read"] == stats["prompt_tokens"] == len(prompt)  # a cold context reads it all
    assert stats["prefix_hits_context"] == stats["prefix_hits_state_cache"] == 0
    # choice_logprobs evaluates the reply up to the verdict's opening quote; all but its last token are held
    assert stats["logprob_tokens_read"] == 1
    ask(engine, INSTRUCTIONS, "Claim: the door is red. Passage: the door is blue.", reply.replace("yes", "no"), VERDICT)
    second = llama.prompts[1]
    stats = engine.stats.as_dict()
    # rescoring wrote past the prompt only: the first prompt's full batches are still reused
    reused = kept(lcp(prompt, second), len(prompt), len(second))
    assert stats["prompt_tokens_read"] == len(prompt) + len(second) - reused
    assert stats["logprob_tokens_read"] == 1  # no logprobs asked the second time


def test_a_base_models_completion_prompts_are_counted_too(world):
    engine = LlamaCppEngine("gemma3-270m", n_ctx=512, n_threads=1)
    passage = "Passage: The towers of Portvale and Kelmar were built by Alice Smith and Carol Brown in 1889. "
    ask(engine, None, passage + "Question: who built the tower of Portvale by the sea?", "Alice", VERDICT)
    ask(engine, None, passage + "Question: who built the tower of Kelmar, a town on the hill?", "Carol", VERDICT)
    one, two = the_context(engine).prompts
    stats = engine.stats.as_dict()
    assert stats["prompt_tokens_read"] == len(one) + len(two) - kept(lcp(one, two), len(one), len(two))
    assert kept(lcp(one, two), len(one), len(two)) > 0


def test_stats_merge_the_counts_of_another_process():
    stats = EngineStats()
    stats.add(100, 5, 1.0, False, PromptCount(100, 100, None))
    stats.add(120, 5, 1.0, False, PromptCount(120, 30, CONTEXT), logprob_tokens=2)
    worker = EngineStats()
    worker.add(110, 4, 1.0, True, PromptCount(110, 10, STATE_CACHE))
    stats.merge(worker.as_dict())
    out = stats.as_dict()
    assert (out["calls"], out["prompt_tokens"], out["truncated"]) == (3, 330, 1)
    assert out["prompt_tokens_read"] == 140 and out["logprob_tokens_read"] == 2
    assert (out["prefix_hits_context"], out["prefix_tokens_context"]) == (1, 90)
    assert (out["prefix_hits_state_cache"], out["prefix_tokens_state_cache"]) == (1, 100)
    assert out["prompt_read_share"] == pytest.approx(140 / 330, abs=1e-4)
    assert list(out)[:5] == ["calls", "prompt_tokens", "completion_tokens", "seconds", "truncated"]


def test_reads_some_call_did_not_count_are_left_out_not_zero():
    stats = EngineStats()
    stats.add(100, 5, 1.0, False, PromptCount(100, 40, CONTEXT))
    assert stats.as_dict()["prompt_read_share"] == 0.4
    stats.merge({"calls": 2, "prompt_tokens": 50, "completion_tokens": 3, "seconds": 1.0, "truncated": 0})
    out = stats.as_dict()
    assert out["calls"] == 3 and out["prompt_tokens"] == 150
    assert "prompt_tokens_read" not in out and "prompt_read_share" not in out
    uncounted = EngineStats()
    uncounted.add(10, 3, 0.1, False)  # a context that does not count (a test's stand-in without the mixin)
    assert "prompt_tokens_read" not in uncounted.as_dict()


class _Local:
    """A ResolvedLM's usage as a local engine reports it."""

    def __init__(self, name):
        self.config, self.stats = SimpleNamespace(name=name), EngineStats()

    def usage(self):
        return self.stats.as_dict()


class _Provider:
    """... and as a provider LM's meter does: prompt tokens sent, nothing read."""

    def __init__(self):
        self.config, self.sent = SimpleNamespace(name="openai/gpt-4o-mini"), 0

    def usage(self):
        return {"calls": 1, "prompt_tokens": self.sent}


def test_a_bench_stage_reports_the_share_of_prompt_tokens_read_per_model(tmp_path, monkeypatch):
    import contextlib

    import mlflow

    from experiments.bench.stages import StageRunner
    from experiments.bench.summary import stage_rows
    from experiments.run_store import RunStore

    monkeypatch.setattr(mlflow, "log_metrics", lambda *a, **k: None)
    monkeypatch.setattr("experiments.tracking.nested_run", lambda *a, **k: contextlib.nullcontext())
    target, judge, provider = _Local("qwen2.5-0.5b"), _Local("qwen2.5-1.5b"), _Provider()
    target.stats.add(100, 3, 1.0, False, PromptCount(100, 100, None))  # before the stage: not the stage's
    lms = {"target/qwen2.5-0.5b": target, "judge": judge, "target/openai/gpt-4o-mini": provider}
    runner = StageRunner(RunStore("bench-x", root=tmp_path), lms, "bench-x")

    def work(store):
        target.stats.add(200, 3, 1.0, False, PromptCount(200, 50, CONTEXT))
        judge.stats.add(100, 3, 1.0, False, PromptCount(100, 25, STATE_CACHE))
        provider.sent = 1000  # sent to a provider: neither read nor unread as far as llama.cpp goes
        return {"items": 1}

    metrics = runner.run("evaluate.x", "inputs", work)
    assert metrics["lm.prompt_read_share"] == 0.25  # (50 + 25) / (200 + 100)
    assert metrics["lm.target/qwen2.5-0.5b.prompt_read_share"] == 0.25
    assert metrics["lm.judge.prompt_read_share"] == 0.25
    assert "lm.target/openai/gpt-4o-mini.prompt_read_share" not in metrics
    assert metrics["lm.prompt_tokens"] == 1300 and metrics["lm.prompt_tokens_read"] == 75
    [row] = stage_rows({"evaluate.x": metrics}, {"evaluate.x": True})
    assert row["prompt_read_share"] == 0.25
    [old] = stage_rows({"seeds.p": {"lm.calls": 3.0}}, {"seeds.p": False})  # a ledger written before the count
    assert old["prompt_read_share"] is None


def test_a_runs_metrics_give_each_local_models_share():
    from experiments.lm.usage import prompt_read_shares

    metrics = {"lm.pivot.prompt_read_share": 0.31, "lm.target/qwen2.5-0.5b.prompt_read_share": 0.5, "lm.pivot.calls": 9}
    assert prompt_read_shares(metrics) == {"pivot": 0.31, "target/qwen2.5-0.5b": 0.5}
