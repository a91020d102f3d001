"""Retrieval corpora: the shipped pool, JSONL or Parquet shards, or a pinned Hugging Face dataset,
each as a ``datasets.Dataset`` (id, title, text) plus a content hash that names its index.

Shards go through ``datasets.load_dataset("json"|"parquet")``, which converts them once into
memory-mapped Arrow files: a corpus larger than memory is read in windows, never held whole.
The hash covers the shards' bytes (never paths or mtimes); a hub dataset is named by its pinned
revision, since there is no local file to hash.

    wiki_passages                          the shipped pool (every row validated)
    data/shards/*.parquet                  shards (a glob, a file or a directory)
    hf:org/name@<revision>[:split]         a hub dataset (needs a network the first time)
"""

from __future__ import annotations

import glob
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from experiments.data.errors import DataError
from experiments.data.files import content_sha256
from experiments.data.loaders import load_passages
from experiments.data.registry import DATASETS
from experiments.data.tables import offline_datasets
from experiments.paths import cache_dir
from programs import embedders
from programs.embedders import DEFAULT_BACKEND, DEFAULT_EMBEDDER
from programs.retriever import PassageRetriever

if TYPE_CHECKING:  # pragma: no cover
    import datasets

_SHARD_SUFFIXES = {".parquet": "parquet", ".jsonl": "json", ".jsonl.gz": "json", ".json": "json"}


def _kind(path: Path) -> str | None:
    name = path.name
    return next((kind for suffix, kind in _SHARD_SUFFIXES.items() if name.endswith(suffix)), None)


def shard_paths(spec: str) -> list[Path]:
    """The shard files a glob, a file or a directory names, sorted (their order is the row order)."""
    path = Path(spec).expanduser()
    if path.is_dir():
        found = [p for p in path.iterdir() if p.is_file() and _kind(p)]
    else:
        found = [Path(p) for p in glob.glob(str(path))]
    if not found:
        raise DataError(f"corpus {spec!r}: no .parquet or .jsonl(.gz) shards found there")
    kinds = {_kind(p) for p in found}
    if None in kinds or len(kinds) > 1:
        raise DataError(
            f"corpus {spec!r}: shards must all be .parquet or all .jsonl(.gz); got "
            f"{', '.join(sorted(p.name for p in found)[:5])}"
        )
    return sorted(found)


def shards_sha256(paths: list[Path]) -> str:
    """Hash of the shards' contents in order: renaming or moving the directory keeps it."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(content_sha256(path).encode() + b"\n")
    return digest.hexdigest()


def _checked(ds: datasets.Dataset, where: str) -> datasets.Dataset:
    missing = [c for c in ("id", "text") if c not in ds.column_names]
    if missing:
        raise DataError(
            f"{where}: column {missing[0]!r} missing (a passage corpus needs 'id' and 'text'; "
            f"'title' is optional); columns are {', '.join(ds.column_names)}"
        )
    if "title" not in ds.column_names:
        ds = ds.add_column("title", [""] * len(ds))
    return ds.select_columns(["id", "title", "text"])


def load_corpus(spec: str) -> tuple[datasets.Dataset, str]:
    """The passages ``spec`` names and their content hash (see the module docstring for forms)."""
    if spec in DATASETS:
        path = DATASETS[spec][0]
        return load_passages(path), content_sha256(path)
    if spec.startswith("hf:"):
        return _hub(spec)
    paths = shard_paths(spec)
    ds_mod = offline_datasets()
    ds = ds_mod.load_dataset(_kind(paths[0]), data_files=[str(p) for p in paths], split="train")
    return _checked(ds, spec), shards_sha256(paths)


def _hub(spec: str) -> tuple[datasets.Dataset, str]:
    name, _, split = spec[3:].partition(":")
    repo, _, revision = name.partition("@")
    if not revision:
        raise DataError(
            f"corpus {spec!r}: pin a revision (hf:{repo}@<commit>[:split]) so its index can be named by content"
        )
    import datasets as ds_mod

    ds = ds_mod.load_dataset(repo, revision=revision, split=split or "train")
    return _checked(ds, spec), hashlib.sha256(f"hf:{repo}@{revision}:{split or 'train'}".encode()).hexdigest()


def default_retriever(
    embedder: str = DEFAULT_EMBEDDER,
    *,
    backend: str = DEFAULT_BACKEND,
    corpus: str = "wiki_passages",
    cache_root: str | Path | None = None,
) -> PassageRetriever:
    """The passages of ``corpus`` (the shipped Wikipedia pool by default; else JSONL or Parquet
    shards or a pinned Hugging Face dataset, see :func:`load_corpus`) behind the
    named embedder and backend, the index built once and cached by corpus content hash.

    ``cache_root`` defaults to the project cache (``REEVAL_CACHE_DIR``, else ``~/.cache/reeval``).
    """
    root = Path(cache_root) if cache_root is not None else cache_dir()
    passages, sha = load_corpus(corpus)
    model = embedders.get_embedder(embedder, backend=backend, cache_root=root)
    return PassageRetriever(passages, model, sha).build_or_load(root)
