"""Test doubles: a scripted pivot built on DSPy's DummyLM, and a fake llama.cpp model."""

from __future__ import annotations

import json

import dspy

from experiments.config import LMConfig
from experiments.lm_registry import ResolvedLM


def scripted_pivot(examples, closed: dict[str, str], opened: dict[str, str]) -> ResolvedLM:
    """Answers keyed by text only the prompt of that call contains: the context for open-book."""
    answers = {}
    for example in examples:
        answers[example.context] = {"answer": opened.get(example.id, "no idea")}
    for example in examples:
        answers[example.question] = {"answer": closed.get(example.id, "no idea")}
    lm = dspy.utils.DummyLM(answers, adapter=dspy.JSONAdapter())
    return ResolvedLM("pivot", LMConfig(name="dummy/scripted"), lm, None)


class FakeLlama:
    """Records what llama.cpp would receive and replies from a script (a recorded transcript)."""

    def __init__(self, replies: list[str]):
        self.replies = list(replies)
        self.calls: list[dict] = []

    def create_chat_completion(self, messages, **kwargs):
        self.calls.append({"messages": messages, **kwargs})
        return self._reply()

    def create_completion(self, prompt, **kwargs):
        self.calls.append({"prompt": prompt, **kwargs})
        reply = self._reply()
        reply["choices"][0]["text"] = reply["choices"][0].pop("message")["content"]
        return reply

    def _reply(self) -> dict:
        text = self.replies.pop(0)
        if not isinstance(text, str):
            text = json.dumps(text)
        return {"id": "fake", "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 3}}
