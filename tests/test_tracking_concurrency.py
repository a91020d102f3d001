"""Runs started at the same moment on a fresh sqlite store (two configs queued side by side, as the
README suggests for local-model runs) must all get the store and the experiment."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

CHILD = """
import os, sys, time
from pathlib import Path
go = Path(sys.argv[1])
while not go.exists():
    time.sleep(0.01)
from experiments import tracking
print(tracking.ensure_experiment("reeval/same-experiment"))
"""


def test_processes_starting_together_share_one_store_and_experiment(tmp_path: Path):
    go = tmp_path / "go"
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}"}
    (tmp_path / "mlruns").mkdir()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(go)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).parents[1],
        )
        for _ in range(4)
    ]
    time.sleep(6)  # every child has imported what it needs and is waiting at the line
    go.touch()
    results = [child.communicate(timeout=120) for child in children]
    failures = [err[-600:] for child, (_, err) in zip(children, results, strict=True) if child.returncode]
    assert not failures, failures
    ids = {out.strip().splitlines()[-1] for out, _ in results}
    assert len(ids) == 1, ids  # one experiment, not one per process
