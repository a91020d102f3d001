"""Classify a failed case into `error:<kind>`: counted and reported, never scored as a wrong answer."""

from __future__ import annotations


class ErrorBudgetExceeded(RuntimeError):
    pass


def error_kind(exc: BaseException) -> str:
    name = type(exc).__name__
    text = str(exc).lower()
    if name == "AdapterParseError" or "parse" in name.lower():
        return "parse"
    if "context window" in text or "exceed context" in text or "too long" in text:
        return "context_overflow"
    if "ratelimit" in name.lower() or "rate limit" in text:
        return "rate_limit"
    if "timeout" in name.lower() or "timed out" in text:
        return "timeout"
    if "LM" in name or "API" in name or "Connection" in name:
        return "lm"
    return "exception"


def error_record(case_id: str, exc: BaseException) -> dict:
    return {"id": case_id, "status": f"error:{error_kind(exc)}", "error": f"{type(exc).__name__}: {exc}"[:2000]}


def check_budget(records: list[dict], budget: float, min_cases: int) -> None:
    done = len(records)
    errors = sum(1 for r in records if str(r.get("status", "")).startswith("error:"))
    if done >= min_cases and errors / done > budget:
        raise ErrorBudgetExceeded(
            f"{errors} of {done} cases errored ({errors / done:.0%} > budget {budget:.0%}); stopping. "
            "Finished cases are saved: fix the cause and resume the run."
        )
