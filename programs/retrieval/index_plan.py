"""Which FAISS index a corpus gets: exact flat search below about a million vectors, IVF above,
IVF with product quantisation when the full vectors would not fit the memory budget.

All indexes use inner product over L2-normalised vectors (cosine). The plan is recorded with
the index (its ``meta.json``) and with every run that retrieves, so a result can always be
traced to the search that produced it.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

#: Exact search stays under a few tens of ms per query up to about here (measured in
#: benchmarks/retrieval.py); above it IVF answers in a few ms at recall@10 ≥ 0.95.
FLAT_BELOW = 1_000_000
# FAISS warns below 39 training points per list; 64 per list gives stabler centroids.
_TRAIN_PER_LIST = 64
_MAX_TRAIN = 1_000_000
# nprobe = nlist / this: the smallest that kept recall@10 ≥ 0.95 of exact search at 1M vectors in
# benchmarks/retrieval.py.
NPROBE_DIVISOR = 64


@dataclass(frozen=True)
class IndexPlan:
    kind: Literal["flat", "ivf", "ivfpq"]
    nlist: int = 0  # inverted lists (IVF cells)
    nprobe: int = 0  # cells searched per query
    pq_m: int = 0  # PQ sub-quantisers (bytes per vector at 8 bits each)

    @property
    def factory(self) -> str:
        """The ``faiss.index_factory`` string."""
        if self.kind == "flat":
            return "Flat"
        if self.kind == "ivf":
            return f"IVF{self.nlist},Flat"
        return f"IVF{self.nlist},PQ{self.pq_m}x8"

    def train_size(self, count: int) -> int:
        """How many vectors to train on (0: no training)."""
        if self.kind == "flat":
            return 0
        return min(count, _MAX_TRAIN, _TRAIN_PER_LIST * self.nlist)

    def params(self) -> dict[str, int | str]:
        return {"index": self.factory, **{k: v for k, v in asdict(self).items() if k != "kind" and v}}

    def new_index(self, dim: int):
        import faiss

        index = faiss.index_factory(dim, self.factory, faiss.METRIC_INNER_PRODUCT)
        self.configure(index)
        return index

    def configure(self, index) -> None:
        """Set search-time parameters (``nprobe``) on a built or loaded index."""
        if self.kind != "flat":
            import faiss

            faiss.extract_index_ivf(index).nprobe = self.nprobe


def physical_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def plan_index(
    count: int,
    dim: int,
    *,
    flat_below: int = FLAT_BELOW,
    memory_budget: int | None = None,
    nprobe: int | None = None,
) -> IndexPlan:
    """The plan for ``count`` vectors of ``dim`` floats.

    ``memory_budget`` (bytes; default half the machine's memory) decides between IVF over full
    vectors and IVF-PQ: 21M MiniLM vectors take 32 GB as float32 but 1 GB as PQ48.
    """
    if count < flat_below:
        return IndexPlan("flat")
    # √n cells balance the coarse search against the cell scans (1M → 1024, 21M → 4096) and keep
    # k-means training affordable on CPUs; a power of two for tidy params.
    nlist = 2 ** round(math.log2(math.sqrt(count)))
    budget = memory_budget if memory_budget is not None else physical_memory() // 2
    probe = nprobe or max(1, nlist // NPROBE_DIVISOR)
    if count * dim * 4 <= budget:
        return IndexPlan("ivf", nlist=nlist, nprobe=probe)
    # 8 dimensions per byte keeps recall usable for sentence embeddings; m must divide dim.
    pq_m = next(m for m in range(max(1, dim // 8), 0, -1) if dim % m == 0)
    return IndexPlan("ivfpq", nlist=nlist, nprobe=probe, pq_m=pq_m)


def strided_sample(count: int, size: int) -> np.ndarray:
    """``size`` positions spread evenly over ``range(count)``: corpora are often sorted by
    source or title, so the first rows would train centroids on one corner of the space."""
    if size >= count:
        return np.arange(count)
    return np.linspace(0, count - 1, size).round().astype(np.int64)
