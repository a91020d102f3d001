"""benchmarks/bench_memory.py's token summary (from stage metrics) and memory sampling; no model is loaded."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("bench_memory", ROOT / "benchmarks" / "bench_memory.py")
bench_memory = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_memory)


def test_tokens_sent_and_read_per_stage_kind_and_lm_come_from_the_stages_metrics():
    metrics = {
        "evaluate.qwen2.5-0.5b": {
            "lm.calls": 2.0,
            "lm.prompt_tokens_read": 5.0,  # the stage's total: not a label
            "lm.target/qwen2.5-0.5b.calls": 2.0,
            "lm.target/qwen2.5-0.5b.prompt_tokens": 8.0,
            "lm.target/qwen2.5-0.5b.prompt_tokens_read": 5.0,
        },
        "generate.unanswerable.qwen2.5-1.5b": {
            "lm.pivot/qwen2.5-1.5b.calls": 3.0,
            "lm.pivot/qwen2.5-1.5b.prompt_tokens": 30.0,
            "lm.pivot/qwen2.5-1.5b.prompt_tokens_read": 12.0,
            "lm.judge.calls": 1.0,
            "lm.judge.prompt_tokens": 10.0,
            "lm.judge.prompt_tokens_read": 10.0,
            "lm.openai/gpt-4o-mini.calls": 4.0,  # a provider: nothing read is known
            "lm.openai/gpt-4o-mini.prompt_tokens": 40.0,
        },
        "seeds.qwen2.5-1.5b": {},
    }
    summary = bench_memory.token_summary(metrics)
    assert summary["target_answers"] == {
        "calls": 2,
        "sent": 8,
        "read": 5,
        "sent_per_call": 4.0,
        "read_per_call": 2.5,
        "read_share": 0.625,
    }
    assert summary["target_answers|qwen2.5-0.5b"]["read"] == 5
    assert summary["generate.unanswerable|pivot/qwen2.5-1.5b"]["read_share"] == 0.4
    assert summary["generate.unanswerable|judge"]["calls"] == 1
    assert summary["all"]["calls"] == 6 and summary["all"]["sent"] == 48
    assert not any("gpt-4o-mini" in key for key in summary)
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


def test_accepted_cases_per_cpu_hour_per_generation_stage_that_ran():
    stages = [
        {"stage": "seeds.qwen2.5-1.5b", "ran": True, "cpu_seconds": 60.0},
        {"stage": "generate.answer_swap.qwen2.5-1.5b", "ran": True, "cpu_seconds": 90.0},
        {"stage": "generate.unanswerable.qwen2.5-1.5b", "ran": False, "cpu_seconds": 0.1},  # reused
        {"stage": "evaluate.qwen2.5-0.5b", "ran": True, "cpu_seconds": 100.0},
    ]
    metrics = {
        "seeds.qwen2.5-1.5b": {"items": 8},
        "generate.answer_swap.qwen2.5-1.5b": {"cases_accepted": 3},
        "generate.unanswerable.qwen2.5-1.5b": {"cases_accepted": 4},
        "evaluate.qwen2.5-0.5b": {"items": 20},
    }
    assert bench_memory.accepted_per_cpu_hour(stages, metrics) == {
        "generate.answer_swap.qwen2.5-1.5b": {"accepted": 3, "cpu_seconds": 90.0, "per_cpu_hour": 120.0}
    }
