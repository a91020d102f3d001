"""Sampled retries draw anew: each retry of a refused proposal or paragraph reaches llama.cpp with a seed of
its own (programs/retries.py). With one seed, a retry of an unchanged prompt returned its predecessor's reply
word for word, so a counterfactual paragraph's third try was a wasted call."""

import dspy
import pytest

from experiments.config import LMConfig
from experiments.lm import engine as llama_engine
from experiments.lm.registry import build_lm
from programs.answer_swap import AnswerSwap
from programs.faitheval import Counterfactual
from programs.retries import RETRY_TEMPERATURE, retry_config
from tests.fakes import FakeLlama


@pytest.fixture
def llama(monkeypatch):
    holder = {}

    def new_llama(name, n_ctx, n_threads, cache):
        return holder["model"]

    monkeypatch.setattr(llama_engine, "new_llama", new_llama)
    llama_engine.close_pools()
    yield holder
    llama_engine.close_pools()


def _pivot(seed):
    return build_lm(LMConfig(name="qwen2.5-1.5b", seed=seed, cache=False), "pivot")


def test_each_proposal_retry_samples_with_a_seed_of_its_own(llama):
    gold = {"answer_type": "year", "wrong_answer": "1890"}
    # the retries list answers of the type (programs/answer_swap.py, answer_swap/13)
    llama["model"] = model = FakeLlama([gold, {"answers": ["1890"]}, {"answers": ["1890", "1901"]}])
    pivot = _pivot(seed=7)
    with dspy.context(lm=pivot.lm, adapter=pivot.adapter()):
        out = AnswerSwap(max_attempts=3)(question="when was it written", context="Written in 1890 .", answers=["1890"])
    assert [p["problem"] for p in out.proposals] == ["proposal_is_gold", None]  # the retry's 1890 is no new proposal
    assert out.new_answer == "1901"
    assert [(c["temperature"], c["seed"]) for c in model.calls] == [
        (0.0, 7),  # the configured greedy call
        (RETRY_TEMPERATURE, 8),
        (RETRY_TEMPERATURE, 9),
    ]


def test_counterfactual_paragraph_retries_are_distinct_draws(llama):
    refused = {"paragraph": "Rain falls from the sky.", "justification": "j"}
    llama["model"] = model = FakeLlama([refused] * 3)
    pivot = _pivot(seed=0)
    with dspy.context(lm=pivot.lm, adapter=pivot.adapter()):
        out = Counterfactual(max_attempts=3)(
            question="What happens to dew?",
            options=["Rain falls from the sky.", "Water droplets disappear from the grass."],
            target_index=1,
        )
    assert out.rejection == "support_paragraph_failed"
    prompts = {str(c["messages"]) for c in model.calls}
    assert len(prompts) == 1  # the same prompt every time: only the seed makes a retry a new draw
    assert [c["seed"] for c in model.calls] == [0, 1, 2]


def test_an_lm_without_a_seed_gets_none():
    with dspy.context(lm=dspy.utils.DummyLM([{"a": "b"}])):
        assert retry_config(0) == {}
        assert retry_config(2) == {"temperature": RETRY_TEMPERATURE, "rollout_id": 2}
