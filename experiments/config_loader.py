"""Loading a config for use: the schema (experiments.config), then what the schema cannot know from
below — the task registry (the task's name, its options, its own checks), the data source and the judge's
stored control set.

A long run never dies an hour in on a typo: every check here runs before any LM call.
"""

from __future__ import annotations

from pathlib import Path

from experiments import task_registry
from experiments.case_sets import CaseSetNotRun, is_run_source, run_cases_path
from experiments.config import (
    CONFIG_DIR,
    DEFAULT_CONFIG,
    ConfigError,
    ExperimentConfig,
    config_path,
    read_config,
)
from experiments.config import config_from_dict as _schema_from_dict
from experiments.data.registry import resolve_dataset
from experiments.judging.control_set import read_header
from experiments.lm.providers import known_providers, provider_problem

__all__ = ["CONFIG_DIR", "DEFAULT_CONFIG", "ConfigError", "ExperimentConfig", "config_from_dict", "load_config"]


def load_config(path: str | Path | None = None, overrides: dict | None = None) -> ExperimentConfig:
    path = config_path(path)
    config = read_config(path, overrides, tasks=_tasks())
    _check_providers(path, config)
    _check_data_path(path, config)
    _check_calibration(path, config)
    return config


def config_from_dict(raw: dict, where: Path, hint: str = "") -> ExperimentConfig:
    """A config stored as JSON (a run's config.json, an MLflow artifact), validated like a YAML one."""
    config = _schema_from_dict(raw, where, hint, tasks=_tasks())
    _check_providers(where, config)
    return config


def _tasks() -> dict[str, type]:
    """The registered task classes, which hold each task's options and its own config checks."""
    return {name: entry.cls for name, entry in task_registry.entries().items()}


def _check_providers(path: Path, config: ExperimentConfig) -> None:
    """Provider prefixes against LiteLLM's list; LiteLLM is imported only for a config that names one."""
    entries = {where: e for where, e in config.models.entries().items() if "/" in e.name}
    if not entries:
        return
    providers = known_providers()
    for where, entry in entries.items():
        problem = provider_problem(entry.name, providers)
        if problem:
            raise ConfigError(f"{path}: {where}.name: {problem}")


def _check_data_path(path: Path, config: ExperimentConfig) -> None:
    if is_run_source(config.data.source):
        try:
            run_cases_path(config.data.source)
        except CaseSetNotRun:
            return  # a valid config that waits for another: `validate` says which, `run` refuses
        except FileNotFoundError as exc:
            raise ConfigError(f"{path}: data.source: {exc}") from None
        return

    try:
        resolve_dataset(config.data.source)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        raise ConfigError(f"{path}: data.source: {exc}") from None


def _check_calibration(path: Path, config: ExperimentConfig) -> None:
    """A judged run opens on the stored controls of validation.calibration_source: they must be there, and
    hold as many per condition as the config asks for."""
    v = config.validation
    if config.models.judge is None or not v.calibration_controls:
        return
    try:
        stored = read_header(v.calibration_source)["per_condition"]
    except (FileNotFoundError, ValueError) as exc:
        raise ConfigError(f"{path}: validation.calibration_source: {exc}") from None
    if v.calibration_controls > stored:
        raise ConfigError(
            f"{path}: validation.calibration_controls: {v.calibration_controls} per condition; the stored "
            f"controls of {v.calibration_source!r} hold {stored} per condition: ask for {stored} or fewer"
        )
