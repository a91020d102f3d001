"""Where the project keeps its files: repository root, MLflow store, run store, caches."""

from __future__ import annotations

import os
from pathlib import Path

from programs.cache import cache_dir

__all__ = ["cache_dir", "mlruns_dir", "project_root", "runs_dir"]


def project_root() -> Path:
    """The repository root (editable install), or REEVAL_HOME when the package is installed elsewhere."""
    home = os.environ.get("REEVAL_HOME")
    return Path(home).resolve() if home else Path(__file__).resolve().parents[1]


def mlruns_dir() -> Path:
    return project_root() / "mlruns"


def runs_dir() -> Path:
    """Per-run checkpoints (cases.jsonl, resolved config); MLflow holds the summaries."""
    return Path(os.environ.get("REEVAL_RUNS_DIR", project_root() / "runs")).resolve()
