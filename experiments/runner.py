"""Run one experiment: load seeds, map the task's per-case function over them, checkpoint, track.

Per-case work is a function of (resolved config, case) plus the run store, so an executor
(experiments/executors: this process, or Ray actors) runs it wherever; this process alone writes
the checkpoint and MLflow.
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from experiments import run_inputs, run_lock, tracking
from experiments.case_loop import map_cases
from experiments.case_sets import is_run_source, read_run_cases
from experiments.config import EVALUATES_FILES_AS_GIVEN, ExperimentConfig
from experiments.data.errors import DataError
from experiments.data.files import content_sha256
from experiments.data.loaders import load_multiple_choice, load_qa
from experiments.data.registry import resolve_dataset
from experiments.errors import ErrorBudgetExceeded, SpendCapReached, budget_rule
from experiments.executors import WorkerSpec, build_lms, build_task, make_executor, merge_usage, role_lms
from experiments.external_cases import load_external_cases
from experiments.filters import apply_reeval_filters
from experiments.judging.calibration import calibrate
from experiments.judging.params import describe, resolve_params
from experiments.lm.context_limits import warn_long_prompts
from experiments.lm.usage import run_cost
from experiments.report_page import log_report
from experiments.resolved_run import ResolvedRun, resolve_run
from experiments.run_store import RunStore
from experiments.splits import select_split
from metrics.status import status_counts

logger = logging.getLogger(__name__)


@dataclass
class LoadedData:
    examples: list
    path: Path
    sha256: str
    filter_counts: dict[str, int] = field(default_factory=dict)


@dataclass
class RunResult:
    run_id: str
    mlflow_run_id: str
    records: list[dict]
    metrics: dict[str, float]
    new_cases: int
    seconds: float
    task: object
    notes: list[str] = field(default_factory=list)  # what the run's summary states besides its metrics


def load_data(config: ExperimentConfig) -> LoadedData:
    if is_run_source(config.data.source):  # resolved to a run id by experiments.resolved_run
        examples, digest, path = read_run_cases(config.data.source)
        examples = examples[: config.data.limit] if config.data.limit is not None else examples
        return LoadedData(examples, path, digest)

    spec = resolve_dataset(config.data.source)
    path = spec.path
    split = config.data.split
    if spec.loader in (load_qa, load_multiple_choice) and config.task in EVALUATES_FILES_AS_GIVEN:
        examples = load_external_cases(path)  # rows with originals, options, task
    else:
        examples = spec.loader(path)
    examples = select_split(examples, config.data.source, split)[config.data.offset :]
    counts: dict[str, int] = {}
    if config.applies_reeval_filters() and examples and "context" in examples[0]:
        examples, counts = apply_reeval_filters(
            examples,
            min_evidence_words=config.data.min_evidence_words,
            max_answer_words=config.data.max_answer_words,
            max_evidence_words=config.data.max_evidence_words,
        )
    if config.data.limit is not None:
        examples = examples[: config.data.limit]
    return LoadedData(examples, Path(path), content_sha256(path), counts)


def run_experiment(config: ExperimentConfig, **invocation) -> RunResult:
    """A config of a case-loop task, resolved and run; `invocation` as `experiments.resolved_run.resolve_run`'s."""
    return run(resolve_run(config, **invocation))


def run(resolved: ResolvedRun) -> RunResult:
    """The run's folder is locked for the whole invocation: one writer per checkpoint."""
    with run_lock.hold(resolved.folder):
        return _run(resolved)


def _run(resolved: ResolvedRun) -> RunResult:
    config = resolved.config
    run = _prepare(resolved)
    started, cpu_started = time.perf_counter(), time.process_time()
    with _tracked(config, run) as parent:
        if config.run.autolog_traces:
            import mlflow

            mlflow.dspy.autolog()
        try:
            v = config.validation
            calibration = calibrate(
                run.lms.get("judge"),
                run.run_judge,
                v.calibration_controls,
                v.min_judge_accuracy,
                v.calibration_source,
                resolved.progress,
            )
            _map_all(resolved, run, started)
        finally:
            if config.run.autolog_traces:
                # Autologging is process-wide: left on, it would trace the next run in this process to this
                # run's tracking store (measured: a later run's trace export retried for minutes against a
                # tracking server that had stopped).
                mlflow.dspy.autolog(disable=True)
                mlflow.flush_trace_async_logging()
        seed_ids = {e.id for e in run.data.examples}
        records = [r for r in run.store.records() if r["seed_id"] in seed_ids]
        summary = run.task.summarize(records)
        seconds = time.perf_counter() - started
        metrics = _metrics(run, summary, records, calibration, seconds, time.process_time() - cpu_started)
        _log_outputs(config, run, records, metrics)
    run.store.close()
    errors = sum(str(r.get("status", "")).startswith("error:") for r in records)
    total = len(run.data.examples)
    notes = [
        f"{errors} of {len(records)} records errored; "
        + budget_rule(config.run.error_budget, config.run.min_cases_before_budget, total)
    ]
    return RunResult(run.run_id, parent.info.run_id, records, metrics, len(run.todo), seconds, run.task, notes)


