"""Tokens, time and cost an LM spends: for a block (`measured`), and for a provider LM's whole run.

Local models count their calls in their engine (`EngineStats`). A provider or server LM is a
`MeteredLM`: the same figures (calls answered, prompt and completion tokens, seconds, truncated
replies) from the history entry DSPy writes for each call, plus the cost DSPy prices from
LiteLLM's cost map where it knows the model, the calls that failed after DSPy's retries, and the
requests sent, retries and failed attempts included: a call rate-limited three times and then
answered is one call and four requests, one refused four times is no call, one error and four requests.
A call answered from the cache is not counted (the cache says it answered), so a resumed or cached
run shows what it really spent; a real call is counted whether or not the server reported its
tokens, and token figures are left out (unknown, not 0) when some call's reply had no usage block.
Calls the cache answered are counted apart (`cached_calls` and the tokens they took when made): what an
estimate scales from. Cost is the reported tokens at the model's price (experiments/lm/prices.py), and
every request first passes the run's spend cap (experiments/lm/spend.py), where one is set.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import dspy

from experiments.call_cache import call_scope, endpoint_of, install, replayed_usage
from experiments.lm import spend
from experiments.lm.prices import Price, dollars, request_bound


def total_tokens(entry: dict) -> int:
    if entry.get("total_tokens"):
        return int(entry["total_tokens"])
    return int(
        (entry.get("prompt_tokens") or entry.get("input_tokens") or 0)
        + (entry.get("completion_tokens") or entry.get("output_tokens") or 0)
    )


def prompt_read_shares(metrics: dict[str, float]) -> dict[str, float]:
    """A run's `lm.<label>.prompt_read_share` metrics by label: per local model, the prompt tokens its llama.cpp
    contexts decoded ÷ those sent (experiments/lm/prompt_reads.py)."""
    suffix = ".prompt_read_share"
    return {k[len("lm.") : -len(suffix)]: v for k, v in metrics.items() if k.startswith("lm.") and k.endswith(suffix)}


def run_cost(usages: dict[str, dict]) -> dict[str, float]:
    """The dollars every model of a run spent together (`cost_usd`), where each model that answered a call has a
    price; none where one has not (an unknown share makes the total unknown)."""
    if any(usage.get("calls") and "cost_usd" not in usage for usage in usages.values()):
        return {}
    return {"cost_usd": round(sum(float(usage.get("cost_usd", 0.0)) for usage in usages.values()), 8)}


@contextmanager
def measured(model: str) -> Iterator[dict]:
    """Yields a dict that holds, once the block ends, the tokens its calls took — `model`'s real calls and
    every reply the cache answered, counted as it was when made — the calls the cache answered
    (`cached_calls`), and the block's wall `seconds` (a cached call takes none)."""
    out: dict = {}
    started = time.perf_counter()
    with dspy.track_usage() as tracker, replayed_usage() as replayed:
        yield out
    usage = tracker.get_total_tokens().get(model, {})
    out.update(
        tokens=total_tokens(usage) + sum(total_tokens(u) for u in replayed.usages),
        cached_calls=len(replayed.usages),
        seconds=round(time.perf_counter() - started, 3),
    )


def _finish_reasons(response) -> list[str]:
    """A native reply (one or several lm15 Responses) or LiteLLM's OpenAI-shaped one."""
    replies = response if isinstance(response, (list, tuple)) else [response]
    reasons = []
    for reply in replies:
        if getattr(reply, "finish_reason", None) is not None:
            reasons.append(str(reply.finish_reason))
            continue
        choices = reply.get("choices") if isinstance(reply, dict) else getattr(reply, "choices", None)
        for choice in choices or []:
            reason = choice.get("finish_reason") if isinstance(choice, dict) else getattr(choice, "finish_reason", None)
            reasons.append(str(reason))
    return reasons


