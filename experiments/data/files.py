"""Data files as stored: their version (a hash of their bytes), their name, and their rows with line numbers.

The data version is :func:`content_sha256` of the file as stored. A ``datasets``
fingerprint depends on path and mtime, so it changes on a fresh checkout of identical data
and must never be used to identify a data set.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from experiments.data.errors import DataError, describe

_JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")
# ReEval released its cases as one JSON array per file; such a file is read row by row like JSON Lines.
_JSON_ARRAY_SUFFIX = ".json"
PARQUET = ".parquet"


def content_sha256(path: str | Path) -> str:
    """SHA-256 of the file's bytes as stored (for ``.gz``: of the compressed bytes).

    This is the data version recorded with every run: it depends on content only, unlike a
    ``datasets`` fingerprint, which changes with path and mtime.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_stem(path: Path) -> str:
    """The file's name without ``.jsonl``/``.jsonl.gz``: the default source of its rows (``nq.jsonl.gz`` → ``nq``)."""
    name = path.name
    for suffix in (".jsonl.gz", ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _check_suffix(path: Path) -> None:
    if not path.name.endswith((*_JSONL_SUFFIXES, _JSON_ARRAY_SUFFIX)):
        raise DataError(f"{path}: expected a .jsonl, .jsonl.gz or .json (an array of objects) file")


def _iter_array(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based item number, object) of a file holding one JSON array of objects."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise DataError(f"{path}:{e.lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON array of objects, got {describe(data)}")
    for number, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise DataError(f"{path}: item {number}: expected a JSON object, got {describe(obj)}")
        yield number, obj


def _iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, decoded line); gzip chosen by the ``.gz`` suffix. A byte-order mark
    opening the file (Windows editors write one) is not part of the first row."""
    opener = gzip.open if path.name.endswith(".gz") else open
    lineno = 0
    try:
        with opener(path, "rb") as f:
            for lineno, raw in enumerate(f, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise DataError(f"{path}:{lineno}: not valid UTF-8 ({e.reason} at byte {e.start})") from None
                yield lineno, text.removeprefix("\ufeff") if lineno == 1 else text
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise DataError(f"{path}:{lineno + 1}: corrupt or truncated gzip data ({e})") from None


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a ``.jsonl``/``.jsonl.gz`` file, or
    ``(item number, object)`` for each item of a ``.json`` file holding one array of objects.

    Invalid JSON, or a line that is not a JSON object, raises :class:`DataError` naming the
    file and line, so a broken row is found without bisecting the file.
    """
    path = Path(path)
    _check_suffix(path)
    if path.name.endswith(_JSON_ARRAY_SUFFIX):
        yield from _iter_array(path)
        return
    for lineno, text in _iter_lines(path):
        if not text.strip():
            continue
        try:
            # Without its newline: a row cut short would otherwise be reported at column 1 of a next line.
            obj = json.loads(text.rstrip("\r\n"))
        except json.JSONDecodeError as e:
            raise DataError(f"{path}:{lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
        except RecursionError:
            raise DataError(f"{path}:{lineno}: invalid JSON: nested deeper than this reader allows") from None
        except ValueError:  # Python refuses integers of more than 4,300 digits (CVE-2020-10735)
            raise DataError(f"{path}:{lineno}: invalid JSON: a number too long to read") from None
        if not isinstance(obj, dict):
            raise DataError(f"{path}:{lineno}: expected a JSON object, got {describe(obj)}")
        yield lineno, obj


def iter_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number, object)`` of a Parquet file, or :func:`iter_jsonl` of any other."""
    path = Path(path)
    if path.suffix != PARQUET:
        yield from iter_jsonl(path)
        return
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds for one cause: not a Parquet file
        raise DataError(f"{path}: not a readable Parquet file ({type(e).__name__}: {e})") from None
    yield from enumerate(table.to_pylist(), start=1)


def source_name(path: Path) -> str:
    """What a file's rows are called: its stem, or for a hub-style `<name>/data/test-….parquet` the `<name>`."""
    if path.suffix == PARQUET and path.parent.name == "data" and path.parent.parent.name:
        return path.parent.parent.name
    return file_stem(path)
