"""A spend cap: no provider request is sent that could take a run's spending past `run.max_cost`.

Before each request (a retry is a request of its own) the cap admits the most that request can cost, its prompt's
tokens and a reply of `max_tokens` at the model's price (experiments/lm/prices.py), or stops the run. Once the
attempt ends, that bound is replaced by what it cost: the usage its reply reported; the bound itself for an
attempt that got no reply (a request that timed out may still have been billed) or a reply without usage; nothing
for one the server refused with an error status (a provider does not bill a 429 or a 500).

What a run was charged is kept beside its checkpoint (`runs/<run-id>/spend.json`) after every request, so the cap
holds for the run across invocations: a resume with a higher cap goes on from what was spent before.

`SpendCapHit` derives from BaseException, as KeyboardInterrupt does: it must stop the run, and the per-case
error handlers (`except Exception`: a case's failure is recorded on the case) must not turn it into one case's
error. Cases it interrupts are not recorded; their answered calls are in the call cache, so a resume pays for
them once.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SPEND_FILE = "spend.json"


class SpendCapHit(BaseException):
    """The next request could pass the cap: the run stops before sending it."""

    def __init__(self, cap: float, charged: float, bound: float, model: str):
        super().__init__(
            f"spend cap ${cap:.4f} reached (run.max_cost): ${charged:.4f} charged so far, and the next request to "
            f"{model} could cost up to ${bound:.4f}"
        )
        self.cap, self.charged, self.bound, self.model = cap, charged, bound, model


class SpendCap:
    """Dollars charged to one run, and those admitted to requests still in flight."""

    def __init__(self, cap: float, path: Path | None = None):
        self.cap = cap
        self.path = path
        self.charged_before = read_charged(path) if path is not None else 0.0
        self.charged = self.charged_before
        self.in_flight = 0.0
        self.requests = 0
        self._lock = threading.Lock()

    def admit(self, bound: float, model: str) -> None:
        with self._lock:
            if self.charged + self.in_flight + bound > self.cap:
                raise SpendCapHit(self.cap, self.charged + self.in_flight, bound, model)
            self.in_flight += bound
            self.requests += 1

    def settle(self, bound: float, cost: float) -> None:
        with self._lock:
            self.in_flight -= bound
            self.charged += cost
            if self.path is not None:
                write_charged(self.path, self.charged)


def read_charged(path: Path) -> float:
    try:
        return float(json.loads(path.read_text(encoding="utf-8"))["charged_usd"])
    except FileNotFoundError:
        return 0.0


def write_charged(path: Path, charged: float) -> None:
    if not path.parent.is_dir():
        return  # a run refused before its folder was made has nothing to keep it in
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"charged_usd": round(charged, 8)}), encoding="utf-8")
    os.replace(tmp, path)


# The cap of the run this process is running: one at a time (a run holds its folder's lock), read by every
# provider LM's requests, whichever thread or stage sends them.
_ACTIVE: SpendCap | None = None


def active() -> SpendCap | None:
    return _ACTIVE


@contextmanager
def capped(cap: SpendCap | None) -> Iterator[SpendCap | None]:
    global _ACTIVE
    previous, _ACTIVE = _ACTIVE, cap
    try:
        yield cap
    finally:
        _ACTIVE = previous
