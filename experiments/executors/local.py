"""Cases in this process: one at a time, or `run.threads` at once in a thread pool (provider
calls wait on the network; local models decode on the contexts of their pools)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from experiments.executors.worker import process_case


class LocalExecutor:
    kind = "local"

    def __init__(self, task, threads: int):
        self.task = task
        self.threads = threads
        self._pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def describe(self) -> dict:
        return {"executor": self.kind, "executor.threads": self.threads}

    def map(self, todo: list) -> Iterator[list[dict]]:
        """Records of each case, in the order of `todo`."""
        if self.threads <= 1:
            yield from (process_case(self.task, example) for example in todo)
            return
        if self._pool is None:  # a later map (a bench stage that maps in blocks) reuses the pool
            self._pool = ThreadPoolExecutor(max_workers=self.threads)
        yield from self._pool.map(lambda example: process_case(self.task, example), todo)

    def usage(self) -> dict[str, dict]:
        return {}  # the run's own engines counted every call

    def close(self) -> None:
        if self._pool is not None:
            # A run stopped by its error budget must not first run every case still queued.
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
