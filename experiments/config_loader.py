"""Loading a config for use: the schema (experiments.config), then what the schema cannot know from
below — the task registry (the task's name, its options, its own checks) and the data source.

A long run never dies an hour in on a typo: every check here runs before any LM call.
"""

from __future__ import annotations

from pathlib import Path

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
from experiments.launch import TASKS

__all__ = ["CONFIG_DIR", "DEFAULT_CONFIG", "ConfigError", "ExperimentConfig", "config_from_dict", "load_config"]


def load_config(path: str | Path | None = None, overrides: dict | None = None) -> ExperimentConfig:
    path = config_path(path)
    config = read_config(path, overrides, tasks=TASKS)
    _check_data_path(path, config)
    return config


def config_from_dict(raw: dict, where: Path, hint: str = "") -> ExperimentConfig:
    """A config stored as JSON (a run's config.json, an MLflow artifact), validated like a YAML one."""
    return _schema_from_dict(raw, where, hint, tasks=TASKS)


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
