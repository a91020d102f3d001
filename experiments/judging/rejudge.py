"""Judge a finished run again with other judge parameters, without generating anything again.

A better judge (a new calibration study, another method) should not cost a new generation run:
every case that passed the checks is judged again and appended to the run store as the seed's
next attempt, so an interrupted rejudge resumes where it stopped (a seed whose latest records
already carry these parameters is skipped) and the records it replaces stay in cases.jsonl. The
first verdict a case ever had is kept in `judge_before`.

A review sample drawn on the old verdicts stays what it was, a stratified sample on those verdicts:
sample.json is marked `strata_from: judge_before`, so validity weighs every case by the stratum it
was sampled from while scoring the new verdicts against the humans (a verdict is about the case's
text, not about the judge, so no review is lost).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from experiments import run_lock, task_registry, tracking
from experiments.judging.params import describe, judge_from, resolve_params
from experiments.lm import registry
from experiments.run_store import RunStore
from experiments.validation import judge_metrics, judge_record
from metrics.status import status_counts

logger = logging.getLogger(__name__)


class RejudgeError(ValueError):
    """A run that cannot be judged again; the message says why."""


@dataclass
class RejudgeResult:
    run_id: str
    params: dict[str, Any]
    judged: int
    skipped_seeds: int  # seeds with judged cases that these parameters had already judged
    before: dict[str, int]
    after: dict[str, int]
    sample_marked: str | None


def params_digest(params: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps({k: v for k, v in params.items() if k != "source"}, sort_keys=True).encode()
    ).hexdigest()[:12]


def _was_judged(record: dict) -> bool:
    return bool(record.get("judge")) and (
        record["status"] == "accepted" or record["status"].startswith(("rejected:judge", "error:judge"))
    )


def _statuses(records: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        if _was_judged(r):
            out[r["status"]] = out.get(r["status"], 0) + 1
    return out


def rejudge(run_id: str, spec: str = "auto", progress: bool = True) -> RejudgeResult:
    with run_lock.hold(RunStore(run_id).dir):  # it appends to the run's checkpoint: one writer at a time
        return _rejudge(run_id, spec, progress)


def _rejudge(run_id: str, spec: str, progress: bool) -> RejudgeResult:
    from tqdm import tqdm

    store = RunStore(run_id)
    config = store.experiment_config()
    rejudgeable = task_registry.names(lambda r: r.rejudgeable)  # judged on their own fields (see each registration)
    if config.task not in rejudgeable:
        raise RejudgeError(f"run {run_id}: task {config.task!r} cannot be judged again (only {', '.join(rejudgeable)})")
    if config.models.judge is None:
        raise RejudgeError(f"run {run_id}: its config has no models.judge; add one to judge it")
    judge_lm = registry.build_lm(config.models.judge, "judge")
    params = resolve_params(judge_lm, spec, config.task, config.validation.judge_method)
    digest = params_digest(params)
    judge = judge_from(params)
    records = store.records()
    before = _statuses(records)
    seeds: dict[str, list[dict]] = {}
    for r in records:
        seeds.setdefault(r["seed_id"], []).append(r)
    todo = {
        s: group
        for s, group in seeds.items()
        if any(_was_judged(r) and r["judge"].get("params_digest") != digest for r in group)
    }
    judged = 0
    for group in tqdm(todo.values(), desc=f"rejudge {run_id}", unit="seed", disable=not progress):
        out = []
        for r in group:
            if not _was_judged(r):
                out.append(r)
                continue
            first = r.get("judge_before") or {"status": r["status"], **r["judge"]}
            fresh = judge_record(judge_lm, judge, {**r, "status": "accepted"})
            fresh["judge"]["params_digest"] = digest
            out.append({**fresh, "judge_before": first})
            judged += 1
        store.append([{k: v for k, v in r.items() if k not in ("attempt", "batch_size")} for r in out])
    store.close()
    marked = None
    sample = store.dir / "review" / "sample.json"
    if judged and sample.exists():
        drawn = json.loads(sample.read_text(encoding="utf-8"))
        if drawn.get("strata_from") != "judge_before":
            tmp = sample.with_suffix(".json.tmp")
            tmp.write_text(
                json.dumps({**drawn, "strata_from": "judge_before"}, indent=1, ensure_ascii=False), encoding="utf-8"
            )
            tmp.replace(sample)
        marked = str(sample)
    final = store.records()
    after = _statuses(final)
    _track(run_id, config.name, params, judge_lm, final, store, judged)
    judged_seeds = sum(any(_was_judged(r) for r in group) for group in seeds.values())
    return RejudgeResult(run_id, params, judged, judged_seeds - len(todo), before, after, marked)


def _track(run_id, config_name, params, judge_lm, records, store, judged) -> None:
    """A parent MLflow run beside the generation run's: which judge, what it decided, the new cases."""
    import mlflow

    tags = {tracking.RUN_ID_TAG: run_id, "reeval.task": "rejudge", **tracking.git_state()}
    with tracking.parent_run(f"reeval/{config_name}", f"{run_id}/rejudge", tags):
        tracking.log_params(
            {
                **describe(params),
                "judge.params_digest": params_digest(params),
                **tracking.flatten({"lm.judge": judge_lm.identity()}),
            }
        )
        mlflow.log_dict(params, "judge_params.json")
        metrics = {
            **judge_metrics(records),
            **status_counts(records, "rejected"),
            **status_counts(records, "error"),
            "accepted": sum(r["status"] == "accepted" for r in records),
            "rejudge.judged": judged,
        }
        tracking.log_metrics({k: float(v) for k, v in metrics.items()})
        mlflow.log_artifact(str(store.cases_path), artifact_path="cases")
