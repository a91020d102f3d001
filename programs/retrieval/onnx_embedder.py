"""An :class:`~programs.embedders.Embedder` that runs an exported ONNX graph with onnxruntime or
OpenVINO: no torch at encode time, inputs sorted by length so a batch carries little padding.

OpenVINO computes in bfloat16 on CPUs that have it natively (its CPU plugin's default there): about
twice float32's speed at recall@10 0.99 of it, but other vectors than on a CPU without it. So the
precision is part of the embedder's name, which names its index cache, and a shared cache never
serves one machine's index to the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import numpy as np

from programs.cores import available_cores

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

        self.model_path = Path(model_path)
        self.runtime = runtime
        self.batch_size = batch_size
        self.inputs: list[str] = list(meta["inputs"])
        self.max_seq_length = int(meta["max_seq_length"])
        self.dim = int(meta["dim"])
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.model_path.parent))
        self.threads = threads
        self._run, self.precision = self._load(threads)
        self.name = name if self.precision == "f32" else f"{name}-{self.precision}"
        self._bulk_run: Callable | None = None

    def _load(self, threads: int) -> tuple[Callable, str]:
        return (
            _onnxruntime(self.model_path, threads)
            if self.runtime == "onnxruntime"
            else _openvino(self.model_path, threads)
        )

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Every core this process may use while an index is built (a second session, made once: a
        runtime's thread count is fixed when its session is made); queries keep theirs."""
        cores = available_cores()
        if cores <= self.threads:
            yield
            return
        if self._bulk_run is None:
            self._bulk_run = self._load(cores)[0]
        single, self._run = self._run, self._bulk_run
        try:
            yield
        finally:
            self._run = single

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Longest first, like sentence-transformers: similar lengths share a batch.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            tokens = self.tokenizer(
                [texts[i] for i in rows],
                padding=True,
                truncation=True,
                max_length=self.max_seq_length,
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
    return (lambda feed: session.run(None, feed)[0]), "f32"


def _openvino(path: Path, threads: int):
    import openvino as ov

    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_NUM_THREADS": threads})
    precision = compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()  # "f32", "bf16" or "f16"
    return (lambda feed: compiled(feed)[0]), precision
