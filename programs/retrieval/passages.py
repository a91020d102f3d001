"""The passages behind an index, read by row.

A corpus of 21M Wikipedia passages is ~13 GB of text. Held as Python lists it would live in the
driver's memory for the whole run, though a query reads only its top hits and a build only one
window at a time. A ``datasets.Dataset`` is memory-mapped Arrow, so this table reads rows from it
on demand and keeps nothing per passage. A list of mappings (tests, small in-memory pools) is read
the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

# Rows read from Arrow at a time when a whole column is scanned (ids for their digest and uniqueness).
_SCAN = 65_536


def embedding_text(title: str, text: str) -> str:
    """What the embedder sees for a passage: its title is context for a short Wikipedia paragraph."""
    return f"{title}: {text}" if title else text


class PassageTable:
    """id, title and text of passage ``i``, from a ``datasets.Dataset`` or a list of mappings."""

    def __init__(self, passages: Any):
        self._data = passages
        self._arrow = hasattr(passages, "column_names")
        if self._arrow:
            self._has_title = "title" in passages.column_names
            self._columns = passages.select_columns(["id", "title", "text"] if self._has_title else ["id", "text"])
            self._ids = passages.select_columns(["id"])
        self._n = len(passages)

    def __len__(self) -> int:
        return self._n

    def rows(self, indices: Sequence[int]) -> tuple[list[str], list[str], list[str]]:
        """ids, titles and texts of ``indices``, in their order (one Arrow read for all of them)."""
        indices = [int(i) for i in indices]
        if self._arrow:
            if not indices:
                return [], [], []
            batch = self._columns[indices]
            titles = batch["title"] if self._has_title else [""] * len(indices)
            return [str(x) for x in batch["id"]], [t or "" for t in titles], list(batch["text"])
        records: list[Mapping[str, Any]] = [self._data[i] for i in indices]
        return [str(r["id"]) for r in records], [r.get("title") or "" for r in records], [r["text"] for r in records]

    def row(self, i: int) -> tuple[str, str, str]:
        ids, titles, texts = self.rows([i])
        return ids[0], titles[0], texts[0]

    def embedding_texts(self, indices: Sequence[int]) -> list[str]:
        _, titles, texts = self.rows(indices)
        return [embedding_text(t, x) for t, x in zip(titles, texts, strict=True)]

    def id_chunks(self):
        """The ids in corpus order, a chunk at a time."""
        for start in range(0, self._n, _SCAN):
            stop = min(start + _SCAN, self._n)
            if self._arrow:
                yield [str(x) for x in self._ids[start:stop]["id"]]
            else:
                yield [str(self._data[i]["id"]) for i in range(start, stop)]

    def scan_ids(self) -> tuple[str, str | None]:
        """One pass over the ids: the sha256 of the ids in order (what an index cache is checked against,
        rather than a 300 MB id list at 21M passages) and an id that occurs twice, if any (found with 8
        bytes per passage rather than a set of strings)."""
        digest = hashlib.sha256()
        keys = np.empty(self._n, dtype=np.uint64)
        at = 0
        for chunk in self.id_chunks():
            for pid in chunk:
                raw = pid.encode()
                digest.update(raw + b"\0")
                keys[at] = int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little")
                at += 1
        order = np.argsort(keys, kind="stable")
        duplicate = None
        for j in np.flatnonzero(keys[order][1:] == keys[order][:-1]):
            a, b = self.row(int(order[j]))[0], self.row(int(order[j + 1]))[0]
            if a == b:  # a shared 64-bit key is almost surely a shared id; read both to be sure
                duplicate = a
                break
        return digest.hexdigest(), duplicate