class CallMeter:
    """What a provider LM spent. Shared by the copies DSPy makes of the LM."""

    def __init__(self, model: str = "", price: Price | None = None):
        self._lock = threading.Lock()
        self.model, self.price = model, price
        self.calls = self.prompt_tokens = self.completion_tokens = self.truncated = self.errors = 0
        self.requests = 0
        self.priced_calls = self.unreported_calls = 0
        self.cached_calls = self.cached_prompt_tokens = self.cached_completion_tokens = 0
        self.cost = 0.0
        self.seconds = 0.0

    def dollars(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        return dollars(self.model, prompt_tokens, completion_tokens, self.price)

    def add(
        self,
        entries: list[dict],
        seconds: float,
        cache_hits: int = 0,
        requests: int = 0,
        cached_usages: list[dict] | None = None,
    ) -> None:
        """`entries`: the history entries of one top-level call; `cache_hits` of them came from the cache
        (DSPy writes an entry for those too, with an empty usage), `cached_usages` the usage their stored
        replies took when made; `requests`: what the call sent."""
        with self._lock:
            self.seconds += seconds
            self.requests += requests
            for usage in cached_usages or []:
                self.cached_calls += 1
                self.cached_prompt_tokens += int(usage.get("prompt_tokens") or 0)
                self.cached_completion_tokens += int(usage.get("completion_tokens") or 0)
            for entry in entries:
                usage = entry.get("usage") or {}
                if not usage and cache_hits > 0:
                    cache_hits -= 1
                    continue
                self.calls += 1
                self.truncated += int("length" in _finish_reasons(entry.get("response")))
                if usage.get("prompt_tokens") is None and usage.get("completion_tokens") is None:
                    self.unreported_calls += 1
                    continue
                prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
                self.prompt_tokens += prompt
                self.completion_tokens += completion
                cost = self.dollars(prompt, completion)
                if cost is not None:
                    self.priced_calls += 1
                    self.cost += cost

    def failed(self, seconds: float, requests: int = 0) -> None:
        with self._lock:
            self.errors += 1
            self.seconds += seconds
            self.requests += requests

    def merge(self, other: dict[str, float]) -> None:
        """Add what another process (a Ray worker) spent with the same LM; its cost counts only if
        it priced every call (`as_dict` leaves cost_usd out otherwise)."""
        with self._lock:
            calls = int(other.get("calls", 0))
            self.calls += calls
            if "prompt_tokens" not in other:
                self.unreported_calls += calls
            self.prompt_tokens += int(other.get("prompt_tokens", 0))
            self.completion_tokens += int(other.get("completion_tokens", 0))
            self.truncated += int(other.get("truncated", 0))
            self.errors += int(other.get("errors", 0))
            self.requests += int(other.get("requests", 0))
            self.seconds += float(other.get("seconds", 0.0))
            if "cost_usd" in other:
                self.priced_calls += calls
                self.cost += float(other["cost_usd"])
            self.cached_calls += int(other.get("cached_calls", 0))
            self.cached_prompt_tokens += int(other.get("cached_prompt_tokens", 0))
            self.cached_completion_tokens += int(other.get("cached_completion_tokens", 0))

    def as_dict(self) -> dict[str, float]:
        out = {
            "calls": self.calls,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "truncated": self.truncated,
            "errors": self.errors,
        }
        # Tokens a server did not report are unknown, not zero: no token figure unless every call reported them
        # (and none at all when no call was answered: nothing replied, so nothing was counted).
        if self.calls and not self.unreported_calls:
            out.update(prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens)
        # An unknown price is not zero: no cost figure unless every call was priced (the config's price or
        # LiteLLM's map) and reported its tokens.
        if self.calls and self.priced_calls == self.calls:
            out["cost_usd"] = round(self.cost, 8)
        if self.cached_calls:
            out.update(
                cached_calls=self.cached_calls,
                cached_prompt_tokens=self.cached_prompt_tokens,
                cached_completion_tokens=self.cached_completion_tokens,
            )
        return out

    def __deepcopy__(self, memo) -> CallMeter:
        return self  # a deep copy of the LM still spends on the same run

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


# The history entries DSPy writes during the call in progress (per thread and task).
_ENTRIES: contextvars.ContextVar[list | None] = contextvars.ContextVar("reeval_lm_entries", default=None)
# The requests the call in progress sent. A list, not an int: DSPy runs parts of an async call in worker
# threads with a copy of the context, and a copy shares the list.
_REQUESTS: contextvars.ContextVar[list | None] = contextvars.ContextVar("reeval_lm_requests", default=None)


class _Admitted:
    """One attempt the run's spend cap admitted: its bound until it ends, then what it cost."""

    def __init__(self, cap: spend.SpendCap, meter: CallMeter, bound: float, results: list):
        self.cap, self.meter, self.bound, self.results, self.before = cap, meter, bound, results, len(results)

    def ended(self, exc: BaseException | None) -> None:
        usage = next((r.usage for r in self.results[self.before :] if getattr(r, "usage", None)), None)
        cost = None
        if usage and usage.get("prompt_tokens") is not None:
            cost = self.meter.dollars(int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0))
        if cost is None:
            status = getattr(exc, "status", None)
            refused = exc is not None and isinstance(status, int) and status >= 400
            cost = 0.0 if refused else self.bound  # refused: not billed; no reply or no usage: perhaps billed
        self.cap.settle(self.bound, cost)


