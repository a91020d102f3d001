"""The `hf` layout: a folder ready for `hf upload` or `push_to_hub` — Parquet written through
`datasets` with explicit features (`data/test-*.parquet`, or `data/<set>/test-*.parquet` when a run holds
several case sets), the dataset card `README.md`, and `croissant.json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments.export.rows import hf_features

SHARD = "test-00000-of-00001.parquet"


def parquet_paths(names: list[str]) -> dict[str, str]:
    """Case set name -> the glob of its Parquet files, relative to the folder (the card's `data_files`)."""
    if len(names) == 1:
        return {names[0]: "data/test-*.parquet"}
    return {name: f"data/{name}/test-*.parquet" for name in names}


def write_parquet(folder: Path, pattern: str, rows: list[dict[str, Any]]) -> Path:
    import datasets

    path = folder / pattern.replace("test-*.parquet", SHARD)
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=hf_features()).to_parquet(str(path))
    return path
