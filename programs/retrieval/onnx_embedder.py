"""An :class:`~programs.embedders.Embedder` that runs an exported ONNX graph with onnxruntime or
OpenVINO: no torch at encode time, inputs sorted by length so a batch carries little padding."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

Runtime = Literal["onnxruntime", "openvino"]


class OnnxEmbedder:
    """Encodes with one ONNX file; ``threads`` caps the runtime's intra-op threads (llama.cpp
    shares the process and the cores, as with torch in :func:`programs.embedders.get_embedder`)."""

    def __init__(
        self,
        name: str,
        model_path: str | Path,
        meta: dict,
        *,
        runtime: Runtime = "onnxruntime",
        threads: int = 1,
        batch_size: int = 32,
    ):
        from transformers import AutoTokenizer

        self.name = name
        self.model_path = Path(model_path)
        self.runtime = runtime
        self.batch_size = batch_size
        self.inputs: list[str] = list(meta["inputs"])
        self.max_seq_length = int(meta["max_seq_length"])
        self.dim = int(meta["dim"])
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.model_path.parent))
        self._run = _onnxruntime(self.model_path, threads) if runtime == "onnxruntime" else _openvino(
            self.model_path, threads)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Longest first, like sentence-transformers: similar lengths share a batch.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            tokens = self.tokenizer(
                [texts[i] for i in rows], padding=True, truncation=True, max_length=self.max_seq_length,
                return_tensors="np",
            )
            out[rows] = self._run({n: tokens[n].astype(np.int64) for n in self.inputs})
        return out

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.name!r}, {self.runtime}, {self.model_path.name})"


def _onnxruntime(path: Path, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return lambda feed: session.run(None, feed)[0]


def _openvino(path: Path, threads: int):
    import openvino as ov

    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_NUM_THREADS": threads})
    return lambda feed: compiled(feed)[0]
