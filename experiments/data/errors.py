"""The errors of data loading, and the wording their messages share."""

from __future__ import annotations

from typing import Any


class DataError(ValueError):
    """A data file or row does not have the expected form. The message says where: file:line, field."""


class UnknownDatasetError(ValueError):
    """A dataset name that is neither registered nor an existing file (the message suggests names)."""


def describe(value: Any) -> str:
    """A short JSON-flavoured type name for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def quote(value: Any, limit: int = 80) -> str:
    """A row's value inside a message, cut short: a message is a line or two, whatever the row holds."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