def _map_all(resolved: ResolvedRun, run: _Run, started: float) -> None:
    """The cases left to do, under the error budget; the cases earlier invocations finished count too. A
    budget stop is recorded where the run is looked at: error kinds, what was spent, and why it stopped."""
    import mlflow

    config = resolved.config
    seed_ids = {e.id for e in run.data.examples}
    spec = WorkerSpec(resolved, run.judge_params, run.data.examples, str(run.store.dir), build_lms)
    try:
        with make_executor(config.run, run.task, spec, resolved.ray_address) as executor:
            try:
                map_cases(executor, run.todo, run.store, config, resolved.progress, run.earlier, len(run.data.examples))
            finally:
                tracking.log_params(executor.describe())
                merge_usage(run.lms, executor.usage())
    except (ErrorBudgetExceeded, SpendCapReached) as stop:
        usage = _usage_metrics(run.lms)
        records = [r for r in run.store.records() if r["seed_id"] in seed_ids]
        stopped = {
            **status_counts(records, "error"),
            "cases_done": len(records),
            "wall_seconds": time.perf_counter() - started,
            **usage,
        }
        tracking.log_metrics({tracking.metric_name(k): v for k, v in stopped.items()})
        mlflow.set_tag("reeval.stopped", "spend_cap" if isinstance(stop, SpendCapReached) else "error_budget")
        run.store.close()
        raise


@dataclass
class _Run:
    """One run as prepared before tracking starts: its store, seeds, models, task and what is left to do."""

    run_id: str
    store: RunStore
    logged_config: dict  # the config as a run's config.json and MLflow hold it
    data: LoadedData
    lms: dict
    judge_params: dict | None
    judge_described: dict  # the judge's parameters as MLflow params
    task: object
    run_judge: object
    todo: list
    earlier: list[dict]  # the records of the seeds earlier invocations finished


def _prepare(resolved: ResolvedRun) -> _Run:
    config, run_id = resolved.config, resolved.run_id
    store = RunStore(run_id)
    logged_config = config.model_dump(mode="json")

    # Everything that can refuse the run comes before its config is written: a run refused before its first
    # case leaves no runs/<id>/ behind (the lock takes away a folder holding only what a start writes) and,
    # tracking starting after this, no MLflow run.
    identity, digest = config.identity(), config.digest()
    run_inputs.check_config(store, identity, digest)  # before the data: an edited limit reads other rows
    data = load_data(config)
    if not is_run_source(config.data.source):  # a case set grows as its run goes on; a file is edited
        run_inputs.check_data(store, data.path, data.sha256)
    if not data.examples:
        if config.data.limit == 0:
            raise DataError(
                f"{config.data.source}: data.limit is 0 (--limit 0): no rows to run; give a limit "
                "of 1 or more, or none for every row"
            )
        raise DataError(
            f"{config.data.source}: no rows left to run after data.offset and the filters "
            f"(counts: {data.filter_counts}); lower data.offset or set data.reeval_filters: false"
        )
    lms = build_lms(resolved)
    warn_long_prompts(data.examples, role_lms(lms))
    judge_params, judge_described = None, {}
    if "judge" in lms and config.task != "judge_calibration":
        v = config.validation
        judge_params = resolve_params(lms["judge"], v.judge_params, resolved.judged_task, v.judge_method)
        judge_described = describe(judge_params)
    task, run_judge = build_task(resolved, lms, judge_params)
    run_inputs.record(store, logged_config, identity, digest, {"data": (config.data.source, data.path, data.sha256)})
    if hasattr(task, "prepare"):
        task.prepare(data.examples, store.dir)
    done = store.finished_ids(retry_errors=resolved.retry_errors)
    todo = [e for e in data.examples if e.id not in done]
    seed_ids, todo_ids = {e.id for e in data.examples}, {e.id for e in todo}
    earlier = [r for r in store.records() if r["seed_id"] in seed_ids and r["seed_id"] not in todo_ids]
    logger.info(
        "run %s: %d rows, %d already run, %d to do",
        run_id,
        len(data.examples),
        len(data.examples) - len(todo),
        len(todo),
    )
    return _Run(run_id, store, logged_config, data, lms, judge_params, judge_described, task, run_judge, todo, earlier)


