"""Embedding a corpus on a Ray cluster with Ray Data, for an index build.

Row numbers go through one Ray Data pipeline: `map_batches` with an actor class, so each of the
`workers` actors loads the embedder once, reads its batch's passages itself and encodes them; the
driver reads the vectors back in corpus order (`preserve_order`), a window at a time, and adds them
to the FAISS index as a local build does. The driver never holds the texts (13 GB at 21M passages):
a memory-mapped corpus pickles as its Arrow files' paths, so every actor maps the same files (on a
cluster they must sit at the same path on every machine: a shared file system, as for the shards).
The embedder is named, not shipped: every machine loads its own copy (installed by
`scripts/install.sh`), and the index is cached under that name as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from experiments.corpus import load_corpus
from experiments.executors.ray_actors import RAY_DEFAULTS
from experiments.paths import cache_dir
from programs import embedders
from programs.retriever import PassageRetriever

WINDOW = 8192  # vectors handed to the index at a time, as in a local build


class _Embed:
    """One worker's embedder, loaded once per actor, and its view of the passages."""

    def __init__(self, make_embedder: Callable[[], Any], passages: Any):
        self.embedder = make_embedder()
        self.passages = passages

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        texts = self.passages.embedding_texts(batch["data"].tolist())
        return {"vector": np.asarray(self.embedder.encode(texts), dtype=np.float32)}


class NamedEmbedder:
    """A picklable way to load `programs.embedders.get_embedder(name, backend)` on a worker."""

    def __init__(self, name: str, backend: str):
        self.name, self.backend = name, backend

    def __call__(self):
        return embedders.get_embedder(self.name, backend=self.backend)


class RayDataEncoder:
    """`(passages, rows) → vector windows in order` (programs.retriever.WindowEncoder) on the connected
    Ray cluster."""

    def __init__(
        self, make_embedder: Callable[[], Any], workers: int, batch_size: int = 64, cpus_per_worker: float = 1.0
    ):
        self.make_embedder = make_embedder
        self.workers = workers
        self.batch_size = batch_size
        self.cpus_per_worker = cpus_per_worker
        self.description = f"ray data: {workers} workers × {cpus_per_worker:g} CPU, batches of {batch_size}"

    def __call__(self, passages: Any, rows: Sequence[int]) -> Iterator[np.ndarray]:
        import ray.data

        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True  # vectors must line up with the passage ids
        context.enable_progress_bars = False
        # Row numbers only (a column "data"), in a few blocks per worker; not repartitioned: that would need
        # CPUs the embedding actors already hold.
        blocks = np.array_split(np.asarray(rows, dtype=np.int64), max(1, min(len(rows), self.workers * 4)))
        dataset = ray.data.from_numpy([b for b in blocks if len(b)] or [np.zeros(0, np.int64)])
        encoded = dataset.map_batches(
            _Embed,
            fn_constructor_kwargs={"make_embedder": self.make_embedder, "passages": passages},
            batch_size=self.batch_size,
            concurrency=self.workers,
            num_cpus=self.cpus_per_worker,
            batch_format="numpy",
        )
        for batch in encoded.iter_batches(batch_size=WINDOW, batch_format="numpy"):
            vectors = batch["vector"]
            yield np.stack(vectors) if vectors.ndim == 1 else vectors  # rows may come back as objects


def build_index(
    corpus: str, embedder: str, backend: str, ray_address: str | None = None, workers: int | None = None
) -> dict:
    """The corpus's index in the cache, built here or, with `ray_address` ("local" for a local
    instance), embedded by Ray Data on the cluster; what the index's meta records."""
    import os

    passages, sha = load_corpus(corpus)
    model = embedders.get_embedder(embedder, backend=backend, cache_root=cache_dir())
    retriever = PassageRetriever(passages, model, sha)
    encoder = None
    if ray_address is not None:
        import ray

        for key, value in RAY_DEFAULTS.items():
            os.environ.setdefault(key, value)
        if not ray.is_initialized():
            ray.init(
                address=None if ray_address == "local" else ray_address,
                include_dashboard=False,
                configure_logging=False,
            )
        workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        encoder = RayDataEncoder(NamedEmbedder(embedder, backend), workers)
    retriever.build_or_load(cache_dir(), encoder)
    return {
        **retriever.meta,
        "count": int(retriever.index.ntotal),
        "index": retriever.plan.factory,
        "index_dir": str(retriever.index_dir(cache_dir())),
    }
