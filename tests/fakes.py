"""Test doubles: a scripted pivot built on DSPy's DummyLM, and a fake llama.cpp model."""

from __future__ import annotations

import json

import dspy

from experiments.config import LMConfig
from experiments.lm.registry import ResolvedLM


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
        return {
            "id": "fake",
            "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3},
        }


class ConcurrencyProbe:
    """Counts calls in flight, overall and per fake context, to check what a pool lets through."""

    def __init__(self):
        import threading

        self.lock = threading.Lock()
        self.active = 0
        self.peak = 0
        self.overlaps = 0  # a context entered while another call was inside it

    def enter(self, context) -> None:
        with self.lock:
            if context.busy:
                self.overlaps += 1
            context.busy = True
            self.active += 1
            self.peak = max(self.peak, self.active)

    def leave(self, context) -> None:
        with self.lock:
            context.busy = False
            self.active -= 1


class PromptFakeLlama:
    """A llama.cpp context whose reply is a pure function of the prompt (like greedy decoding), and
    which takes a little time, so that a pool's parallel calls overlap."""

    def __init__(self, probe: ConcurrencyProbe, delay: float = 0.02):
        self.probe = probe
        self.delay = delay
        self.busy = False
        self.calls = 0
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def create_chat_completion(self, messages, **kwargs):
        import hashlib
        import time

        self.probe.enter(self)
        try:
            time.sleep(self.delay)
            self.calls += 1
            prompt = json.dumps(messages, sort_keys=True)
            answer = ["Paris", "1998", "no idea", "the Beatles"][hashlib.sha256(prompt.encode()).digest()[0] % 4]
            return {
                "id": "fake",
                "choices": [{"message": {"content": json.dumps({"answer": answer})}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 3},
            }
        finally:
            self.probe.leave(self)
