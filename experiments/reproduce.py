"""Rebuild a run from what MLflow holds and run it again with the LM cache off.

Inputs are checked first and a changed one refuses the rerun, naming it: the data file's
content hash, each local model's file hash, and the code commit. Then the run is redone under
a new run id and compared record by record and metric by metric with the recorded one: exactly for
greedy decoding; for sampled decoding, each rate and count must fall inside the 95% Wilson
interval of the recorded value (see `compare_metrics`).
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from experiments.case_sets import is_run_source
from experiments.config import ExperimentConfig
from experiments.data.files import content_sha256
from experiments.data.registry import resolve_dataset
from experiments.launch import run_experiment
from experiments.lm import engine
from experiments.lm.roster import ROSTER
from experiments.run_store import RunNotFound
from experiments.runner import load_data
from experiments.tracking import find_runs, git_state
from metrics.intervals import wilson_interval

logger = logging.getLogger(__name__)

# Timing and bookkeeping fields differ between any two runs by design (a reproduction runs with the LM
# cache off, so the calls the cache answered differ too, and with them what the models spent: the `lm.` metrics
# and the judge's on its calibration controls).
VOLATILE_FIELDS = {"seconds", "attempt", "batch_size", "error", "pivot_seconds", "pivot_cached_calls"}
VOLATILE_METRICS = (
    "wall_seconds",
    "cpu_seconds",
    "seconds_per_case",
    ".seconds",
    "run.resumed_cases",
    "cached_",
    "judge_calibration.usage.",
)


class InputChanged(RuntimeError):
    """An input of the recorded run differs now; the rerun would not reproduce it."""


@dataclass
class Reproduction:
    recorded_run: str
    new_run_id: str
    sampled: bool
    record_mismatches: list[str] = field(default_factory=list)
    metric_mismatches: list[str] = field(default_factory=list)
    records_compared: int = 0

    @property
    def matches(self) -> bool:
        return not self.record_mismatches and not self.metric_mismatches


def _recorded(mlflow_run) -> tuple[dict, dict, list[dict]]:
    import mlflow

    run_id = mlflow_run.info.run_id
    config = mlflow.artifacts.load_dict(f"runs:/{run_id}/config.json")
    models = mlflow.artifacts.load_dict(f"runs:/{run_id}/models.json")
    with tempfile.TemporaryDirectory() as tmp:
        path = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path="cases/cases.jsonl", dst_path=tmp)
        cases = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return config, models, cases


def check_inputs(mlflow_run, config, models: dict, allow_code_change: bool = False) -> None:
    tags = mlflow_run.data.tags
    cfg = ExperimentConfig.model_validate(config)
    if is_run_source(cfg.data.source):
        data = load_data(cfg)
        path, digest = data.path, data.sha256
    else:  # hashed before parsing: an edit that also breaks a row is still reported as a changed input
        path = resolve_dataset(cfg.data.source).path
        digest = content_sha256(path)
    recorded = tags.get(f"data.{cfg.data.source}.sha256")
    if recorded and recorded != digest:
        raise InputChanged(
            f"data changed: {path} has sha256 {digest[:12]}…, the run used {recorded[:12]}…; refusing to reproduce"
        )
    for label, identity in models.items():
        if identity.get("kind") == "local":
            pinned = ROSTER[identity["name"]].sha256
            if identity.get("file_sha256") != pinned:
                raise InputChanged(
                    f"model changed: {label} {identity['name']} was {identity.get('file_sha256')}, now {pinned}"
                )
            recorded_build, build = identity.get("llama_cpp_features"), engine.build_features()
            if recorded_build and recorded_build != build:
                logger.warning(
                    "%s: the run's llama.cpp build used %s, this one uses %s; greedy tokens can differ "
                    "where their kernels round differently (calls in the cache are replayed as made)",
                    label,
                    recorded_build,
                    build,
                )
    commit, now = tags.get("git.commit"), git_state()["git.commit"]
    if commit and commit != now:
        message = f"code changed: the run was made at commit {commit[:10]}, this checkout is {now[:10]}"
        if not allow_code_change:
            raise InputChanged(message + " (pass --allow-code-change to rerun anyway)")
        logger.warning(message)


def _comparable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in VOLATILE_FIELDS}


def compare(recorded: list[dict], fresh: list[dict], sampled: bool) -> tuple[list[str], int]:
    old = {r["id"]: _comparable(r) for r in recorded}
    new = {r["id"]: _comparable(r) for r in fresh}
    problems = [f"record {i}: missing in the rerun" for i in sorted(old.keys() - new.keys())]
    problems += [f"record {i}: new in the rerun" for i in sorted(new.keys() - old.keys())]
    if not sampled:  # sampled decoding is compared through the metrics only
        for case_id in sorted(old.keys() & new.keys()):
            changed = [
                k for k in old[case_id].keys() | new[case_id].keys() if old[case_id].get(k) != new[case_id].get(k)
            ]
            if changed:
                problems.append(f"record {case_id}: differs in {', '.join(sorted(changed))}")
    return problems, len(old.keys() & new.keys())


def _interval(value: float, n: int) -> tuple[float, float] | None:
    """The recorded value's 95% Wilson interval, on its own scale: a value in [0, 1] is a rate of n
    cases, a whole number up to n a count of them. Other metrics (means of unbounded scores) have no
    binomial interval and are not compared for sampled runs. n is every case of the run, which gives
    rates over a subset a narrower interval than their own n would: this errs towards "differs"."""
    if 0.0 <= value <= 1.0:
        scale = 1.0
    elif float(value).is_integer() and 0 <= value <= n:
        scale = float(n)
    else:
        return None
    low, high = wilson_interval(round(value / scale * n), n)
    return low * scale, high * scale


def compare_metrics(recorded: dict[str, float], fresh: dict[str, float], sampled: bool, n: int) -> list[str]:
    problems = []
    for key, value in sorted(recorded.items()):
        if any(v in key for v in VOLATILE_METRICS) or key.startswith("lm.") or key not in fresh:
            continue
        other = fresh[key]
        if math.isnan(value) or math.isnan(other):
            if not (math.isnan(value) and math.isnan(other)):
                problems.append(f"metric {key}: recorded {value:.6g}, rerun {other:.6g}")
            continue
        if not sampled:
            if value != other:
                problems.append(f"metric {key}: recorded {value:.6g}, rerun {other:.6g}")
            continue
        if key.startswith("rank."):
            continue  # a rank is no rate of cases; the accuracies it orders are compared
        interval = _interval(value, n)
        if interval is not None and not interval[0] - 1e-9 <= other <= interval[1] + 1e-9:
            problems.append(
                f"metric {key}: recorded {value:.6g} (95% interval {interval[0]:.4g}–{interval[1]:.4g} "
                f"over {n} cases), rerun {other:.6g}"
            )
    return problems


def reproduce(run_id: str, *, allow_code_change: bool = False, progress: bool = True) -> Reproduction:
    runs = [r for r in find_runs(run_id) if r.info.status == "FINISHED"]
    if not runs:
        raise RunNotFound(
            f"no finished MLflow run for {run_id!r}: give the reeval run id (or MLflow run id) of a run that finished"
        )
    mlflow_run = runs[0]
    config, models, recorded_cases = _recorded(mlflow_run)
    check_inputs(mlflow_run, config, models, allow_code_change)

    cfg = ExperimentConfig.model_validate(config)
    models = cfg.models
    lm_configs = [c for c in (models.pivot, models.judge, *models.pivots, *models.targets) if c is not None]
    for lm in lm_configs:
        lm.cache = False  # every call is made again
    sampled = any(lm.temperature > 0 for lm in lm_configs) or "sampled" in str(cfg.options.get("decodings", ""))
    result = run_experiment(cfg, fresh=True, progress=progress)
    case_problems, compared = compare(recorded_cases, result.records, sampled)
    metric_problems = compare_metrics(dict(mlflow_run.data.metrics), result.metrics, sampled, compared)
    return Reproduction(mlflow_run.info.run_id, result.run_id, sampled, case_problems, metric_problems, compared)