def _admit(args: tuple) -> _Admitted | None:
    """Ask the run's spend cap to admit the attempt `args` (DSPy's: lm, call, backend, request, provider, state,
    results) at the most it can cost; raises SpendCapHit when it could pass the cap."""
    cap = spend.active()
    meter = getattr(args[0], "meter", None) if args else None
    if cap is None or not isinstance(meter, CallMeter) or len(args) < 7:
        return None
    lm, call, results = args[0], args[1], args[6]
    legacy = getattr(call, "legacy", None) or {}
    max_tokens = legacy.get("max_tokens") or legacy.get("max_completion_tokens") or lm.kwargs.get("max_tokens")
    bound, _ = request_bound(lm.model, legacy.get("messages") or [], max_tokens, meter.price)
    if bound is None:  # refused before the run started (experiments/launch.py); never sent unbounded
        raise spend.SpendCapHit(cap.cap, cap.charged, float("inf"), lm.model)
    cap.admit(bound, lm.model)
    return _Admitted(cap, meter, bound, results)


def _counted(attempt):
    """DSPy's attempt function, counting each call of it as one request: DSPy's retry loop calls it once per
    try, and neither engine under it (lm15, which never retries, and LiteLLM, called with num_retries=0)
    sends more than one. Each request passes the run's spend cap first."""

    def count() -> None:
        sent = _REQUESTS.get()
        if sent is not None:
            sent.append(1)

    if inspect.iscoroutinefunction(attempt):

        @functools.wraps(attempt)
        async def counted_async(*args, **kwargs):
            admitted = _admit(args)
            count()
            try:
                result = await attempt(*args, **kwargs)
            except Exception as exc:
                if admitted is not None:
                    admitted.ended(exc)
                raise
            if admitted is not None:
                admitted.ended(None)
            return result

        return counted_async

    @functools.wraps(attempt)
    def counted(*args, **kwargs):
        admitted = _admit(args)
        count()
        try:
            result = attempt(*args, **kwargs)
        except Exception as exc:
            if admitted is not None:
                admitted.ended(exc)
            raise
        if admitted is not None:
            admitted.ended(None)
        return result

    return counted


def count_requests() -> None:
    """Wrap DSPy's attempt functions once per process. A DSPy without them fails here, loudly, rather than
    reporting no request."""
    from dspy.clients import execution

    for name in ("_attempt", "_aattempt"):
        attempt = getattr(execution, name)
        if not hasattr(attempt, "__wrapped__"):
            setattr(execution, name, _counted(attempt))


class MeteredLM(dspy.LM):
    """dspy.LM that adds each call's usage and cost to its `meter`. DSPy writes one history entry
    per call, cache hits included (with no usage); a failed call writes none. Its calls' cache
    keys hold its endpoint (experiments/call_cache.py)."""

    def __init__(self, *args, price: Price | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.meter = CallMeter(self.model, price)
        self.cache_endpoint = endpoint_of(self.model, kwargs.get("api_base"))
        install()
        count_requests()

    def update_history(self, entry):
        entries = _ENTRIES.get()
        if entries is not None:
            entries.append(entry)
        super().update_history(entry)

    def __call__(self, *args, **kwargs):
        with self._metered():
            return super().__call__(*args, **kwargs)

    async def acall(self, *args, **kwargs):
        with self._metered():
            return await super().acall(*args, **kwargs)

    @contextlib.contextmanager
    def _metered(self):
        """One top-level call: its entries and seconds to the meter, or a failed call."""
        token = _ENTRIES.set([])
        sent: list = []
        requests = _REQUESTS.set(sent)
        started = time.perf_counter()
        try:
            with call_scope(self.cache_endpoint) as scope:
                yield
        except Exception:
            self.meter.failed(time.perf_counter() - started, len(sent))
            raise
        else:
            self.meter.add(_ENTRIES.get(), time.perf_counter() - started, scope.hits, len(sent), scope.hit_usages)
        finally:
            _ENTRIES.reset(token)
            _REQUESTS.reset(requests)
