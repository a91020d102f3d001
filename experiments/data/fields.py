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


def row_id(obj: Mapping[str, Any], where: str) -> str:
    key = "id" if "id" in obj else "qid" if "qid" in obj else None
    if key is None:
        raise missing(where, "id")
    value = obj[key]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return req_str(obj, key, where)


def choices(obj: Mapping[str, Any], where: str) -> list[dict[str, str]] | None:
    """Options as [{label, text}], from ARC-style ``choices`` or plain ``options``; None without either."""
    if obj.get("choices") is not None:
        raw, field = obj["choices"], "choices"
        if isinstance(raw, Mapping):  # the hub's Arrow form: a dict of two lists
            labels, texts = raw.get("label"), raw.get("text")
            if not isinstance(labels, list) or not isinstance(texts, list) or len(labels) != len(texts):
                raise field_error(where, field, "{label: [...], text: [...]} of equal length", raw)
            raw = [{"label": label, "text": text} for label, text in zip(labels, texts, strict=True)]
        if not isinstance(raw, list) or len(raw) < 2:
            raise field_error(where, field, "a list of at least 2 {label, text} objects", raw)
        options = []
        for i, item in enumerate(raw):
            if not isinstance(item, Mapping):
                raise DataError(f"{where}: field 'choices': expected {{label, text}} objects at index {i}")
            options.append(
                {
                    "label": req_str(item, "label", where, label=f"choices[{i}].label"),
                    "text": req_str(item, "text", where, label=f"choices[{i}].text"),
                }
            )
    elif obj.get("options") is not None:
        texts = str_list(obj["options"], where, "options", non_empty=True)
        options = [{"label": chr(ord("A") + i), "text": text} for i, text in enumerate(texts)]
    else:
        return None
    labels = [o["label"] for o in options]
    if len(set(labels)) != len(labels):
        raise DataError(f"{where}: field 'choices': duplicate labels {labels}")
    return options


def option_label(obj: Mapping[str, Any], names: tuple[str, str], labels: list[str], where: str) -> str | None:
    name = next((n for n in names if obj.get(n) is not None), None)
    if name is None:
        return None
    value = obj[name]
    label = str(value) if isinstance(value, int) and not isinstance(value, bool) else req_str(obj, name, where)
    if label not in labels:
        raise DataError(f"{where}: field {name!r}: {label!r} is not one of the option labels {labels}")
    return label
