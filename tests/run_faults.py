"""Shared by the tests of a run's faults (two writers, edited data, full disks, signals): a seed-selection run
on a few NQ seeds, answered by a scripted pivot, in this process or in a child process of its own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CASES = 6

# The CLI in a child process, its pivot scripted and slowed down: long enough for a second invocation or a
# signal to arrive while it runs.
CHILD = textwrap.dedent("""
    import sys, time
    from experiments import runner
    from experiments.cli import app
    from tests.fakes import scripted_pivot

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        resolved = scripted_pivot(examples, {}, {e.id: e.answers[0] for e in examples})
        answer = resolved.lm.forward
        def forward(*args, **kwargs):
            time.sleep(float(sys.argv[2]))
            return answer(*args, **kwargs)
        resolved.lm.forward = forward
        return {"pivot": resolved}

    runner.build_lms = build_lms
    app(["run", sys.argv[1], "--log-level", "WARNING"])
""")


def seed_config(folder: Path, source: str = "nq", name: str = "faults") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": name,
                "task": "seed_selection",
                "data": {"source": source, "limit": CASES},
                "models": {"pivot": {"name": "qwen2.5-0.5b"}},
            }
        )
    )
    return path


def scripted_lms(monkeypatch) -> None:
    """This process's runs answered by the scripted pivot (every open-book answer right)."""
    from experiments import runner
    from tests.fakes import scripted_pivot

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        return {"pivot": scripted_pivot(examples, {}, {e.id: e.answers[0] for e in examples})}

    monkeypatch.setattr(runner, "build_lms", build_lms)


def start_child(config: Path, delay: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(config), str(delay)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_cases(child: subprocess.Popen, cases: Path, at_least: int) -> None:
    # A wait, not a speed check: generous, since a machine shared with a long LM job starves the child.
    deadline = time.time() + 600
    while not (cases.exists() and len(cases.read_bytes().splitlines()) >= at_least):
        if child.poll() is not None:
            pytest.fail(f"the child ended before writing {at_least} cases: {child.stderr.read()}")
        if time.time() > deadline:
            child.kill()
            pytest.fail(f"the child wrote fewer than {at_least} cases in 600 s")
        time.sleep(0.05)


def assert_each_case_once(cases: Path, total: int = CASES) -> list[str]:
    ids = [json.loads(line)["id"] for line in cases.read_text(encoding="utf-8").splitlines()]
    assert len(ids) == total, ids
    assert max(Counter(ids).values()) == 1, Counter(ids).most_common(3)
    return ids


def only_line(result) -> str:
    """The one line a refused command prints (exit 2, no traceback), besides the progress bar of the cases
    done before it."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "╭" not in result.output, result.output
    lines = [line for line in result.stderr.strip().splitlines() if not re.search(r"\d+%\|", line)]
    assert len(lines) == 1, result.stderr
    return lines[0]
