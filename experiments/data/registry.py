"""The shipped data sets by name, and a name, a file path or an export folder resolved to its file and loader.

A Parquet file (FaithEval's hub files, `reeval export`'s `hf` and `faitheval` layouts) is read row by row
like JSON Lines, each row numbered (experiments/data/files.py); a folder `reeval export` wrote stands for the one
data file it holds.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from experiments.data.errors import DataError, UnknownDatasetError
from experiments.data.files import PARQUET, iter_rows, source_name
from experiments.data.loaders import load_mrqa, load_multiple_choice, load_passages, load_qa
from experiments.paths import project_root

#: The shipped data files (data/README.md says where each comes from).
DATA_DIR: Path = project_root() / "data"

#: Shipped data sets (under ``data/``, see data/README.md): name → (path, loader).
DATASETS: dict[str, tuple[Path, Callable[..., Any]]] = {
    "nq": (DATA_DIR / "nq.jsonl.gz", load_qa),
    "squad": (DATA_DIR / "squad.jsonl", load_qa),
    "arc_challenge": (DATA_DIR / "arc_challenge_test.jsonl", load_multiple_choice),
    "arc_challenge_validation": (DATA_DIR / "arc_challenge_validation.jsonl", load_multiple_choice),
    "wiki_passages": (DATA_DIR / "wiki_passages.jsonl.gz", load_passages),
}


class DatasetSpec(NamedTuple):
    """A resolved data set: its name (registry name or file stem), file path and loader."""

    name: str
    path: Path
    loader: Callable[..., Any]


# Files of an export folder that are its metadata, not its rows.
METADATA_FILES = ("croissant.json",)
ROW_SUFFIXES = (".jsonl", ".jsonl.gz", ".json")


def data_file_of(folder: Path) -> Path:
    """The one file of rows in a folder (an export): its Parquet file, or else its JSON / JSON Lines file."""
    parquet = sorted(p for p in folder.rglob(f"*{PARQUET}") if p.is_file())
    rows = parquet or sorted(
        p for p in folder.rglob("*") if p.is_file() and p.name.endswith(ROW_SUFFIXES) and p.name not in METADATA_FILES
    )
    if len(rows) == 1:
        return rows[0]
    if not rows:
        raise DataError(f"{folder}: a folder with no data file (.parquet, .jsonl, .jsonl.gz or .json) in it")
    shown = ", ".join(str(p.relative_to(folder)) for p in rows[:4]) + (", …" if len(rows) > 4 else "")
    raise DataError(f"{folder}: holds {len(rows)} data files ({shown}); give the path of one of them")


def sniff_loader(path: str | Path) -> Callable[..., Any]:
    """Pick a loader from the first row of a file: MRQA header, ARC choices, passage pool or flat QA."""
    path = Path(path)
    for _, obj in iter_rows(path):
        if "header" in obj:
            return load_mrqa
        if "choices" in obj and "answerKey" in obj:
            return load_multiple_choice
        if "origin" in obj and "text" in obj and "question" not in obj:
            return load_passages
        return load_qa
    raise DataError(f"{path}: empty file")


def resolve_dataset(name_or_path: str | Path) -> DatasetSpec:
    """A registry name (see :data:`DATASETS`) or a path to an existing ``.jsonl``/``.jsonl.gz`` file, a
    ``.json`` file holding one array of rows, a ``.parquet`` file, or a folder holding one such file.

    Names win over paths. An unknown name that is not a file fails with a "did you mean"
    suggestion, so a typo in a config is caught before any LM call.
    """
    key = str(name_or_path)
    if key in DATASETS:
        path, loader = DATASETS[key]
        return DatasetSpec(key, path, loader)
    path = Path(key).expanduser()
    if path.is_dir():
        path = data_file_of(path)
    if path.is_file():
        return DatasetSpec(source_name(path), path.resolve(), sniff_loader(path))
    close = difflib.get_close_matches(key, list(DATASETS), n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    raise UnknownDatasetError(
        f"unknown dataset {key!r}: {hint}Known names: {', '.join(sorted(DATASETS))}; "
        "or give the path of an existing .jsonl/.jsonl.gz (or .json array, or .parquet) file, or of a folder "
        "`reeval export` wrote."
    )
