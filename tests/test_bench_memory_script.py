"""benchmarks/bench_memory.py's counting, on a stand-in with llama-cpp-python's shape (no model is loaded)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("bench_memory", ROOT / "benchmarks" / "bench_memory.py")
bench_memory = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_memory)


class Context:
    """create_completion → generate: the prompt is evaluated past the prefix the KV state already holds,
    then each reply token is sampled and evaluated."""

    def __init__(self):
        self.held: list[str] = []

    def eval(self, tokens):
        self.held += list(tokens)

    def sample(self):
        return "x"

    def create_completion(self, prompt: str, max_tokens: int = 2):
        tokens = prompt.split()
        common = 0
        for a, b in zip(self.held, tokens, strict=False):
            if a != b:
                break
            common += 1
        self.held = self.held[:common]
        self.eval(tokens[common:])
        for _ in range(max_tokens):
            self.eval([self.sample()])
        return {"usage": {"prompt_tokens": len(tokens), "completion_tokens": max_tokens}}


def test_prompt_tokens_read_are_those_past_the_kept_prefix():
    reads = bench_memory.PromptReads()
    context = reads.wrap(Context(), "qwen2.5-0.5b")
    reads.stage = "evaluate.qwen2.5-0.5b"
    context.create_completion("sys passage q1 open", max_tokens=3)
    context.create_completion("sys passage q1 opinion")  # the previous call's first three tokens are kept
    reads.stage = "seeds.qwen2.5-1.5b"
    context.create_completion("other prompt")
    assert [(c["sent"], c["read"]) for c in reads.calls] == [(4, 4), (4, 1), (2, 2)]
    summary = bench_memory.token_summary(reads.calls)
    assert summary["target_answers"] == {
        "calls": 2,
        "sent": 8,
        "read": 5,
        "sent_per_call": 4.0,
        "read_per_call": 2.5,
        "read_share": 0.625,
    }
    assert summary["evaluate|qwen2.5-0.5b"]["calls"] == 2 and summary["seeds|qwen2.5-0.5b"]["read"] == 2
    assert summary["all"]["calls"] == 3
    kinds = ["evaluate", "conflict.generate.answer_swap", "generate.unanswerable", "knowledge", "calibration"]
    stages = [
        "evaluate.qwen2.5-0.5b",
        "conflict.generate.answer_swap.qwen2.5-1.5b",
        "generate.unanswerable.qwen2.5-1.5b",
        "knowledge.gemma3-270m",
        "calibration",
    ]
    assert [bench_memory.stage_kind(s) for s in stages] == kinds


def test_the_process_tree_holds_this_process_and_its_memory_is_read():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert {os.getpid(), child.pid} <= bench_memory.tree_pids(os.getpid())
        assert os.getpid() not in bench_memory.tree_pids(child.pid)
    finally:
        child.kill()
        child.wait()
    assert bench_memory.rss_mb() > 0
    # PSS shares each shared page among its mappers, so it never exceeds RSS.
    assert 0 < bench_memory.pss_mb() <= bench_memory.rss_mb() + 1
