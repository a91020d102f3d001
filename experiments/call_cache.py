"""What DSPy's on-disk call cache keys a reply by, what it stores, and what a call learns from it.

DSPy keys a reply by the request (model string, messages, decoding) and leaves the endpoint
out (`api_base` is ignored), so two servers serving different weights under one model name, or
a local server and the provider behind one model string, would answer from each other's
replies. Three hooks on DSPy's `Cache` class (on the class, because `dspy.configure_cache`
replaces the instance) fix what reeval needs, inside a call that set them up only:

- the key of a provider/server call also holds its endpoint (`endpoint_of`), so an entry written
  for one endpoint, or written before the endpoint was keyed, never answers another; local
  models' keys are left as they were (their model string carries the weights' hash), so their
  existing cache entries stay valid;
- a lookup that answered is counted (`CallScope.hits`), so the usage meter tells a cached
  reply from a real call that reported no usage;
- a reply has every known secret taken out before it is stored (a server may echo the key);
- inside `replayed_usage`, a lookup that answered adds the tokens the stored reply took when it was
  made, so a comparison of generators' cost per case does not read 0 on a run answered from the cache.

A case also records the keys its calls looked up (`case_keys`), so a reply the adapter could not
parse can be evicted (`evict`): redoing that case then asks the LM again instead of replaying it.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from experiments.secrets import redact, secret_values

_DEFAULT_PORTS = {"http": 80, "https": 443}
ENDPOINT_KEY = "reeval_endpoint"


def normalise_api_base(api_base: str) -> str:
    """One spelling per endpoint: scheme and host lowercased, a default port and trailing slashes dropped."""
    url = urlsplit(api_base.strip())
    scheme = url.scheme.lower()
    host = (url.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets
    port = f":{url.port}" if url.port and url.port != _DEFAULT_PORTS.get(scheme) else ""
    return urlunsplit((scheme, host + port, url.path.rstrip("/"), url.query, ""))


def endpoint_of(model: str, api_base: str | None) -> str:
    """Where a provider/server call goes: `api_base`, else the provider's address variable DSPy and
    LiteLLM read (OPENAI_API_BASE, …), else the provider's own default service."""
    if api_base:
        return normalise_api_base(api_base)
    prefix = model.split("/", 1)[0]
    for name in (f"{prefix.upper()}_API_BASE", f"{prefix.upper()}_BASE_URL"):
        if os.environ.get(name):
            return normalise_api_base(os.environ[name])
    return f"{prefix}:default"


@dataclass
class CallScope:
    """One top-level LM call: its endpoint (None for a local model), how many lookups answered and the usage
    their stored replies took when made."""

    endpoint: str | None = None
    hits: int = 0
    hit_usages: list[dict] = field(default_factory=list)


@dataclass
class CaseKeys:
    keys: list[str] = field(default_factory=list)


@dataclass
class Replayed:
    """The usage blocks of the stored replies a block's lookups answered, one per call."""

    usages: list[dict] = field(default_factory=list)


_CALL: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar("reeval_lm_call", default=None)
_CASE: contextvars.ContextVar[CaseKeys | None] = contextvars.ContextVar("reeval_case_keys", default=None)
_REPLAYED: contextvars.ContextVar[Replayed | None] = contextvars.ContextVar("reeval_replayed", default=None)


T = TypeVar("T")


@contextmanager
def _bound(var: contextvars.ContextVar, value: T) -> Iterator[T]:
    """`value` as what the patched cache reads from `var` for the block (the cache patched first)."""
    install()
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)


def call_scope(endpoint: str | None) -> AbstractContextManager[CallScope]:
    return _bound(_CALL, CallScope(endpoint))


def replayed_usage() -> AbstractContextManager[Replayed]:
    return _bound(_REPLAYED, Replayed())


def stored_usage(record) -> dict:
    """The usage block of a stored reply: DSPy's own record (a dict with `usage`) or an older entry that
    is the provider's response object; empty when it kept none."""
    usage = record.get("usage") if isinstance(record, dict) else getattr(record, "usage", None)
    if usage is not None and not isinstance(usage, dict):
        usage = usage.model_dump() if hasattr(usage, "model_dump") else vars(usage)
    return usage or {}


def case_keys() -> AbstractContextManager[CaseKeys]:
    """The cache keys a case's calls looked up, in call order (the last is the call that failed last)."""
    return _bound(_CASE, CaseKeys())


def forget_last_call() -> None:
    """Evict the reply of the case's latest call (the one whose reply just failed to parse)."""
    case = _CASE.get()
    if case is not None and case.keys:
        evict(case.keys.pop())


def evict(key: str) -> None:
    """Drop one entry from DSPy's memory and disk caches."""
    import dspy

    cache = dspy.cache
    with cache._lock:
        cache.memory_cache.pop(key, None)
    if cache.enable_disk_cache:
        cache.disk_cache.delete(key)


def _redacted(value, secrets: list[str]):
    """A copy of a cache record with each secret replaced; containers and plain objects are walked."""

    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: _redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_redacted(v, secrets) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if hasattr(value, "__dict__") and not isinstance(value, type):
        import copy

        clone = copy.copy(value)
        for name, item in vars(value).items():
            try:
                object.__setattr__(clone, name, _redacted(item, secrets))
            except (AttributeError, TypeError):
                pass  # a read-only attribute holds no reply text
        return clone
    return value


_installed = False


def install() -> None:
    """Wrap DSPy's Cache methods once per process; idempotent."""
    global _installed
    if _installed:
        return
    from dspy.clients.cache import Cache

    original_key, original_get, original_put = Cache.cache_key, Cache.get, Cache.put

    def cache_key(self, request, ignored_args_for_cache_key=None):
        scope = _CALL.get()
        if scope is not None and scope.endpoint is not None and isinstance(request, dict):
            # The endpoint decides the reply; how long the client waits for it does not.
            request = {k: v for k, v in request.items() if k != "timeout"}
            request[ENDPOINT_KEY] = scope.endpoint
        return original_key(self, request, ignored_args_for_cache_key)

    def get(self, request, ignored_args_for_cache_key=None):
        case = _CASE.get()
        if case is not None:
            try:
                case.keys.append(self.cache_key(request, ignored_args_for_cache_key))
            except Exception:  # noqa: BLE001 - DSPy itself skips the cache for a request it cannot key
                pass
        found = original_get(self, request, ignored_args_for_cache_key)
        scope = _CALL.get()
        if found is not None and scope is not None:
            scope.hits += 1
            scope.hit_usages.append(stored_usage(found))
        replayed = _REPLAYED.get()
        if found is not None and replayed is not None:
            replayed.usages.append(stored_usage(found))
        return found

    def put(self, request, value, ignored_args_for_cache_key=None, enable_memory_cache=True):

        secrets = secret_values()
        if secrets:
            value = _redacted(value, secrets)
        return original_put(self, request, value, ignored_args_for_cache_key, enable_memory_cache)

    Cache.cache_key, Cache.get, Cache.put = cache_key, get, put
    _installed = True
