"""Local data files as ``dspy.Example``s (or, for the passage pool and on request, a ``datasets.Dataset``).

Every row is checked (:mod:`experiments.data.records`) before it reaches ``datasets``, and rows are
taken in file order, so a limit selects the same rows on every machine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dspy

from experiments.data.converters import mrqa_context_to_records
from experiments.data.errors import DataError, quote
from experiments.data.examples import mc_example, qa_example
from experiments.data.fields import opt_str
from experiments.data.files import file_stem, iter_jsonl
from experiments.data.records import validate_mc_record, validate_passage_record, validate_qa_record
from experiments.data.tables import mc_features, offline_datasets, passage_features, qa_features, to_dataset

if TYPE_CHECKING:  # pragma: no cover - typing only; ``datasets`` is imported lazily
    import datasets

logger = logging.getLogger(__name__)


def check_limit(limit: int | None) -> None:
    """Refuse a limit that is not a non-negative integer or None."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative integer or None, got {limit!r}")


def _collect(
    path: Path,
    rows: Iterable[tuple[int, dict[str, Any]]],
    *,
    limit: int | None,
    keep: Callable[[dict[str, Any]], bool] = lambda r: True,
) -> list[dict[str, Any]]:
    """Take validated records in file order, skipping those ``keep`` rejects, up to ``limit``.

    Ids must be unique within a file (a duplicate names both lines). Rows after the limit are
    not read, so with a limit only the rows read are validated.
    """
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    if limit == 0:
        return out
    for lineno, rec in rows:
        if rec["id"] in seen:
            first = seen[rec["id"]]
            raise DataError(f"{path}:{lineno}: field 'id': duplicate id {quote(rec['id'])} (first on line {first})")
        seen[rec["id"]] = lineno
        if not keep(rec):
            continue
        out.append(rec)
        if limit is not None and len(out) >= limit:
            break
    return out


def load_qa_dataset(path: str | Path, *, limit: int | None = None, source: str | None = None) -> datasets.Dataset:
    """Validated flat-QA rows of a ``.jsonl``/``.jsonl.gz`` file as a ``datasets.Dataset``.

    Columns are :data:`QA_FIELDS` (fixed schema). ``source`` keeps only rows whose ``source``
    equals it (rows without one get the file's stem, e.g. ``nq``); ``limit`` then takes the
    first N kept rows in file order, so the selection is deterministic.
    """
    check_limit(limit)
    path = Path(path)
    default_source = file_stem(path)
    rows = ((n, validate_qa_record(obj, f"{path}:{n}", default_source=default_source)) for n, obj in iter_jsonl(path))
    keep = (lambda r: r["source"] == source) if source is not None else (lambda r: True)
    records = _collect(path, rows, limit=limit, keep=keep)
    ds_mod = offline_datasets()
    logger.info("loaded %d QA rows from %s", len(records), path)
    return to_dataset(ds_mod, records, qa_features(ds_mod))


def load_qa(path: str | Path, *, limit: int | None = None, source: str | None = None) -> list[dspy.Example]:
    """Flat-QA file → ``dspy.Example``s (fields :data:`QA_FIELDS`, inputs question and context).

    See :func:`load_qa_dataset` for validation, ``source`` and ``limit``.
    """
    return [qa_example(r) for r in load_qa_dataset(path, limit=limit, source=source)]


def load_mrqa_dataset(path: str | Path, *, limit: int | None = None, source: str | None = None) -> datasets.Dataset:
    """A real MRQA 2019 JSONL file (header line, then one context per line) as flat QA rows.

    One row per question; ``source`` of each row is the header's ``dataset`` lower-cased
    (``NewsQA`` → ``newsqa``). ``source`` and ``limit`` work as in :func:`load_qa_dataset`.
    """
    check_limit(limit)
    path = Path(path)
    lines = iter_jsonl(path)
    first = next(lines, None)
    if first is None:
        raise DataError(f"{path}: empty file (expected an MRQA header line)")
    n0, header_obj = first
    header = header_obj.get("header")
    if not isinstance(header, Mapping):
        raise DataError(f"{path}:{n0}: field 'header': expected the MRQA header line {{\"header\": {{...}}}}")
    file_source = opt_str(header, "dataset", f"{path}:{n0}", "", label="header.dataset").lower() or file_stem(path)
    mismatches = 0

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        nonlocal mismatches
        for n, obj in lines:
            recs, bad = mrqa_context_to_records(obj, f"{path}:{n}", source=file_source)
            mismatches += bad
            for rec in recs:
                yield n, rec

    keep = (lambda r: r["source"] == source) if source is not None else (lambda r: True)
    records = _collect(path, rows(), limit=limit, keep=keep)
    if mismatches:
        logger.warning("%s: %d detected answer span(s) did not match their text; kept without offset", path, mismatches)
    ds_mod = offline_datasets()
    logger.info("loaded %d MRQA questions from %s", len(records), path)
    return to_dataset(ds_mod, records, qa_features(ds_mod))


def load_mrqa(path: str | Path, *, limit: int | None = None, source: str | None = None) -> list[dspy.Example]:
    """MRQA 2019 file → QA ``dspy.Example``s (same shape as :func:`load_qa`)."""
    return [qa_example(r) for r in load_mrqa_dataset(path, limit=limit, source=source)]


def load_multiple_choice(
    path: str | Path, *, limit: int | None = None, source: str = "arc_challenge"
) -> list[dspy.Example]:
    """ARC-style multiple-choice file → ``dspy.Example``s (fields :data:`MC_FIELDS`, inputs question
    and options). ``answer`` is the text of the choice labelled ``answerKey``; ``limit`` takes the
    first N rows in file order.
    """
    check_limit(limit)
    path = Path(path)
    rows = ((n, validate_mc_record(obj, f"{path}:{n}", source=source)) for n, obj in iter_jsonl(path))
    records = _collect(path, rows, limit=limit)
    ds_mod = offline_datasets()
    ds = to_dataset(ds_mod, records, mc_features(ds_mod))
    logger.info("loaded %d multiple-choice rows from %s", len(ds), path)
    return [mc_example(r) for r in ds]


def load_passages(
    path: str | Path, *, limit: int | None = None, exclude_origins: Collection[str] = ()
) -> datasets.Dataset:
    """The Wikipedia passage pool as a ``datasets.Dataset`` with columns id, title, text, origin.

    A Dataset rather than Examples: the pool is a retrieval corpus (embedded in batches,
    indexed), not a set of test cases. ``exclude_origins`` drops rows by ``origin`` (e.g.
    ``{"realtimeqa_dpr"}`` when reading the unfiltered shared pool).
    """
    check_limit(limit)
    path = Path(path)
    excluded = set(exclude_origins)
    rows = ((n, validate_passage_record(obj, f"{path}:{n}")) for n, obj in iter_jsonl(path))
    records = _collect(path, rows, limit=limit, keep=lambda r: r["origin"] not in excluded)
    ds_mod = offline_datasets()
    logger.info("loaded %d passages from %s", len(records), path)
    return to_dataset(ds_mod, records, passage_features(ds_mod))