@contextmanager
def _tracked(config: ExperimentConfig, run: _Run):
    """The run's MLflow parent run, opened with what the run starts from logged before any case runs: the
    resolved config, the models, the seeds and the judge's parameters."""
    import mlflow

    data, lms = run.data, run.lms
    tags = {tracking.RUN_ID_TAG: run.run_id, "reeval.task": config.task, **tracking.git_state()}
    with tracking.parent_run(f"reeval/{config.name}", run.run_id, tags) as parent:
        tracking.log_params(tracking.flatten(run.logged_config))
        tracking.log_params({"run.resumed_cases": len(data.examples) - len(run.todo)})
        mlflow.log_dict(run.logged_config, "config.json")
        mlflow.log_dict({label: r.identity() for label, r in role_lms(lms)}, "models.json")
        tracking.log_params(tracking.flatten({f"lm.{label}": r.identity() for label, r in role_lms(lms)}))
        tracking.log_dataset(data.examples, config.data.source, str(data.path), data.sha256, "seeds")
        if hasattr(run.task, "tracking_params"):  # e.g. the retrieval corpus hash and index of context enriching
            tracking.log_params(run.task.tracking_params())
        if data.filter_counts:
            tracking.log_metrics({f"data.filter.{k}": v for k, v in data.filter_counts.items()})
        if run.judge_params is not None:
            tracking.log_params(run.judge_described)
            mlflow.log_dict(run.judge_params, "judge_params.json")
        yield parent


def _metrics(
    run: _Run,
    summary: dict[str, float],
    records: list[dict],
    calibration: dict[str, float],
    seconds: float,
    cpu_seconds: float,
) -> dict[str, float]:
    """The task's `summary` of the records, their errors, the judge's calibration, the time and the models' use."""
    metrics = dict(summary)
    metrics.update(status_counts(records, "error"))
    metrics.update(calibration)
    metrics["wall_seconds"] = seconds
    metrics["cpu_seconds"] = round(cpu_seconds, 3)  # this process's: local models decode in it
    metrics.update(_usage_metrics(run.lms))
    return {tracking.metric_name(k): v for k, v in metrics.items()}  # model ids may hold refused characters


def _log_outputs(config: ExperimentConfig, run: _Run, records: list[dict], metrics: dict[str, float]) -> None:
    """The run's metrics, each model's own under a nested run, the programs, the report and the cases."""
    import mlflow

    store, task, run_id = run.store, run.task, run.run_id
    tracking.log_metrics(metrics)
    for label, resolved_lm in role_lms(run.lms):
        own = f".{tracking.metric_part(resolved_lm.config.label)}."
        name = label if "/" in label else f"{label}/{resolved_lm.config.label}"
        with tracking.nested_run(name, {tracking.RUN_ID_TAG: run_id, "reeval.role": resolved_lm.role}):
            tracking.log_params(tracking.flatten(resolved_lm.identity()))
            # a target's own numbers; for single-role tasks, the run's
            mine = (
                {k: v for k, v in metrics.items() if own in k}
                if "/" in label
                else {k: v for k, v in metrics.items() if not k.startswith("lm.")}
            )
            tracking.log_metrics(mine)
    first = next(r for _, r in role_lms(run.lms))
    adapters = {name: first.adapter() for name in task.programs()}
    tracking.log_programs(task.programs(), adapters)
    if hasattr(task, "write_artifacts"):
        report = task.write_artifacts(
            records, store.dir / "report", {"run_id": run_id, "config": config.name, **tracking.git_state()}
        )
        log_report(report.parent)
    if (store.dir / "compiled").is_dir():
        mlflow.log_artifacts(str(store.dir / "compiled"), artifact_path="compiled")
        if hasattr(task, "log_models"):
            task.log_models(store.dir / "compiled")
    mlflow.log_artifact(str(store.cases_path), artifact_path="cases")
    mlflow.log_artifact(str(store.dir / "config.json"), artifact_path="cases")


def _usage_metrics(lms: dict) -> dict[str, float]:
    usages = {label: resolved_lm.usage() for label, resolved_lm in role_lms(lms)}
    return {f"lm.{label}.{key}": value for label, usage in usages.items() for key, value in usage.items()} | run_cost(
        usages
    )
