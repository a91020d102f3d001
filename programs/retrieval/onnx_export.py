"""Export a sentence-transformers model directory to one ONNX graph (transformer, pooling and
normalisation together), and its int8 twin, cached by the model's content hash.

Why not ``SentenceTransformer(..., backend="onnx")``: sentence-transformers delegates export to
optimum-onnx, whose releases pin ``transformers<4.58`` while sentence-transformers 6 needs
``transformers>=5`` (with both forced in, optimum's exporter fails importing
``transformers.modeling_utils.get_parameter_dtype``; optimum-intel's OpenVINO path fails the same
way). So the graph is traced with ``torch.onnx.export`` from the already-installed torch, and
onnxruntime's own ``quantize_dynamic`` makes the int8 file. Export reads only the local model
directory: it works offline (``HF_HUB_OFFLINE=1``).

Cache layout: ``<cache_root>/embedders/onnx/<model dir name>-<sha256[:16]>-v<EXPORT_FORMAT>/``
holding ``model.onnx``, ``model_int8.onnx`` (on first int8 use), the tokenizer and ``export.json``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path

logger = logging.getLogger(__name__)

# Bump when the exported graph or its quantisation changes: old exports are then ignored.
EXPORT_FORMAT = 1
OPSET = 17
FP32_FILE = "model.onnx"
INT8_FILE = "model_int8.onnx"
META_FILE = "export.json"
# Files that do not change what the model computes; the backends' own subfolders are outputs.
_IGNORED = {"README.md", ".gitattributes"}
_IGNORED_DIRS = {"onnx", "openvino", ".git"}


def model_digest(model_dir: Path) -> str:
    """SHA-256 over the relative path and bytes of every file that defines the model."""
    digest = hashlib.sha256()
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(model_dir)
        if rel.name in _IGNORED or rel.parts[0] in _IGNORED_DIRS:
            continue
        digest.update(rel.as_posix().encode() + b"\0")
        with open(path, "rb") as f:
            while block := f.read(1 << 22):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def export_dir(model_dir: Path, cache_root: Path) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model_dir.name) or "model"
    return cache_root / "embedders" / "onnx" / f"{name}-{model_digest(model_dir)[:16]}-v{EXPORT_FORMAT}"


def exported(model_dir: str | Path, cache_root: str | Path, *, int8: bool = False) -> tuple[Path, dict]:
    """The ONNX file for ``model_dir`` (exporting it on first use) and the export's metadata."""
    model_dir, cache_root = Path(model_dir), Path(cache_root)
    target = export_dir(model_dir, cache_root)
    if not (target / META_FILE).is_file():
        _export(model_dir, target)
    meta = json.loads((target / META_FILE).read_text())
    if not int8:
        return target / FP32_FILE, meta
    if not (target / INT8_FILE).is_file():
        _quantize(target / FP32_FILE, target / INT8_FILE)
    return target / INT8_FILE, meta


def _export(model_dir: Path, target: Path) -> None:
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer

    logger.info("exporting %s to ONNX in %s (once per model version)", model_dir, target)
    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True).eval()
    sample = model.preprocess(["an example passage to trace", "a second, longer example passage to trace"])
    names = [k for k, v in sample.items() if torch.is_tensor(v)]

    class Sentences(torch.nn.Module):
        """Token ids in, L2-normalised sentence embeddings out: the whole SentenceTransformer."""

        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *tensors):
            features = dict(zip(names, tensors, strict=True))
            embedding = self.model(features)["sentence_embedding"]
            return torch.nn.functional.normalize(embedding, p=2, dim=1)

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    tmp.chmod(0o755)  # mkdtemp's 0700 would lock a team-shared REEVAL_CACHE_DIR to one user
    try:
        with torch.no_grad(), warnings.catch_warnings():
            # The tracer's notes on constant-folded Python branches (pooling's shape check) are expected.
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Sentences().eval(),
                tuple(sample[n] for n in names),
                str(tmp / FP32_FILE),
                input_names=names,
                output_names=["sentence_embedding"],
                dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "sentence_embedding": {0: "batch"}},
                opset_version=OPSET,
                # The TorchScript exporter needs nothing beyond torch; the dynamo one needs onnxscript.
                dynamo=False,
            )
        AutoTokenizer.from_pretrained(str(model_dir)).save_pretrained(str(tmp))
        meta = {
            "format": EXPORT_FORMAT,
            "source": str(model_dir),
            "source_sha256": model_digest(model_dir),
            "inputs": names,
            "max_seq_length": int(model.max_seq_length or 512),
            "dim": int(model.get_embedding_dimension()),
            "torch": torch.__version__,
        }
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2))
        try:
            os.rename(tmp, target)
        except OSError:  # another process exported it first: theirs is the same model
            if not (target / META_FILE).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logger.info("quantising %s to int8", source)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".int8-", suffix=".onnx")
    os.close(fd)
    try:
        # Per-channel weight scales: per-tensor int8 bent MiniLM's embeddings to cosine 0.96 of
        # float32 (recall suffered); per-channel kept 0.99. Activations are quantised per batch.
        quantize_dynamic(source, tmp, weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
