"""Experiment configs: YAML files validated against a strict schema before any LM call.

A misspelt key is an error (extra="forbid"), an unknown model name fails with "did you mean",
and data paths must exist — so a long run never dies an hour in on a typo.

This module is the schema and sits below the task registry and the data: the checks that need
them (the task's name, its options, its own config checks, the data path) run where a config is
loaded for use, `experiments.config_loader`, which hands the registry to the schema's validators
through pydantic's validation context (`{"tasks": …}`). Validated without it, a config is checked
against the schema alone.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

# The LM settings type lives with the LM runtime, a layer below; the schema holds it in models.
from experiments.lm.labels import assign_labels
from experiments.lm.pool import CoreSplit, plan_split
from experiments.lm.settings import LMConfig
from experiments.secrets import is_secret_name
from experiments.splits import DEVELOPMENT_ROWS

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
DEFAULT_CONFIG = CONFIG_DIR / "nq_seed_selection.yaml"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DataConfig(Strict):
    source: str = Field(
        description="shipped dataset name (nq, arc_challenge, …) or a path to JSONL "
        "(flat QA, MRQA or multiple-choice, recognised from its rows)"
    )
    limit: int | None = Field(None, ge=0, description="use at most this many rows (after the filters)")
    split: Literal["all", "development", "held_out"] = Field(
        "all",
        description="shipped rows generators and checks were developed on, or the rows held out for measuring "
        "them (experiments/splits.py); taken before offset and filters",
    )
    offset: int = Field(0, ge=0, description="skip this many rows of the source before filtering")
    reeval_filters: bool | None = Field(
        None,
        description="ReEval's seed filters (dedupe, evidence >= min_evidence_words, answers <= max_answer_words, "
        "multi-answers collapsed or dropped). Default: on for a generation task's seeds, off for a file given to "
        "an evaluating task, which is evaluated row for row with its answers unchanged",
    )
    min_evidence_words: int = Field(10, description="ReEval filter: rows whose evidence has fewer words are dropped")
    max_answer_words: int = Field(5, description="ReEval filter: answers with more words are dropped")
    max_evidence_words: int | None = Field(None, description="opt-in cap (not a ReEval rule) for small local models")

    @model_validator(mode="after")
    def _split_declared(self) -> DataConfig:
        if self.split != "all" and self.source not in DEVELOPMENT_ROWS:
            raise ValueError(
                f"split: {self.source!r} has no declared development rows (only "
                f"{', '.join(DEVELOPMENT_ROWS)}); use split: all"
            )
        return self


class RayConfig(Strict):
    workers: int | None = Field(
        None, ge=1, description="Ray actors, one case at a time each (default: the cluster's CPUs ÷ worker_cpus)"
    )
    worker_cpus: int = Field(1, ge=1, description="CPUs Ray reserves per actor; its local models decode on that many")


class RunConfig(Strict):
    error_budget: float = Field(0.2, ge=0, le=1, description="abort when this share of cases errored")
    min_cases_before_budget: int = Field(
        10, ge=0, description="cases finished before the error budget can stop a run (a first error is not 100%)"
    )
    threads: int = Field(
        1,
        ge=1,
        description="parallel cases in this process (provider calls, and local models "
        "through several llama.cpp contexts)",
    )
    local_contexts: int | None = Field(
        None,
        ge=1,
        description="llama.cpp contexts per local model (default: "
        "threads, at most one per core); each gets cores ÷ contexts threads",
    )
    executor: Literal["local", "ray"] = Field(
        "local",
        description="local: this process; ray: actors on a Ray "
        "cluster (reeval[ray]), this process writing the checkpoint",
    )
    ray: RayConfig = Field(RayConfig(), description="the Ray cluster and its actors, with executor: ray")
    autolog_traces: bool = Field(False, description="record every DSPy call as an MLflow trace (large stores)")
    max_cost: float | None = Field(
        None,
        gt=0,
        description="stop the run before a provider request could take its spending past this many dollars "
        "(retries counted; finished cases are saved; resume with a higher cap). Every provider model needs a "
        "price: LiteLLM's cost map or its `price`",
    )

    def core_split(self) -> CoreSplit:
        """Contexts and threads of each local model in the process that decodes: here, one context per
        parallel case (at most one per core); on Ray, each actor runs one case on its reserved CPUs."""
        if self.executor == "ray":
            return CoreSplit(contexts=1, threads=self.ray.worker_cpus, cores=self.ray.worker_cpus)
        return plan_split(self.threads, self.local_contexts)


# How a run is executed, not what it computes: changing these resumes the same run.
EXECUTION_KEYS = frozenset({"threads", "local_contexts", "executor", "ray", "max_cost"})

# Tasks that evaluate a file row for row as published (their task class says evaluates_files_as_given):
# data.reeval_filters defaults to off for them. Listed here because the run id (digest) depends on it
# and the schema sits below the task registry; a test holds the two in agreement.
EVALUATES_FILES_AS_GIVEN = frozenset({"evaluate"})


class ValidationConfig(Strict):
    calibration_controls: int = Field(10, ge=0, description="judge control cases per condition, run with the judge")
    calibration_source: str = Field(
        "nq",
        description="QA rows the judge's control cases were made from: a stored control set "
        "(data/judge_controls/<name>.jsonl.gz, made by scripts/make_judge_controls.py)",
    )
    judge_params: str = Field(
        "auto",
        description="judge method and parameters: auto (fitted for this judge "
        "model, shipped), reasoned, run:<judge_calibration run id>, or a judge_params.json path",
    )
    judge_method: Literal["auto", "reasoned", "checks", "extract", "choose", "stacked"] = Field(
        "auto",
        description="which fitted judge method judges: auto (the one measured for the task, else the "
        "study's choice: for qwen2.5-1.5b one extraction call on answer swap, inconsistent, unanswerable "
        "and context enriching) or a method name, with the parameters judge_params fitted for it",
    )
    min_judge_accuracy: float = Field(0.7, ge=0, le=1, description="below this the run warns loudly")
    acceptance: Literal["off", "auto"] = Field(
        "off",
        description="auto: after the judge, answer swaps and unanswerable rewrites are decided by the shipped "
        "acceptance score (the judge and plausibility signals stacked, fitted on reviewed cases; "
        "experiments/judging/acceptance.py); off: the judge's verdict decides",
    )


class ModelsConfig(Strict):
    pivot: LMConfig | None = Field(None, description="the model that selects seeds and generates cases")
    pivots: list[LMConfig] = Field([], description="several generators, compared by the compare_pivots task")
    judge: LMConfig | None = Field(None, description="the model that validates cases on if and only-if")
    targets: list[LMConfig] = Field([], description="the models evaluated on the cases")
    # What the labels derived on validation were and why, for `reeval validate` to say.
    _label_notes: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _distinct_labels(self) -> ModelsConfig:
        self._label_notes = assign_labels(self.entries())
        return self

    def entries(self) -> dict[str, LMConfig]:
        """Every model entry by where the config has it: models.pivot, models.targets.0, …"""
        out = {f"models.{role}": getattr(self, role) for role in ("pivot", "judge") if getattr(self, role)}
        for role in ("pivots", "targets"):
            out.update({f"models.{role}.{i}": entry for i, entry in enumerate(getattr(self, role))})
        return out

    @property
    def label_notes(self) -> list[str]:
        return list(self._label_notes)


class ExperimentConfig(Strict):
    name: str = Field(description="the run's name; the run id is this name and a hash of the config")
    task: str = Field(description="what the run does: one of the tasks below")
    description: str = Field("", description="free text, kept with the run")
    data: DataConfig = Field(description="the QA rows the run starts from")
    models: ModelsConfig = Field(description="the models and their roles")
    run: RunConfig = Field(RunConfig(), description="how the run executes: threads, error budget, executor")
    validation: ValidationConfig = Field(ValidationConfig(), description="how cases are validated: judge, calibration")
    options: dict[str, Any] = Field(default_factory=dict, description="the task's own settings (see its Options)")

    @field_validator("task")
    @classmethod
    def _known_task(cls, task: str, info: ValidationInfo) -> str:
        tasks = _task_registry(info)
        if tasks is None:
            return task
        if task not in tasks:
            close = difflib.get_close_matches(task, tasks, n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"unknown task {task!r}.{hint} Tasks: {', '.join(tasks)}")
        return task

    @model_validator(mode="after")
    def _task_options(self, info: ValidationInfo) -> ExperimentConfig:
        tasks = _task_registry(info)
        if tasks is None or self.task not in tasks:
            return self
        options = tasks[self.task].Options
        try:
            options.model_validate(self.options)
        except ValidationError as exc:
            problems = []
            for item in exc.errors():
                loc = ".".join(str(p) for p in item["loc"])
                if item["type"] == "extra_forbidden":
                    close = difflib.get_close_matches(str(item["loc"][-1]), list(options.model_fields), n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    problems.append(f"options.{loc}: unknown key{hint}")
                else:
                    message = item["msg"].removeprefix("Value error, ")
                    problems.append(f"options.{loc}: {message}" if loc else message)
            raise ValueError("; ".join(problems)) from None
        check = getattr(tasks[self.task], "check_config", None)
        if check is not None:  # what a task needs beyond its options (e.g. the bench: targets and a pivot)
            check(self)
        return self

    @model_validator(mode="after")
    def _executor_supports_task(self) -> ExperimentConfig:
        if self.run.executor == "ray" and self.run.max_cost is not None:
            raise ValueError(
                "run.max_cost needs run.executor: local (Ray actors send their requests from other processes, "
                "where this process's cap cannot stop them)"
            )
        if self.run.executor == "ray" and self.task == "optimize":
            raise ValueError(
                "run.executor: ray cannot run task optimize (its programs are compiled in one "
                "process before any case); use run.executor: local"
            )
        return self

    def models_of(self, roles: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, LMConfig | list[LMConfig]]:
        """The model entries of a task's roles ("targets" and "pivots" are lists); a role in `roles` the config
        leaves unset is a ConfigError, one in `optional` is left out."""
        models: dict[str, LMConfig | list[LMConfig]] = {}
        for role in (*roles, *optional):
            entry = getattr(self.models, role)
            if entry:
                models[role] = list(entry) if isinstance(entry, list) else entry
            elif role not in optional:
                some = "at least one" if isinstance(entry, list) else "one"
                raise ConfigError(f"models.{role}: task {self.task!r} needs {some}; add it to the config")
        return models

    def applies_reeval_filters(self) -> bool:
        """data.reeval_filters, or its default: off where the task evaluates files as given."""
        return self._filters_by_default() if self.data.reeval_filters is None else self.data.reeval_filters

    def identity(self) -> dict:
        """What the user set: a field added to the schema later (with its default) must not turn
        an old config into a new run, nor must how it is executed (threads, contexts, executor).
        The fully resolved config is still what gets logged."""
        identity = self.model_dump(mode="json", exclude_defaults=True, exclude={"run": set(EXECUTION_KEYS)})
        if not identity.get("run"):
            identity.pop("run", None)
        # What a model costs changes no answer: a price given later resumes the same run.
        for entries in identity.get("models", {}).values():
            for entry in entries if isinstance(entries, list) else [entries]:
                if isinstance(entry, dict):
                    entry.pop("price", None)
        data = identity.get("data", {})
        # Stored configs from before the filters' default depended on the task say `true`: the same run.
        if data.get("reeval_filters") is not None and data["reeval_filters"] == self._filters_by_default():
            del data["reeval_filters"]
        return identity

    def _filters_by_default(self) -> bool:
        return self.task not in EVALUATES_FILES_AS_GIVEN

    def digest(self) -> str:
        """Content hash of the config: same config → same run id → resume."""
        blob = json.dumps(self.identity(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()


def _task_registry(info: ValidationInfo) -> dict | None:
    """The task registry the loader passed in the validation context, or None: the schema alone."""
    return (info.context or {}).get("tasks")


class ConfigError(ValueError):
    """A config that must not run; the message names the file and the offending key."""


def _format_error(path: Path, error: ValidationError, raw: dict, hint: str = "") -> str:
    lines = [f"{path}: invalid config{f' ({hint})' if hint else ''}"]
    for item in error.errors():
        loc = ".".join(str(p) for p in item["loc"])
        if item["type"] == "extra_forbidden" and _names_a_secret(str(item["loc"][-1])):
            lines.append(
                f"  {loc}: a config never holds a secret (it is logged and hashed); set the "
                "provider's environment variable instead (OPENAI_API_KEY, ANTHROPIC_API_KEY, …)"
            )
        elif item["type"] == "extra_forbidden":
            parent = item["loc"][:-1]
            allowed = _allowed_keys(parent)
            close = difflib.get_close_matches(str(item["loc"][-1]), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            lines.append(f"  {loc}: unknown key{hint}")
        else:
            message = item["msg"].removeprefix("Value error, ")
            lines.append(f"  {loc}: {message}")
    return "\n".join(lines)


def _names_a_secret(key: str) -> bool:
    return is_secret_name(key)


def _allowed_keys(loc: tuple) -> list[str]:
    model: type[BaseModel] = ExperimentConfig
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return []
        annotation = field.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        nested = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if nested is None:
            return []
        model = nested
    return list(model.model_fields)


def config_path(path: str | Path | None = None) -> Path:
    """The config file `path` names: as given, else by its name in experiments/configs/."""
    path = Path(path) if path else DEFAULT_CONFIG
    if not path.exists() and (CONFIG_DIR / path.name).exists():
        path = CONFIG_DIR / path.name
    if not path.exists():
        raise ConfigError(f"{path}: no such config file")
    return path


def read_config(
    path: str | Path | None = None, overrides: dict | None = None, tasks: dict | None = None
) -> ExperimentConfig:
    """A YAML config validated against the schema, and against the task registry `tasks` when given.
    Its data path is not checked here: `experiments.config_loader.load_config` does all of it."""
    path = config_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save the config as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config ({exc.strerror}); give a readable YAML file") from None
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(_yaml_problem(path, exc)) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a config is a mapping of keys, got {type(raw).__name__}")
    for dotted, value in (overrides or {}).items():
        _set_dotted(raw, dotted, value)
    try:
        return ExperimentConfig.model_validate(raw, context={"tasks": tasks} if tasks is not None else None)
    except ValidationError as exc:
        raise ConfigError(_format_error(path, exc, raw)) from None


def _yaml_problem(path: Path, exc: yaml.YAMLError) -> str:
    """PyYAML's several-line report as one line: file:line:column: what is wrong."""
    mark = getattr(exc, "problem_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    return f"{where}: not valid YAML: {problem}{f' ({context})' if context else ''}"


def config_from_dict(raw: dict, where: Path, hint: str = "", tasks: dict | None = None) -> ExperimentConfig:
    """A config stored as JSON (a run's config.json, an MLflow artifact), validated like a YAML one."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a config is a mapping of keys, got {type(raw).__name__}")
    try:
        return ExperimentConfig.model_validate(raw, context={"tasks": tasks} if tasks is not None else None)
    except ValidationError as exc:
        raise ConfigError(_format_error(where, exc, raw, hint)) from None


def _set_dotted(raw: dict, dotted: str, value) -> None:
    node = raw
    *parents, leaf = dotted.split(".")
    for key in parents:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            return  # the config's own value there is not a mapping: validation names it
        node = child
    node[leaf] = value
