"""Index plans by corpus size and memory, the length-sorted streaming build, IVF through the
retriever (trained, cached, reloaded with its nprobe) and what a run records about it."""

from __future__ import annotations

import json

import pytest

from programs import retriever as retriever_module
from programs.retrieval.index_plan import IndexPlan, plan_index, strided_sample
from programs.retriever import PassageRetriever
from tests.test_retriever import FakeEmbedder, p


def test_flat_below_a_million_ivf_above_then_sq8_then_pq_as_memory_demands():
    assert plan_index(999_999, 384) == IndexPlan("flat")
    ivf = plan_index(1_000_000, 384, memory_budget=12 * 2**30)
    assert (ivf.kind, ivf.nlist, ivf.nprobe) == ("ivf", 1024, 16) and ivf.factory == "IVF1024,Flat"
    # 21M MiniLM vectors: 32 GB as float32, 8 GB as SQ8, which fits a 12 GB budget
    wiki = plan_index(21_000_000, 384, memory_budget=12 * 2**30)
    assert (wiki.kind, wiki.nlist, wiki.nprobe) == ("ivfsq8", 4096, 64) and wiki.factory == "IVF4096,SQ8"
    assert wiki.params() == {"index": "IVF4096,SQ8", "nlist": 4096, "nprobe": 64}
    small = plan_index(21_000_000, 384, memory_budget=4 * 2**30)
    assert (small.kind, small.pq_m, small.factory) == ("ivfpq", 48, "IVF4096,PQ48x8")
    assert small.params() == {"index": "IVF4096,PQ48x8", "nlist": 4096, "nprobe": 64, "pq_m": 48}
    assert plan_index(21_000_000, 768, memory_budget=0).pq_m == 96
    assert wiki.train_size(21_000_000) == 64 * 4096 and IndexPlan("flat").train_size(10) == 0


def test_strided_sample_spans_the_corpus():
    sample = strided_sample(1000, 5)
    assert sample.tolist() == [0, 250, 500, 749, 999]
    assert strided_sample(3, 10).tolist() == [0, 1, 2]


class RecordingEmbedder(FakeEmbedder):
    def __init__(self):
        super().__init__()
        self.batches: list[list[str]] = []

    def encode(self, texts):
        self.batches.append(list(texts))
        return super().encode(texts)


def pool(n):
    # lengths vary by row, in no order, so a sort is visible
    return [p(f"x{i}", f"T{i}", " ".join(f"w{i}" for _ in range(1 + (i * 7) % 11))) for i in range(n)]


def test_build_streams_windows_each_embedded_longest_first(tmp_path, monkeypatch):
    monkeypatch.setattr(retriever_module, "_WINDOW", 10)
    monkeypatch.setattr(retriever_module, "_EMBED_BATCH", 4)
    embedder = RecordingEmbedder()
    built = PassageRetriever(pool(25), embedder, "1" * 64).build_or_load(tmp_path)
    assert [len(b) for b in embedder.batches] == [4, 4, 2] * 2 + [4, 1]  # windows of 10, 10, 5
    for window in ([t for b in embedder.batches[i : i + 3] for t in b] for i in (0, 3)):
        lengths = [len(t) for t in window]
        assert lengths == sorted(lengths, reverse=True)
    # the vectors are stored in corpus order: passage i is found by its own text
    for i in (0, 9, 10, 24):
        assert built.search(built.embedding_text(i), k=1, distinct_titles=False)[0].id == f"x{i}"
    assert built.meta["plan"] == {"kind": "flat", "nlist": 0, "nprobe": 0, "pq_m": 0}


def test_ivf_index_trains_caches_and_reloads_with_its_nprobe(tmp_path):
    passages = pool(300)
    plan = IndexPlan("ivf", nlist=4, nprobe=4)  # every cell probed: exact, comparable with flat
    ivf = PassageRetriever(passages, FakeEmbedder(), "2" * 64, plan=plan).build_or_load(tmp_path / "a")
    flat = PassageRetriever(passages, FakeEmbedder(), "2" * 64).build_or_load(tmp_path / "b")
    assert ivf.index.is_trained and ivf.index.ntotal == 300
    query = passages[17]["text"]
    assert ivf.search(query, k=3) == flat.search(query, k=3)

    directory = ivf.index_dir(tmp_path / "a")
    meta = json.loads((directory / "meta.json").read_text())
    assert meta["plan"] == {"kind": "ivf", "nlist": 4, "nprobe": 4, "pq_m": 0}
    again = PassageRetriever(passages, (embedder := FakeEmbedder()), "2" * 64).build_or_load(tmp_path / "a")
    assert embedder.texts == 0 and again.plan == plan  # the plan comes back with the index

    import faiss

    assert faiss.extract_index_ivf(again.index).nprobe == 4
    fewer = PassageRetriever(passages, FakeEmbedder(), "2" * 64, plan=IndexPlan("ivf", nlist=4, nprobe=1))
    fewer.build_or_load(tmp_path / "a")
    assert faiss.extract_index_ivf(fewer.index).nprobe == 1  # nprobe is a search setting, not a rebuild
    assert fewer.describe() == {
        "retrieval.corpus_sha256": "2" * 64,
        "retrieval.passages": 300,
        "retrieval.embedder": "fake-bow",
        "retrieval.dim": 64,
        "retrieval.index": "IVF4,Flat",
        "retrieval.nlist": 4,
        "retrieval.nprobe": 1,
    }


def test_another_index_type_is_rebuilt_not_served(tmp_path):
    passages = pool(200)
    PassageRetriever(passages, FakeEmbedder(), "3" * 64).build_or_load(tmp_path)
    asked = PassageRetriever(passages, (embedder := FakeEmbedder()), "3" * 64, plan=IndexPlan("ivf", nlist=2, nprobe=2))
    asked.build_or_load(tmp_path)
    assert embedder.texts > 0 and asked.plan.factory == "IVF2,Flat"


def test_describe_needs_an_index():
    with pytest.raises(RuntimeError, match="build_or_load"):
        PassageRetriever(pool(2), FakeEmbedder(), "4" * 64).describe()
