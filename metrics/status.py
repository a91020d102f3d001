"""Counts of case statuses (`accepted`, `rejected:<reason>`, `error:<kind>`) by reason or kind."""

from collections.abc import Iterable, Mapping
from typing import Any


def status_counts(records: Iterable[Mapping[str, Any]], prefix: str) -> dict[str, int]:
    """{"<prefix>.<reason>": n} for every status "<prefix>:<reason>", e.g. prefix "rejected"."""
    counts: dict[str, int] = {}
    for record in records:
        status = str(record.get("status", ""))
        if status.startswith(prefix + ":"):
            key = f"{prefix}.{status.split(':', 1)[1]}"
            counts[key] = counts.get(key, 0) + 1
    return counts
