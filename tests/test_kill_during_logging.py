"""A run killed while it logs to MLflow at its end, or while an artifact is half written, is
completed by the next invocation: one MLflow run, every metric once, whole artifacts, no case twice."""

import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import mlflow
import pytest
import yaml

from experiments import runner, tracking
from experiments.config_loader import load_config
from experiments.run_store import RunStore
from tests.fakes import scripted_pivot
from tests.shipped import nq_head

pytestmark = pytest.mark.timeout(600)  # a hang guard, far above what the tests take

# The child runs the config with a scripted pivot and dies (os._exit: no cleanup, no MLflow
# end_run) at the point named by argv[2].
CHILD = textwrap.dedent("""
    import os, sys
    import mlflow
    from mlflow.store.artifact.local_artifact_repo import LocalArtifactRepository
    from experiments import runner
    from experiments.config_loader import load_config
    from tests.fakes import scripted_pivot

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        return {"pivot": scripted_pivot(examples, {}, {e.id: e.answers[0] for e in examples})}

    runner.build_lms = build_lms
    where = sys.argv[2]
    if where == "metrics":  # half of the run's metrics reach MLflow, then the process dies
        real = mlflow.log_metrics
        def log_metrics(metrics, *args, **kwargs):
            if "wall_seconds" in metrics:
                half = dict(sorted(metrics.items())[: len(metrics) // 2])
                real(half, *args, **kwargs)
                os._exit(9)
            return real(metrics, *args, **kwargs)
        mlflow.log_metrics = log_metrics
    else:  # the cases artifact is half copied when the process dies
        real = LocalArtifactRepository.log_artifact
        def log_artifact(self, local_file, artifact_path=None):
            if local_file.endswith("cases.jsonl"):
                target = os.path.join(self.artifact_dir, artifact_path or "")
                os.makedirs(target, exist_ok=True)
                data = open(local_file, "rb").read()
                with open(os.path.join(target, "cases.jsonl"), "wb") as out:
                    out.write(data[: len(data) // 2])
                os._exit(9)
            return real(self, local_file, artifact_path)
        LocalArtifactRepository.log_artifact = log_artifact
    runner.run_experiment(load_config(sys.argv[1]), progress=False)
    sys.exit(3)  # not reached: the fault above ends the process
""")


@pytest.mark.parametrize("where", ["metrics", "artifact"])
def test_a_rerun_completes_logging_interrupted_by_a_kill(isolated, monkeypatch, where):
    config_path = isolated / "logkill.yaml"
    config_path.write_text(
        yaml.safe_dump(
            {
                "name": "logkill",
                "task": "seed_selection",
                "data": {"source": str(nq_head(isolated, 20)), "limit": 6},
                "models": {"pivot": {"name": "qwen2.5-0.5b"}},
            }
        )
    )
    config = load_config(config_path)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    root = Path(__file__).resolve().parents[1]
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(config_path), where],
        cwd=root,
        timeout=240,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
    )
    assert child.returncode == 9, child.stderr[-2000:]
    [killed] = tracking.find_runs(store.run_id)
    assert killed.info.status == "RUNNING"  # nobody ended it
    assert len(store.records()) == 6  # every case was checkpointed before the logging began

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        return {"pivot": scripted_pivot(examples, {}, {e.id: e.answers[0] for e in examples})}

    monkeypatch.setattr(runner, "build_lms", build_lms)
    result = runner.run_experiment(config, progress=False)
    assert result.new_cases == 0

    [run] = tracking.find_runs(store.run_id)  # the interrupted MLflow run, completed: not a second one
    assert run.info.run_id == killed.info.run_id == result.mlflow_run_id and run.info.status == "FINISHED"
    client = mlflow.MlflowClient()
    assert set(result.metrics) <= set(run.data.metrics)
    assert {key: len(client.get_metric_history(run.info.run_id, key)) for key in run.data.metrics} == dict.fromkeys(
        run.data.metrics, 1
    )  # no metric logged twice
    filters = {k for k in run.data.metrics if k.startswith("data.filter.")}  # logged before the cases ran
    assert set(run.data.metrics) == set(result.metrics) | filters
    children = mlflow.search_runs(
        filter_string=f"tags.mlflow.parentRunId = '{run.info.run_id}'",
        search_all_experiments=True,
        output_format="list",
    )
    assert [(c.data.tags["reeval.role"], c.info.status) for c in children] == [("pivot", "FINISHED")]

    lines = store.cases_path.read_text().splitlines()
    assert len(lines) == 6 and max(Counter(lines).values()) == 1
    logged_cases = Path(
        mlflow.artifacts.download_artifacts(
            run_id=run.info.run_id, artifact_path="cases/cases.jsonl", dst_path=str(isolated / "download")
        )
    )
    assert logged_cases.read_bytes() == store.cases_path.read_bytes()  # whole, not the half the kill left
    artifacts = {a.path for a in mlflow.artifacts.list_artifacts(run_id=run.info.run_id)}
    assert {"cases", "programs", "config.json", "models.json"} <= artifacts


def test_a_live_run_is_not_taken_over(isolated, monkeypatch):
    """A RUNNING run whose process is alive (here: this one) belongs to it: a second invocation opens its own."""
    config_path = isolated / "live.yaml"
    config_path.write_text(
        yaml.safe_dump(
            {
                "name": "live",
                "task": "seed_selection",
                "data": {"source": str(nq_head(isolated, 10)), "limit": 2},
                "models": {"pivot": {"name": "qwen2.5-0.5b"}},
            }
        )
    )
    config = load_config(config_path)
    run_id = RunStore.new_id(config.name, config.digest())
    tags = {tracking.RUN_ID_TAG: run_id, "reeval.task": config.task}
    with tracking.parent_run(f"reeval/{config.name}", run_id, tags) as live:
        mlflow.log_metric("partial", 1.0)
        pid_of_other = live.data.tags.get(tracking.PID_TAG)
        assert pid_of_other == str(os.getpid())
    mlflow.MlflowClient().update_run(live.info.run_id, status="RUNNING")  # as if still logging

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        return {"pivot": scripted_pivot(examples, {}, {e.id: e.answers[0] for e in examples})}

    monkeypatch.setattr(runner, "build_lms", build_lms)
    result = runner.run_experiment(config, progress=False)
    assert result.mlflow_run_id != live.info.run_id
    assert [r.info.run_id for r in tracking.find_runs(run_id)] == [result.mlflow_run_id, live.info.run_id]
