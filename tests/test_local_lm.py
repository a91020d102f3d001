"""A few real calls to a local GGUF model through llama.cpp (marked: `-m local_lm`)."""

import dspy
import pytest

from experiments.config import LMConfig
from experiments.lm.registry import build_lm
from programs.seed_selection import SeedSelection

pytestmark = pytest.mark.local_lm

CONTEXT = "The Eiffel Tower was completed in 1889 in Paris. It was designed by the company of Gustave Eiffel."


def test_structured_answers_parse_and_greedy_is_repeatable():
    resolved = build_lm(LMConfig(name="qwen2.5-0.5b", max_tokens=32, cache=False), "pivot")
    program = SeedSelection()
    with dspy.context(lm=resolved.lm, adapter=resolved.adapter()):
        first = program.open_book(question="In which year was the Eiffel Tower completed?", context=CONTEXT)
        again = program.open_book(question="In which year was the Eiffel Tower completed?", context=CONTEXT)
    assert "1889" in first.answer
    assert first.answer == again.answer
    assert resolved.usage()["calls"] == 2 and resolved.usage()["truncated"] == 0


def test_base_model_completion_path_returns_schema_valid_json():
    resolved = build_lm(LMConfig(name="gemma3-270m", max_tokens=24, cache=False), "target")
    with dspy.context(lm=resolved.lm, adapter=resolved.adapter()):
        out = dspy.Predict("context, question -> answer")(question="Where is the Eiffel Tower?", context=CONTEXT)
    assert isinstance(out.answer, str) and out.answer.strip()


def test_verdict_probability_comes_from_the_model_and_agrees_with_its_verdict():
    from programs.judge import CaseJudge

    resolved = build_lm(LMConfig(name="qwen2.5-0.5b", max_tokens=64, cache=False), "judge")
    judge = CaseJudge(collect=("reasoned",))  # reasoned verdicts, with their probabilities
    with dspy.context(lm=resolved.lm, adapter=resolved.adapter()):
        right = judge(question="In which year was the Eiffel Tower completed?", context=CONTEXT, expected_answer="1889")
    p = right.signals["r_support"]
    assert 0.0 < p < 1.0  # read off the logits, not the 0/1 fallback
    assert (p >= 0.5) == right.if_ok


def test_two_contexts_of_a_model_share_its_weights_and_reply_as_one_alone():
    from experiments.lm import engine
    from experiments.lm.shared_weights import loaded_models

    prompt = "Question: In which year was the Eiffel Tower completed? Answer:"
    path = str(engine.model_path("qwen2.5-0.5b"))
    held = loaded_models().get(path, 0)  # contexts earlier tests' pools keep open
    alone = engine.new_llama("qwen2.5-0.5b", 2048, 1, None)
    expected = alone.create_completion(prompt, max_tokens=8, temperature=0)["choices"][0]["text"]
    second = engine.new_llama("qwen2.5-0.5b", 2048, 1, None)
    assert loaded_models()[path] == held + 2 and alone.model == second.model  # one llama_model for both contexts
    assert second.create_completion(prompt, max_tokens=8, temperature=0)["choices"][0]["text"] == expected
    alone.close()
    assert loaded_models()[path] == held + 1
    assert second.create_completion(prompt, max_tokens=8, temperature=0)["choices"][0]["text"] == expected
    second.close()
    assert loaded_models().get(path, 0) == held


def test_a_prompt_gets_a_cold_contexts_logits_whatever_the_context_decoded_before():
    """experiments/lm/aligned_prefixes.py: prefixes reused from a context's previous prompts, of lengths
    off the grid, and a prompt longer than a batch, must give the logits of a cold decode bit for bit."""
    import numpy as np

    from experiments.lm import engine

    passage = "Passage: The Eiffel Tower was completed in 1889 in Paris by the company of Gustave Eiffel. "

    def logits_after(llama, text: str):
        generation = llama.generate(llama.tokenize(text.encode()), top_k=1, temp=0.0)
        next(generation)  # decodes the prompt and samples one token
        generation.close()
        return np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)).copy()

    short = passage * 3 + "Question: when was it completed? Answer:"
    long = passage * 24 + "Question: who built it? Answer:"
    cold = engine.new_llama("qwen2.5-0.5b", 2048, 1, None)
    expected = {prompt: logits_after(cold, prompt) for prompt in (short, long)}
    assert len(cold.tokenize(long.encode())) > cold.n_batch
    warm = engine.new_llama("qwen2.5-0.5b", 2048, 1, None)
    histories = [
        (passage * 3 + "Question: who built it?", short),
        (passage[:150], short),
        (passage * 3 + "Question: when was", short),
        (passage * 23 + "Question:", long),
    ]
    for before, prompt in histories:
        logits_after(warm, before)
        assert np.array_equal(logits_after(warm, prompt), expected[prompt])
    cold.close()
    warm.close()


def test_token_scorer_reuses_prefixes_without_changing_a_probability():
    from experiments.lm.token_scorer import LlamaTokenScorer
    from metrics.plausibility import passage_signals

    scorer = LlamaTokenScorer("qwen2.5-0.5b", n_threads=2, n_ctx=256)
    text = f"Passage: {CONTEXT}\nQuestion: when was it completed?\nAnswer: 1889"
    cold = scorer(text)
    scorer("Question: unrelated?\nAnswer: no")
    scorer(text.replace("1889", "1925"))
    warm = scorer(text)  # the longest shared prefix comes from the call before
    assert "".join(text[t.start : t.end] for t in cold) == text[cold[0].start :]
    assert [round(t.logprob, 3) for t in warm] == [round(t.logprob, 3) for t in cold]
    # The passage states 1889: the model reads it there, and a swap to 1925 leaves no pull towards 1889.
    swapped = passage_signals(scorer, "when was it completed", CONTEXT, CONTEXT.replace("1889", "1925"), "1889", "1925")
    kept = passage_signals(scorer, "when was it completed", CONTEXT, CONTEXT, "1889", "1925")
    assert swapped["old_pmi"] < kept["old_pmi"] and swapped["new_support"] > kept["new_support"]
