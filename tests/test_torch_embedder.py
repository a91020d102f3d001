"""The torch backends: bfloat16 autocast where the CPU has it (refused with a reason elsewhere), and
index builds on every core while queries stay on one. A tiny random BERT stands in for MiniLM;
benchmarks/retrieval.py measures the real model."""

from __future__ import annotations

import numpy as np
import pytest

from programs import embedders
from programs.embedders import SentenceTransformerEmbedder, UnsupportedBackendError, get_embedder
from programs.retriever import PassageRetriever
from tests.tiny_model import TEXTS, build_tiny_model


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    monkeypatch.setattr(embedders, "_LOADED", {})


def test_bf16_is_refused_with_a_reason_where_the_cpu_lacks_it(tiny_model, tmp_path, monkeypatch):
    monkeypatch.setattr(embedders, "native_bf16", lambda: False)
    with pytest.raises(UnsupportedBackendError, match="native bfloat16.*choose backend 'torch'"):
        get_embedder(str(tiny_model[0]), backend="torch-bf16", cache_root=tmp_path)


@pytest.mark.skipif(not embedders.native_bf16(), reason="this CPU has no native bfloat16 (AVX512-BF16 or AMX)")
def test_bf16_vectors_are_float32_close_to_torch_and_named_apart(tiny_model, tmp_path):
    directory, expected = tiny_model
    embedder = get_embedder(str(directory), backend="torch-bf16", cache_root=tmp_path)
    assert embedder.name == f"{directory}@torch-bf16"  # its own index cache: the vectors differ slightly
    vectors = embedder.encode(TEXTS)
    assert vectors.dtype == np.float32
    cosines = np.sum(vectors * expected, axis=1)
    assert cosines.min() > 0.99 and not np.array_equal(vectors, expected)


class _ThreadProbe:
    """A model that records torch's thread count at every encode."""

    def __init__(self):
        self.threads: list[int] = []

    def encode(self, texts, **_):
        import torch

        self.threads.append(torch.get_num_threads())
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def test_an_index_build_uses_every_core_and_queries_one(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("REEVAL_THREADS", "2")
    torch.set_num_threads(1)
    probe = _ThreadProbe()
    embedder = SentenceTransformerEmbedder("probe", probe)
    passages = [{"id": f"p{i}", "title": "", "text": f"text {i}"} for i in range(5)]
    retriever = PassageRetriever(passages, embedder, "3" * 64).build_or_load(tmp_path)
    assert probe.threads == [2]
    retriever.search("a query", k=1)
    assert probe.threads == [2, 1] and torch.get_num_threads() == 1
