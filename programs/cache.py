"""The project's cache folder: assembled model files, embedder exports, FAISS indexes, the DSPy call cache.

Defined here, below experiments, because programs (the embedders and the retriever's index) keep files
in it and programs do not import experiments; `experiments.paths` re-exports it with the other folders.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Assembled model files, FAISS indexes and the DSPy call cache."""
    return Path(os.environ.get("REEVAL_CACHE_DIR", Path.home() / ".cache" / "reeval"))
