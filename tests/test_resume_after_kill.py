"""A run killed with SIGKILL mid-way and resumed finishes with every case exactly once."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from experiments import runner
from experiments.config_loader import load_config
from experiments.run_store import RunStore
from tests.fakes import scripted_pivot

CHILD = textwrap.dedent("""
    import sys, time
    from experiments import runner
    from experiments.config_loader import load_config
    from tests.fakes import scripted_pivot

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        resolved = scripted_pivot(examples, {}, {e.id: e.answers[0] for e in examples})
        slow = resolved.lm.forward
        def forward(*args, **kwargs):
            time.sleep(0.15)  # slow enough to be killed between cases
            return slow(*args, **kwargs)
        resolved.lm.forward = forward
        return {"pivot": resolved}

    runner.build_lms = build_lms
    runner.run_experiment(load_config(sys.argv[1]), progress=False)
""")


def test_sigkill_then_resume_runs_each_case_once(isolated, monkeypatch):
    config_path = isolated / "kill.yaml"
    config_path.write_text(
        yaml.safe_dump(
            {
                "name": "kill",
                "task": "seed_selection",
                "data": {"source": "nq", "limit": 12},
                "models": {"pivot": {"name": "qwen2.5-0.5b"}},
            }
        )
    )
    config = load_config(config_path)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    root = Path(__file__).resolve().parents[1]
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(config_path)], cwd=root, env={**os.environ, "PYTHONPATH": str(root)}
    )
    # A wait, not a speed check: generous, since a machine shared with a long LM job starves the child.
    deadline = time.time() + 600
    while not (store.cases_path.exists() and len(store.cases_path.read_text().splitlines()) >= 4):
        assert child.poll() is None, "child finished or died before it could be killed"
        if time.time() > deadline:
            child.kill()
            pytest.fail("the child wrote fewer than 4 cases in 600 s")
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    killed_at = len(store.records())
    assert 4 <= killed_at < 12

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        return {"pivot": scripted_pivot(examples, {}, {e.id: e.answers[0] for e in examples})}

    monkeypatch.setattr(runner, "build_lms", build_lms)
    result = runner.run_experiment(config, progress=False)
    assert result.new_cases == 12 - killed_at
    lines = [yaml.safe_load(line)["id"] for line in store.cases_path.read_text().splitlines()]
    assert Counter(lines).most_common(1)[0][1] == 1  # no case written twice
    assert len(lines) == 12
    assert all(r["open_correct"] for r in result.records)
