"""Case sets to evaluate: the accepted cases of a reeval run, or any JSONL file in the flat form
(question, context, answers) — benchmark files made elsewhere included.

A run is named by its id (`run:nq-answer-swap-9bcd800b28`: this machine's run store, or fetched
from a shared tracking server when another machine made it) or by the config that made it
(`run:nq_answer_swap`, i.e. experiments/configs/nq_answer_swap.yaml, or a path to a YAML): the
latest run of that very config that MLflow recorded as finished. A shipped evaluation config can
then name its cases on any machine; the run that evaluates them records the resolved run id, so
it reproduces against the same cases.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import dspy

from experiments import tracking
from experiments.config import read_config
from experiments.paths import project_root
from experiments.run_store import RunNotFound, RunStore
from experiments.tracking import checkpoint_here

RUN_PREFIX = "run:"


class CaseSetNotRun(FileNotFoundError):
    """A config-named case set whose config has no finished run yet."""

    def __init__(self, name: str, config_path: Path):
        self.config_path = config_path
        super().__init__(
            f"run:{name}: {config_path} has no finished run yet; run "
            f"`reeval run {config_path}` first (its accepted cases are this config's data)"
        )


def _case_set_config(name: str) -> Path | None:
    candidates = (
        [Path(name)]
        if name.endswith((".yaml", ".yml"))
        else [project_root() / "experiments" / "configs" / f"{name}.yaml"]
    )
    return next((p for p in candidates if p.is_file()), None)


def _latest_finished_run(config_path: Path) -> str | None:
    # The schema alone: the named config is read for its name, task and run id (the loader, which also
    # checks tasks and data, sits above case sets: it resolves a config's own `run:` source through them).
    config = read_config(config_path)
    own = RunStore.new_id(config.name, config.digest())
    mlflow = tracking.setup_mlflow()
    experiment = mlflow.get_experiment_by_name(f"reeval/{config.name}")
    if experiment is None:
        return None
    runs = mlflow.search_runs(
        experiment_ids=[experiment.experiment_id],
        filter_string="attributes.status = 'FINISHED'",
        order_by=["attributes.start_time DESC"],
        output_format="list",
    )
    for run in runs:
        tags = run.data.tags
        run_id = tags.get(tracking.RUN_ID_TAG, "")
        if (
            "mlflow.parentRunId" not in tags
            and tags.get("reeval.task") == config.task
            and (run_id == own or run_id.startswith(own + "-"))
            and tracking.checkpoint_here(run_id)
        ):
            return run_id
    return None


def resolve_run_source(source: str) -> str:
    """`run:<run id>` as it is; `run:<config>` as `run:<its latest finished run id>`."""

    name = source.removeprefix(RUN_PREFIX)
    if checkpoint_here(name):
        return source
    config_path = _case_set_config(name)
    if config_path is None:
        raise RunNotFound(
            f"no finished cases for run {name!r} ({RunStore(name).cases_path}) and no config "
            f"experiments/configs/{name}.yaml"
        )
    run_id = _latest_finished_run(config_path)
    if run_id is None:
        raise CaseSetNotRun(name, config_path)
    return RUN_PREFIX + run_id


def is_run_source(source: str) -> bool:
    return source.startswith(RUN_PREFIX)


def run_cases_path(source: str) -> Path:
    return _cases_file(RunStore(resolve_run_source(source).removeprefix(RUN_PREFIX)))


def _cases_file(store: RunStore) -> Path:
    if not store.cases_path.exists():
        raise RunNotFound(f"no finished cases for run {store.run_id!r} ({store.cases_path})")
    return store.cases_path


def load_run_cases(source: str) -> tuple[list[dspy.Example], str]:
    """Accepted generated cases as Examples, each carrying its original (pre-perturbation) version."""
    examples, digest, _ = read_run_cases(resolve_run_source(source))
    return examples, digest


def read_run_cases(source: str) -> tuple[list[dspy.Example], str, Path]:
    """`load_run_cases` of a source already resolved to `run:<run id>`, and the file the cases came from."""
    store = RunStore(source.removeprefix(RUN_PREFIX))
    path = _cases_file(store)
    records = [r for r in store.records() if r.get("status") == "accepted" and r.get("context") is not None]
    digest = hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()
    examples = []
    for r in records:
        if r["id"].endswith(":closed-book"):
            continue  # a counterfactual case's no-context twin: evaluated as its "original" variant
        examples.append(
            dspy.Example(
                id=r["id"],
                seed_id=r["seed_id"],
                task=r.get("task", ""),
                generator=r.get("pivot", ""),
                source=r.get("source", ""),
                question=r["question"],
                context=r["context"],
                answers=r["answers"],
                original_context=r.get("original_context", ""),
                original_answers=r.get("original_answers")
                or ([r["options"][r["choice_labels"].index(r["original_answer_label"])]] if r.get("options") else []),
                options=r.get("options"),
                answer_label=r.get("answer_label"),
                original_answer_label=r.get("original_answer_label"),
            ).with_inputs("question", "context")
        )
    return examples, digest, path
