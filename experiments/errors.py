"""Classify a failed case into `error:<kind>`: counted and reported, never scored as a wrong answer.

Provider and server faults arrive as DSPy's LM errors (after DSPy's own retries), each with a
stable `code`; that code names the kind. Kinds: `rate_limit` (429), `server` (5xx), `timeout`,
`connection` (unreachable), `bad_response` (a reply that is not a completion: truncated or empty
JSON), `auth`, `bad_request` (the server refused the request itself: a model it does not serve, a
parameter it does not take), `unsupported` (the LM client cannot send this request to this model),
`lm` (any other failure the LM client reports; the stored error says which), `parse` (an answer the
adapter cannot read), `context_overflow`, `exception` (anything else).
"""

from __future__ import annotations

import re

from experiments.call_cache import forget_last_call
from experiments.secrets import redact

# DSPy's LMError.code -> our kind; codes not listed are "lm".
_LM_CODES = {
    "rate_limit": "rate_limit",
    "server": "server",
    "timeout": "timeout",
    "lock_timeout": "timeout",
    "auth": "auth",
    "billing": "auth",
    "not_configured": "auth",
    "context_window_exceeded": "context_overflow",
    "invalid_request": "bad_request",
    "unsupported_model": "bad_request",
    "configuration": "unsupported",
    "unsupported_feature": "unsupported",
}


def _lm_error_kind(exc: BaseException) -> str | None:
    from dspy.utils.exceptions import LMError

    if not isinstance(exc, LMError):
        return None
    code = exc.code or ""
    text = str(exc).lower()
    if code == "transport":  # no reply at all: the client gave up waiting, or never got through
        return "timeout" if "timed out" in text or "timeout" in text else "connection"
    if code == "provider" and (exc.status is None or 200 <= exc.status < 300):
        return "bad_response"  # the server said OK but sent no readable completion
    if code == "provider" and 400 <= exc.status < 500:
        return "bad_request"  # a refusal DSPy has no narrower class for (404 for an unknown path or model)
    return _LM_CODES.get(code, "lm")


def error_kind(exc: BaseException) -> str:
    name = type(exc).__name__
    text = str(exc).lower()
    if name == "AdapterParseError" or "parse" in name.lower():
        return "parse"
    kind = _lm_error_kind(exc)
    if kind is not None:
        return kind
    if "context window" in text or "exceed context" in text or "too long" in text:
        return "context_overflow"
    if "ratelimit" in name.lower() or "rate limit" in text:
        return "rate_limit"
    if "timeout" in name.lower() or "timed out" in text:
        return "timeout"
    if "LM" in name or "API" in name or "Connection" in name:
        return "lm"
    return "exception"


def error_status(exc: BaseException) -> str:
    """`error:<kind>` of a failed call. A reply the adapter could not parse is also evicted from the call
    cache (experiments/call_cache.py): it is no answer, and kept it would be replayed by every redo."""
    kind = error_kind(exc)
    if kind == "parse":
        forget_last_call()
    return f"error:{kind}"


# The client library's advice, appended to its messages, speaks of its own API and contradicts reeval's
# (reeval does retry, and its timeout is the config's `timeout`): a stored error keeps the provider's words.
_CLIENT_ADVICE = (
    re.compile(r"\n\s*To fix:.*", re.DOTALL),
    re.compile(r";?\s*this is lm15's read timeout, not a server failure[^\n]*"),
)


def strip_client_advice(text: str) -> str:
    for pattern in _CLIENT_ADVICE:
        text = pattern.sub("", text)
    return text.rstrip()


def error_text(exc: BaseException, limit: int = 2000) -> str:
    """What a case records about its failure: the provider's message, without the client library's
    advice, and without credentials (a provider may echo them)."""
    return redact(strip_client_advice(f"{type(exc).__name__}: {exc}"))[:limit]


def error_record(case_id: str, exc: BaseException) -> dict:
    return {"id": case_id, "status": error_status(exc), "error": error_text(exc)}


class ErrorBudgetExceeded(RuntimeError):
    """A run stopped on its error budget; `kinds` counts its errored records by `error:<kind>`."""

    def __init__(self, message: str, kinds: dict[str, int] | None = None):
        super().__init__(message)
        self.kinds = kinds or {}


class SpendCapReached(RuntimeError):
    """A run stopped before a request could take its spending past run.max_cost (experiments/lm/spend.py)."""


def error_kinds(records: list[dict]) -> dict[str, int]:
    """{"error:<kind>": n}, most frequent first."""
    counts: dict[str, int] = {}
    for record in records:
        status = str(record.get("status", ""))
        if status.startswith("error:"):
            counts[status] = counts.get(status, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def budget_rule(budget: float, min_cases: int, total: int) -> str:
    """The rule a run's error budget follows, as its summary states it."""
    start = min(min_cases, total)
    return (
        f"error budget {budget:.0%} of records (run.error_budget), checked after each row once {start} records "
        f"are in (run.min_cases_before_budget {min_cases}, or the run's {total} rows if fewer)"
    )


def check_budget(records: list[dict], budget: float, min_cases: int, total: int | None = None) -> None:
    """Raise ErrorBudgetExceeded when too large a share of `records` errored. `records` are all of the
    run's cases so far, earlier invocations' included (a resume obeys the same budget); `total` is
    the run's number of cases: a run smaller than `min_cases` is judged once all of it is done."""
    done = len(records)
    kinds = error_kinds(records)
    errors = sum(kinds.values())
    start = min(min_cases, total) if total is not None else min_cases
    if done and done >= start and errors / done > budget:
        shown = ", ".join(f"{kind} {n}" for kind, n in kinds.items())
        raise ErrorBudgetExceeded(
            f"{errors} of {done} records errored ({errors / done:.0%} > budget {budget:.0%}): {shown}; stopping. "
            "The rows run so far are saved: fix the cause and resume the run (`--retry-errors` redoes the errored "
            "ones).",
            kinds,
        )
