"""ONNX export of a sentence-transformers directory: offline, cached by content hash, and encoding as
torch does (float32 exactly, int8 closely), with onnxruntime and OpenVINO. A tiny random BERT stands
in for MiniLM so the test takes seconds; benchmarks/retrieval.py measures the real model."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from programs.retrieval import onnx_export  # noqa: E402
from programs.retrieval.onnx_embedder import OnnxEmbedder  # noqa: E402
from tests.tiny_model import TEXTS, build_tiny_model  # noqa: E402


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One export cache for the module: exporting is the slow part, and reuse is what is tested."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def test_export_matches_torch_and_is_cached_by_content(tiny_model, cache, offline, monkeypatch):
    directory, expected = tiny_model
    path, meta = onnx_export.exported(directory, cache)
    assert path.name == "model.onnx" and meta["dim"] == 32 and meta["max_seq_length"] == 48
    assert meta["inputs"] == ["input_ids", "token_type_ids", "attention_mask"]
    assert path.parent.name.endswith(f"{onnx_export.model_digest(directory)[:16]}-v{onnx_export.EXPORT_FORMAT}")
    vectors = OnnxEmbedder("tiny@onnx", path, meta).encode(TEXTS)
    assert vectors.shape == (4, 32) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected, atol=1e-5)  # row order survives the length sort

    # cached: a second call exports nothing; int8 is made once from the cached float32 graph
    monkeypatch.setattr(onnx_export, "_export", lambda *a: pytest.fail("exported twice"))
    int8_path, _ = onnx_export.exported(directory, cache, int8=True)
    assert int8_path.name == "model_int8.onnx" and int8_path.parent == path.parent
    quantized = OnnxEmbedder("tiny@onnx-int8", int8_path, meta).encode(TEXTS)
    assert (quantized * expected).sum(axis=1).min() > 0.97  # int8 weights: close, not equal
    assert not (quantized == vectors).all()
    assert not [p for p in path.parent.parent.iterdir() if p.name.startswith(".")]  # no temp left


def test_changed_weights_get_a_new_export(tiny_model, tmp_path, offline):
    import shutil

    directory, _ = tiny_model
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    first = onnx_export.export_dir(copy, tmp_path)
    assert first.name.replace("copy", "st") == onnx_export.export_dir(directory, tmp_path).name  # content, not path
    (copy / "README.md").write_text("docs do not change the model")
    assert onnx_export.export_dir(copy, tmp_path) == first
    weights = next(copy.rglob("model.safetensors"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert onnx_export.export_dir(copy, tmp_path) != first


@pytest.mark.skipif(importlib.util.find_spec("openvino") is None, reason="openvino is not installed")
def test_openvino_runs_the_same_graph_and_names_its_precision(tiny_model, cache, offline):
    """OpenVINO computes in bfloat16 where the CPU has it: other vectors, so another index cache name."""
    directory, expected = tiny_model
    path, meta = onnx_export.exported(directory, cache)
    embedder = OnnxEmbedder("tiny@openvino", path, meta, runtime="openvino")
    vectors = embedder.encode(TEXTS)
    if embedder.precision == "f32":
        assert embedder.name == "tiny@openvino"
        np.testing.assert_allclose(vectors, expected, atol=1e-4)
    else:
        assert embedder.name == f"tiny@openvino-{embedder.precision}"
        assert (vectors * expected).sum(axis=1).min() > 0.99


def test_an_index_build_gets_a_session_on_every_core(tiny_model, cache, offline, monkeypatch):
    directory, expected = tiny_model
    path, meta = onnx_export.exported(directory, cache)
    embedder = OnnxEmbedder("tiny@onnx", path, meta, threads=1)
    single = embedder._run
    monkeypatch.setenv("REEVAL_THREADS", "2")
    with embedder.bulk():
        assert embedder._run is not single
        np.testing.assert_allclose(embedder.encode(TEXTS), expected, atol=1e-5)
    bulk = embedder._bulk_run
    with embedder.bulk():
        assert embedder._run is bulk  # made once
    assert embedder._run is single
    monkeypatch.setenv("REEVAL_THREADS", "1")
    with embedder.bulk():
        assert embedder._run is single  # nothing to gain on one core


def test_get_embedder_names_backends_and_refuses_unknown_ones(tiny_model, cache, offline):
    from programs.embedders import UnknownBackendError, embedder_name, get_embedder

    directory, expected = tiny_model
    assert embedder_name("all-MiniLM-L6-v2", "torch") == "all-MiniLM-L6-v2"  # torch indexes keep their cache
    embedder = get_embedder(str(directory), backend="onnx", cache_root=cache)
    assert embedder.name == f"{directory}@onnx"
    np.testing.assert_allclose(embedder.encode(TEXTS[:2]), expected[:2], atol=1e-5)
    with pytest.raises(UnknownBackendError, match="onnx-int8"):
        get_embedder(str(directory), backend="onnx_int8", cache_root=cache)
