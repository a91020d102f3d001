"""One llama.cpp model per weights file for every context of a process.

llama-cpp-python's `Llama` loads its own `llama_model` for each context. On a CPU build a loaded model is
more than the mapped file: llama.cpp repacks the quantised weights into the layout its kernels read
(anonymous memory, about 640 MB for qwen2.5-1.5b), and each context maps the file again, which RSS counts
once per mapping. Two contexts of qwen2.5-1.5b held 1.74 GB of anonymous memory and 3.9 GB of RSS, when
llama.cpp lets any number of contexts read one model (its server does).

`sharing_weights()` is held around a `Llama(...)` construction: the `LlamaModel` that `Llama.__init__`
builds becomes a borrowed handle on the process's model for that file and parameters, loaded by the first
context and freed when the last context holding it closes. The contexts' KV caches stay their own, and
every context reads the same weights with the same kernels, so replies do not change.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any

_LOCK = threading.RLock()
_MODELS: dict[tuple, _Shared] = {}
# The load parameters that make two loads of one file differ; the struct's pointers (callbacks, overrides)
# are per caller and left out.
_LOAD_FIELDS = ("n_gpu_layers", "split_mode", "main_gpu", "vocab_only", "load_mode", "use_extra_bufts", "check_tensors")


class _Shared:
    def __init__(self, key: tuple, model: Any):
        self.key = key
        self.model = model
        self.users = 0


class BorrowedModel:
    """Stands in for `_internals.LlamaModel` inside one `Llama`: every attribute is the shared model's, and
    `close` (which the `Llama` calls as it closes) gives the handle back."""

    def __init__(self, shared: _Shared):
        self._shared = shared
        self._closed = False
        shared.users += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shared.model, name)

    def close(self) -> None:
        with _LOCK:
            if self._closed:
                return
            self._closed = True
            shared = self._shared
            shared.users -= 1
            if shared.users == 0:
                _MODELS.pop(shared.key, None)
                shared.model.close()


def _params_key(params: Any) -> tuple:
    return tuple(getattr(params, name, None) for name in _LOAD_FIELDS)


def loaded_models() -> dict[str, int]:
    """Weights files held, with the contexts holding each (for tests and memory reports)."""
    with _LOCK:
        return {key[0]: shared.users for key, shared in _MODELS.items()}


@contextmanager
def sharing_weights():
    """While held, `llama_cpp.Llama(...)` borrows the process's model for its file instead of loading one.
    Hold it around construction only, under the caller's load lock: it swaps a module attribute."""
    import llama_cpp._internals as internals

    load = internals.LlamaModel

    def borrow(*, path_model: str, params: Any, verbose: bool = True) -> BorrowedModel:
        key = (str(path_model), *_params_key(params))
        with _LOCK:
            shared = _MODELS.get(key)
            if shared is None:
                shared = _MODELS[key] = _Shared(key, load(path_model=path_model, params=params, verbose=verbose))
            return BorrowedModel(shared)

    internals.LlamaModel = borrow
    try:
        yield
    finally:
        internals.LlamaModel = load
