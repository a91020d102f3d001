"""Several llama.cpp contexts per local model, so that parallel cases decode in parallel.

A llama.cpp context is not thread-safe, so one context per model serialised every local call
whatever `run.threads` said. A pool holds up to `contexts` contexts of one model, made on demand;
a call borrows one for its duration. llama-cpp-python memory-maps the GGUF file (the default
load mode), so every context of a process shares the weights' pages: a second context costs
its KV cache and compute buffers, not another copy of the model.

The cores are split, never oversubscribed: contexts × threads per context ≤ the cores this
process may use, and a semaphore shared by every pool of one split keeps the number of local
calls decoding at once ≤ contexts, even when cases call different models at the same time.
(llama.cpp's workers spin while they wait: two threads on one core ran 4× slower here, not 2×.)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from programs.cores import available_cores

__all__ = ["ContextPool", "CoreSplit", "available_cores", "decoding_slots", "plan_split"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CoreSplit:
    """How one process's local models use its cores: recorded with each local model's identity."""

    contexts: int  # llama.cpp contexts per model = local calls decoding at once
    threads: int  # threads per context
    cores: int  # the cores the split was made for

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def plan_split(parallel: int, contexts: int | None = None, cores: int | None = None) -> CoreSplit:
    """`parallel` cases in flight → as many contexts as useful (at most one per core), and the
    cores divided evenly among them; `contexts` asks for a number explicitly (capped the same)."""
    cores = cores or available_cores()
    wanted = contexts if contexts is not None else parallel
    n = max(1, min(wanted, cores))
    return CoreSplit(contexts=n, threads=max(1, cores // n), cores=cores)


_SLOTS: dict[CoreSplit, threading.BoundedSemaphore] = {}
_SLOTS_LOCK = threading.Lock()


def decoding_slots(split: CoreSplit) -> threading.BoundedSemaphore:
    """One semaphore per split, shared by all its pools: at most `contexts` local calls at once."""
    with _SLOTS_LOCK:
        if split not in _SLOTS:
            _SLOTS[split] = threading.BoundedSemaphore(split.contexts)
        return _SLOTS[split]


class ContextPool:
    """Up to `size` contexts of one model, made on first need (loading costs seconds)."""

    def __init__(self, factory: Callable[[], Any], size: int, slots: threading.BoundedSemaphore, label: str = ""):
        self.factory = factory
        self.size = size
        self.slots = slots
        self.label = label
        self.contexts: list[Any] = []  # every context made, busy or not
        self._free: list[Any] = []
        self._made = 0  # contexts made or being made
        self._cond = threading.Condition()

    def grow(self, size: int) -> None:
        with self._cond:
            self.size = max(self.size, size)
            self._cond.notify_all()

    @contextmanager
    def context(self) -> Iterator[Any]:
        """Borrow a context for one call: a free one, else a new one while under size, else wait."""
        with self.slots:
            llama = self._take()
            try:
                yield llama
            finally:
                with self._cond:
                    self._free.append(llama)
                    self._cond.notify()

    def _take(self) -> Any:
        with self._cond:
            while not self._free and self._made >= self.size:
                self._cond.wait()
            if self._free:
                return self._free.pop()
            self._made += 1
        try:
            logger.info("%s: llama.cpp context %d of %d", self.label, self._made, self.size)
            llama = self.factory()  # outside the lock: another context may be lent meanwhile
        except BaseException:
            with self._cond:
                self._made -= 1
                self._cond.notify()
            raise
        with self._cond:
            self.contexts.append(llama)
        return llama

    def close(self) -> None:
        with self._cond:
            for llama in self.contexts:
                close = getattr(llama, "close", None)
                if close is not None:
                    close()
            self.contexts.clear()
            self._free.clear()
            self._made = 0
