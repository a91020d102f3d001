"""A run warns before it sends prompts longer than a model's known context: a local model's n_ctx, a provider
model's window from LiteLLM's offline model map."""

import json
import logging

import dspy
import yaml

from experiments.lm.context_limits import context_length, warn_long_prompts
from experiments.lm.registry import ResolvedLM
from experiments.lm.settings import LMConfig


def _lm(name: str, local: bool = False, **settings) -> ResolvedLM:
    return ResolvedLM("pivot", LMConfig(name=name, **settings), None, object() if local else None)


def _case(rid: str, chars: int) -> dspy.Example:
    return dspy.Example(id=rid, question="When?", context="x" * chars, answers=["1889"])


def test_known_context_lengths():
    assert context_length(_lm("qwen2.5-0.5b", local=True, n_ctx=4096)) == 4096
    assert context_length(_lm("openai/gpt-4o-mini")) == 128_000  # LiteLLM's map, read offline
    assert context_length(_lm("hosted_vllm/Qwen/Qwen2.5-7B-Instruct")) is None  # a server's model: not mapped


def test_one_warning_per_model_that_some_rows_cannot_fit():
    cases = [_case("short", 1_000), _case("long", 200_000), _case("longest", 600_000)]
    lms = [
        ("pivot", _lm("qwen2.5-0.5b", local=True, n_ctx=8192)),
        ("target/openai/gpt-4o-mini", _lm("openai/gpt-4o-mini")),
        ("judge", _lm("hosted_vllm/Qwen/Qwen2.5-7B-Instruct")),
    ]
    local, provider = warn_long_prompts(cases, lms)
    assert local.startswith(
        "qwen2.5-0.5b (pivot): 2 of 3 cases will not fit its context of 8,192 tokens (128 kept for the reply): the "
        "longest, 'longest', is about 150,001 tokens (600,005 characters)"
    )
    assert local.endswith("or raise its n_ctx")
    assert provider.startswith("openai/gpt-4o-mini (target/openai/gpt-4o-mini): 1 of 3 cases will not fit")
    assert warn_long_prompts([_case("short", 1_000)], lms) == []


def test_a_run_warns_before_its_first_case(isolated, monkeypatch, caplog):
    from experiments import runner
    from experiments.config_loader import load_config
    from tests.fakes import scripted_pivot

    data = isolated / "long.jsonl"
    row = {"id": "big", "question": "When?", "context": "Built in 1889. " + "x" * 200_000, "answers": ["1889"]}
    data.write_text(json.dumps(row) + "\n")

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        resolved = scripted_pivot(examples, {}, {"big": "1889"})
        return {"pivot": ResolvedLM("pivot", LMConfig(name="openai/gpt-3.5-turbo"), resolved.lm, None)}

    monkeypatch.setattr(runner, "build_lms", build_lms)
    path = isolated / "long.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "long",
                "task": "seed_selection",
                "data": {"source": str(data), "reeval_filters": False},
                "models": {"pivot": {"name": "qwen2.5-0.5b"}},
            }
        )
    )
    with caplog.at_level(logging.WARNING, logger="experiments.lm.context_limits"):
        runner.run_experiment(load_config(path), progress=False)
    assert any("openai/gpt-3.5-turbo (pivot): 1 of 1 cases will not fit" in r.message for r in caplog.records)
