"""Checks of one field of a row. ``where`` names the row in every message: "file:line" or "hub:name[split] row N"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from experiments.data.errors import DataError, describe


def field_error(where: str, field: str, expected: str, value: Any) -> DataError:
    """A field holding the wrong kind of value."""
    return DataError(f"{where}: field {field!r}: expected {expected}, got {describe(value)}")


def missing(where: str, field: str) -> DataError:
    """A required field that is absent."""
    return DataError(f"{where}: field {field!r}: missing (required)")


def _text(value: str, where: str, field: str) -> str:
    """A string Arrow and UTF-8 files can hold: JSON's escapes can spell a lone surrogate ("\\ud800")."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise DataError(
            f"{where}: field {field!r}: not valid Unicode text (a lone surrogate "
            f"U+{ord(value[e.start]):04X} at character {e.start})"
        ) from None
    return value


def req_str(obj: Mapping[str, Any], field: str, where: str, *, label: str | None = None) -> str:
    """A required, non-empty string field."""
    label = label or field
    if field not in obj:
        raise missing(where, label)
    value = obj[field]
    if not isinstance(value, str):
        raise field_error(where, label, "a string", value)
    if not value.strip():
        raise DataError(f"{where}: field {label!r}: expected a non-empty string, got an empty one")
    return _text(value, where, label)


def opt_str(obj: Mapping[str, Any], field: str, where: str, default: str, *, label: str | None = None) -> str:
    """An optional string field (missing or null gives ``default``)."""
    value = obj.get(field)
    if value is None:
        return default
    if not isinstance(value, str):
        raise field_error(where, label or field, "a string", value)
    return _text(value, where, label or field)


def str_list(value: Any, where: str, field: str, *, non_empty: bool) -> list[str]:
    """A list of non-empty strings (``non_empty``: and at least one)."""
    expected = "a non-empty list of strings" if non_empty else "a list of strings"
    if not isinstance(value, list):
        raise field_error(where, field, expected, value)
    if non_empty and not value:
        raise DataError(f"{where}: field {field!r}: expected {expected}, got an empty list")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise DataError(f"{where}: field {field!r}: expected {expected}, got {describe(item)} at index {i}")
        if not item.strip():
            raise DataError(f"{where}: field {field!r}: empty string at index {i}")
        _text(item, where, f"{field}[{i}]")
    return list(value)
