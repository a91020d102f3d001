"""Run one experiment: load seeds, map the task's per-case function over them, checkpoint, track.

Per-case work is a function of (resolved config, case) plus the run store, so the same loop
can later be handed to a thread pool (provider LMs), or to Ray Data, without touching programs.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from experiments.config import ExperimentConfig
from experiments.errors import check_budget, error_record
from experiments.offline import apply_offline_defaults
from experiments.run_store import RunStore
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


def load_data(config: ExperimentConfig) -> LoadedData:
    from experiments.case_sets import is_run_source, load_run_cases, run_cases_path
    from experiments.data import content_sha256, resolve_dataset
    from experiments.filters import apply_reeval_filters

    if is_run_source(config.data.source):
        examples, digest = load_run_cases(config.data.source)
        examples = examples[: config.data.limit] if config.data.limit is not None else examples
        return LoadedData(examples, run_cases_path(config.data.source), digest)

    spec = resolve_dataset(config.data.source)
    path = spec.path
    examples = spec.loader(path)[config.data.offset:]
    counts: dict[str, int] = {}
    if config.data.reeval_filters and examples and "context" in examples[0]:
        examples, counts = apply_reeval_filters(
            examples, min_evidence_words=config.data.min_evidence_words,
            max_answer_words=config.data.max_answer_words, max_evidence_words=config.data.max_evidence_words)
    if config.data.limit is not None:
        examples = examples[: config.data.limit]
    return LoadedData(examples, Path(path), content_sha256(path), counts)


def build_lms(config: ExperimentConfig, roles: tuple[str, ...], optional: tuple[str, ...] = ()):
    from experiments.lm_registry import build_lm

    lms = {}
    for role in (*roles, *optional):
        if role in ("targets", "pivots"):
            if not getattr(config.models, role):
                raise ValueError(f"task {config.task!r} needs models.{role}")
            lms[role] = [build_lm(c, role.removesuffix("s")) for c in getattr(config.models, role)]
            continue
        lm_config = getattr(config.models, role)
        if lm_config is None:
            if role in optional:
                continue
            raise ValueError(f"task {config.task!r} needs models.{role}")
        lms[role] = build_lm(lm_config, role)
    return lms


def run_experiment(config: ExperimentConfig, *, run_id: str | None = None, fresh: bool = False,
                   retry_errors: bool = False, progress: bool = True) -> RunResult:
    apply_offline_defaults()
    from experiments import tracking
    from experiments.case_sets import is_run_source, resolve_run_source
    from experiments.tasks import TASKS

    if is_run_source(config.data.source):  # a config-named case set: record which run's cases
        config.data.source = resolve_run_source(config.data.source)
    task_cls = TASKS[config.task]
    if hasattr(task_cls, "drive"):  # a task that runs stages of its own (bench)
        return task_cls.drive(config, run_id=run_id, fresh=fresh, retry_errors=retry_errors, progress=progress)
    run_id = run_id or RunStore.new_id(config.name, config.digest(), fresh=fresh)
    store = RunStore(run_id)
    resolved = config.model_dump(mode="json")
    if store.exists() and ExperimentConfig.model_validate(store.read_config()).identity() != config.identity():
        raise ValueError(f"run {run_id!r} was made with a different config; use --fresh for a new run")
    store.write_config(resolved)

    data = load_data(config)
    if not data.examples:
        raise ValueError(f"{config.data.source}: no cases left to run (filter counts: {data.filter_counts})")
    lms = build_lms(config, task_cls.roles, getattr(task_cls, "optional_roles", ()))
    task = task_cls(lms, task_cls.Options.model_validate(config.options))
    judge_params = run_judge = None
    if "judge" in lms and config.task != "judge_calibration":
        from experiments.judging.params import judge_from, resolve_params

        judge_params = resolve_params(lms["judge"], config.validation.judge_params)
        run_judge = judge_from(judge_params)
        # Tasks build a default judge; the run's judge is the one its parameters say, and it is also
        # the one the opening calibration measures.
        for holder in (task, getattr(task, "scorer", None)):
            if holder is not None and hasattr(holder, "judge"):
                holder.judge = run_judge
    if hasattr(task, "prepare"):
        task.prepare(data.examples, store.dir)
    done = store.finished_ids(retry_errors=retry_errors)
    todo = [e for e in data.examples if e.id not in done]
    logger.info("run %s: %d cases, %d already finished, %d to do", run_id, len(data.examples),
                len(data.examples) - len(todo), len(todo))

    started = time.perf_counter()
    tags = {tracking.RUN_ID_TAG: run_id, "reeval.task": config.task, **tracking.git_state()}
    with tracking.parent_run(f"reeval/{config.name}", run_id, tags) as parent:
        if config.run.autolog_traces:
            import mlflow

            mlflow.dspy.autolog()
        tracking.log_params(tracking.flatten(resolved))
        tracking.log_params({"run.resumed_cases": len(data.examples) - len(todo)})
        import mlflow

        mlflow.log_dict(resolved, "config.json")
        mlflow.log_dict({label: r.identity() for label, r in role_lms(lms)}, "models.json")
        tracking.log_params(tracking.flatten({f"lm.{label}": r.identity() for label, r in role_lms(lms)}))
        tracking.log_dataset(data.examples, config.data.source, str(data.path), data.sha256, "seeds")
        if data.filter_counts:
            mlflow.log_metrics({f"data.filter.{k}": v for k, v in data.filter_counts.items()})

        calibration: dict[str, float] = {}
        if judge_params is not None:
            from experiments.judging.params import describe

            tracking.log_params(describe(judge_params))
            mlflow.log_dict(judge_params, "judge_params.json")
        if judge_params is not None and config.validation.calibration_controls:
            from experiments.judging.calibration import calibrate

            calibration = calibrate(lms["judge"], run_judge,
                                    config.validation.calibration_controls, config.validation.min_judge_accuracy,
                                    config.validation.calibration_source, progress)

        _map_cases(task, todo, store, config, progress)

        seed_ids = {e.id for e in data.examples}
        records = [r for r in store.records() if r["seed_id"] in seed_ids]
        metrics = task.summarize(records)
        metrics.update(status_counts(records, "error"))
        metrics.update(calibration)
        seconds = time.perf_counter() - started
        metrics["wall_seconds"] = seconds
        for label, resolved_lm in role_lms(lms):
            for key, value in resolved_lm.usage().items():
                metrics[f"lm.{label}.{key}"] = value
        mlflow.log_metrics(metrics)
        for label, resolved_lm in role_lms(lms):
            own = f".{resolved_lm.config.name}."
            name = label if "/" in label else f"{label}/{resolved_lm.config.name}"
            with tracking.nested_run(name, {tracking.RUN_ID_TAG: run_id, "reeval.role": resolved_lm.role}):
                tracking.log_params(tracking.flatten(resolved_lm.identity()))
                # a target's own numbers; for single-role tasks, the run's
                mine = {k: v for k, v in metrics.items() if own in k} if "/" in label else {
                    k: v for k, v in metrics.items() if not k.startswith("lm.")}
                mlflow.log_metrics(mine)
        first = next(r for _, r in role_lms(lms))
        adapters = {name: first.adapter() for name in task.programs()}
        tracking.log_programs(task.programs(), adapters)
        if hasattr(task, "write_artifacts"):
            report = task.write_artifacts(records, store.dir / "report",
                                          {"run_id": run_id, "config": config.name, **tracking.git_state()})
            mlflow.log_artifacts(str(report.parent), artifact_path="report")
        if (store.dir / "compiled").is_dir():
            mlflow.log_artifacts(str(store.dir / "compiled"), artifact_path="compiled")
        mlflow.log_artifact(str(store.cases_path), artifact_path="cases")
        mlflow.log_artifact(str(store.dir / "config.json"), artifact_path="cases")
    store.close()
    return RunResult(run_id, parent.info.run_id, records, metrics, len(todo), seconds, task)


def _map_cases(task, todo: list, store: RunStore, config: ExperimentConfig, progress: bool) -> None:
    """Each finished case is checkpointed before the next result is taken."""
    records_so_far: list[dict] = []

    def one(example) -> list[dict]:
        try:
            result = task.process(example)
        except Exception as exc:  # noqa: BLE001 - any failure of one case is that case's error
            logger.debug("case %s failed", example.id, exc_info=True)
            result = error_record(example.id, exc)
        records = [result] if isinstance(result, dict) else result
        return [{**r, "seed_id": example.id} for r in records]

    bar = tqdm(total=len(todo), desc=config.task, unit="case", disable=not progress)
    with ThreadPoolExecutor(max_workers=config.run.threads) as pool:
        for records in pool.map(one, todo) if config.run.threads > 1 else map(one, todo):
            store.append(records)
            records_so_far.extend(records)
            bar.update(1)
            bar.set_postfix(status=records[-1]["status"][:24])
            check_budget(records_so_far, config.run.error_budget, config.run.min_cases_before_budget)
    bar.close()


def role_lms(lms: dict):
    """(label, ResolvedLM) pairs: one per role, one per target."""
    for role, value in lms.items():
        if isinstance(value, list):
            yield from ((f"{r.role}/{r.config.name}", r) for r in value)
        else:
            yield role, value
