"""Dense passage retrieval for context enriching (ReEval Category 2): a FAISS inner-product index
over L2-normalised sentence embeddings of a passage corpus (the shipped Wikipedia pool by default).

The index is exact (flat) below about a million passages and IVF (IVF-PQ when memory demands)
above; see :mod:`programs.retrieval.index_plan`. The build streams the corpus in windows, each
sorted by length before it is cut into embedding batches, so memory stays bounded and batches
carry little padding.

The index is cached on disk under ``<cache_root>/indexes/<corpus sha256[:16]>-<embedder>/``: the
corpus is identified by content hash (never a ``datasets`` fingerprint, which follows path and
mtime), so a fresh checkout of the same data reuses the index.

``search`` returns passages that can enrich a test case without leaking it: k distinct Wikipedia
titles, never the case's own evidence passage, never a passage containing a gold answer.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics.normalize import normalize_answer
from programs.embedders import Embedder
from programs.retrieval.index_plan import IndexPlan, plan_index, strided_sample
from programs.retrieval.passages import PassageTable, embedding_text

if TYPE_CHECKING:  # pragma: no cover
    import datasets

logger = logging.getLogger(__name__)

# Bump when the embedded text or the index layout changes: old caches are then rebuilt.
INDEX_FORMAT = 1
_EMBED_BATCH = 256
# Passages sorted by length and embedded at a time: long enough that sorting groups similar
# lengths, short enough that a build holds only this many vectors outside the index (12 MB at 384-d).
_WINDOW = 8192
# (passages, rows) → the rows' vectors, in their order, one window after another (a Ray Data pipeline
# whose workers read the rows themselves, experiments.executors.ray_embedding). None: this process encodes.
WindowEncoder = Callable[[PassageTable, Sequence[int]], Iterator[np.ndarray]]


@dataclass(frozen=True)
class RetrievedPassage:
    id: str
    title: str
    text: str
    score: float
    rank: int  # 1-based among the passages returned for one query


def squash(text: str) -> str:
    """Lower-cased alphanumerics only: NQ's tokenised "fund 's" and the pool's "fund's" compare equal."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _padded_tokens(text: str) -> str:
    # Spaces around the normalised tokens turn substring search into whole-token containment.
    return f" {normalize_answer(text)} "


def _strings(values: Iterable[str] | str) -> list[str]:
    # A bare string is one text, not an iterable of characters.
    return [values] if isinstance(values, str) else [v for v in values if v]


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "embedder"


class PassageRetriever:
    """Top-k passages for a query from a fixed passage pool; call :meth:`build_or_load` first."""

    def __init__(
        self,
        passages: datasets.Dataset | Sequence[Mapping[str, Any]],
        embedder: Embedder,
        corpus_sha256: str,
        *,
        plan: IndexPlan | None = None,
    ):
        # Rows are read on demand (memory-mapped Arrow for a datasets.Dataset): nothing per passage is held.
        self.passages = PassageTable(passages)
        self.ids_sha256, duplicate = self.passages.scan_ids()
        if duplicate is not None:
            raise ValueError(f"passage ids must be unique; {duplicate!r} occurs more than once")
        self.plan = plan  # None: chosen by corpus size when the index is built
        self.embedder = embedder
        self.corpus_sha256 = corpus_sha256
        self.index = None
        self.meta: dict[str, Any] = {}
        # Normalised forms are computed on first look: a query inspects only its top hits.
        self._squashed: dict[int, str] = {}
        self._tokens: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self.passages)

    def index_dir(self, cache_root: str | Path) -> Path:
        return Path(cache_root) / "indexes" / f"{self.corpus_sha256[:16]}-{_safe_name(self.embedder.name)}"

    def embedding_text(self, i: int) -> str:
        return self.passages.embedding_texts([i])[0]

    # ----------------------------------------------------------------------------------- index

    def build_or_load(self, cache_root: str | Path, encoder: WindowEncoder | None = None) -> PassageRetriever:
        """Load the cached index for this corpus and embedder, or embed the pool and cache it.
        `encoder` embeds elsewhere (it must run this retriever's embedder: the cache key names it)."""
        directory = self.index_dir(cache_root)
        if self._try_load(directory):
            return self
        self._build(encoder)
        self._save(directory)
        return self

    def _try_load(self, directory: Path) -> bool:
        import faiss

        try:
            meta = json.loads((directory / "meta.json").read_text())
        except (OSError, ValueError):
            return False
        if meta.get("format") != INDEX_FORMAT or not self._same_ids(directory, meta):
            logger.warning("index cache %s does not match this corpus or format; rebuilding", directory)
            return False
        started = time.perf_counter()
        try:
            index = faiss.read_index(str(directory / "index.faiss"))
        except RuntimeError as e:  # FAISS raises RuntimeError for a missing or truncated file
            logger.warning("index cache %s is unreadable (%s); rebuilding", directory, e)
            return False
        if index.ntotal != len(self):
            logger.warning("index %s: %d vectors, %d passages; rebuilding", directory, index.ntotal, len(self))
            return False
        plan = IndexPlan(**meta["plan"]) if "plan" in meta else IndexPlan("flat")
        if self.plan is not None and self.plan.factory != plan.factory:
            logger.warning(
                "index cache %s is %s, %s was asked for; rebuilding", directory, plan.factory, self.plan.factory
            )
            return False
        if self.plan is not None:  # same cells, maybe another nprobe: a search-time setting
            plan = self.plan
        plan.configure(index)
        self.plan, self.index = plan, index
        self.meta = {
            **meta,
            "plan": asdict(plan),
            "load_seconds": time.perf_counter() - started,
            "loaded_from": str(directory),
        }
        logger.info("loaded index of %d passages from %s", self.index.ntotal, directory)
        return True

    def _same_ids(self, directory: Path, meta: dict) -> bool:
        if "ids_sha256" in meta:
            return meta["ids_sha256"] == self.ids_sha256
        try:  # a cache written before the digest: its id list, read once
            ids = json.loads((directory / "ids.json").read_text())
        except (OSError, ValueError):
            return False
        return len(ids) == len(self) and ids == [pid for chunk in self.passages.id_chunks() for pid in chunk]

    def _build(self, encoder: WindowEncoder | None = None) -> None:
        from tqdm.auto import tqdm

        started = time.perf_counter()
        n = len(self)
        # The bar moves batch by batch: a window is 8,192 passages, more than half the shipped pool, and a
        # bar counted per window sat at 0 for minutes on a fresh machine.
        # A build runs alone, so a local embedder may use every core (queries later encode on one).
        bulk = getattr(self.embedder, "bulk", None) if encoder is None else None
        with (
            bulk() if bulk else nullcontext(),
            tqdm(total=n, desc=f"embedding passages ({self.embedder.name})", unit="passage") as bar,
        ):
            windows = self._windows(range(n), encoder, bar.update)
            first = next(windows, np.zeros((0, 1), np.float32))
            dim = first.shape[1]  # the first window tells the dimension
            plan = self.plan or plan_index(n, dim)
            index = plan.new_index(dim)
            if plan.train_size(n):
                sample = strided_sample(n, plan.train_size(n))
                logger.info("training %s on %d of %d passages", plan.factory, len(sample), n)
                index.train(np.concatenate(list(self._windows(sample, encoder))))
            index.add(first)
            for vectors in windows:
                index.add(vectors)
        self.plan, self.index = plan, index
        seconds = time.perf_counter() - started
        self.meta = {
            "format": INDEX_FORMAT,
            "embedder": self.embedder.name,
            "corpus_sha256": self.corpus_sha256,
            "ids_sha256": self.ids_sha256,
            "count": int(index.ntotal),
            "dim": int(dim),
            "plan": asdict(plan),
            "build_seconds": round(seconds, 3),
            "encoded_by": "this process" if encoder is None else getattr(encoder, "description", "an encoder"),
        }
        logger.info("embedded %d passages into %s in %.1f s (%.0f/s)", n, plan.factory, seconds, n / max(seconds, 1e-9))

    def _windows(
        self, rows: Sequence[int], encoder: WindowEncoder | None, progress: Callable[[int], Any] | None = None
    ) -> Iterator[np.ndarray]:
        """Unit vectors of `rows` in their order, a window at a time; `progress` gets each batch's size."""
        if encoder is None:
            for start in range(0, len(rows), _WINDOW):
                yield self._encode_rows(rows[start : start + _WINDOW], progress)
            return
        import faiss

        for vectors in encoder(self.passages, rows):
            vectors = np.ascontiguousarray(vectors, dtype=np.float32)
            faiss.normalize_L2(vectors)  # as _encode does: inner product must be cosine
            if progress is not None:
                progress(len(vectors))
            yield vectors

    def _encode_rows(self, rows: Sequence[int], progress: Callable[[int], Any] | None = None) -> np.ndarray:
        """Vectors of ``rows`` in their order, embedded longest first in batches of similar length."""
        _, titles, texts = self.passages.rows(rows)  # one read per window
        order = sorted(range(len(rows)), key=lambda j: -len(texts[j]))
        vectors = None
        for start in range(0, len(order), _EMBED_BATCH):
            batch = order[start : start + _EMBED_BATCH]
            encoded = self._encode([embedding_text(titles[j], texts[j]) for j in batch])
            if vectors is None:
                vectors = np.empty((len(rows), encoded.shape[1]), dtype=np.float32)
            vectors[batch] = encoded
            if progress is not None:
                progress(len(batch))
        return vectors if vectors is not None else np.zeros((0, 1), np.float32)

    def describe(self) -> dict[str, Any]:
        """What a run that retrieves records (MLflow params): corpus, embedder and index."""
        if self.index is None:
            raise RuntimeError("no index: call build_or_load(cache_root) first")
        return {
            "retrieval.corpus_sha256": self.corpus_sha256,
            "retrieval.passages": len(self),
            "retrieval.embedder": self.embedder.name,
            "retrieval.dim": int(self.index.d),
            **{f"retrieval.{k}": v for k, v in self.plan.params().items()},
        }

    def _save(self, directory: Path) -> None:
        import faiss

        directory.parent.mkdir(parents=True, exist_ok=True)
        # Write a sibling temp dir and rename it into place: readers see a whole index or none.
        tmp = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}-"))
        tmp.chmod(0o755)  # mkdtemp's 0700 would lock a team-shared REEVAL_CACHE_DIR to one user
        try:
            faiss.write_index(self.index, str(tmp / "index.faiss"))
            (tmp / "meta.json").write_text(json.dumps(self.meta, indent=2))
            if directory.exists():  # stale (format or corpus mismatch): move it aside first
                stale = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}-stale-"))
                os.rename(directory, stale / "old")
                shutil.rmtree(stale, ignore_errors=True)
            try:
                os.rename(tmp, directory)
            except OSError:
                logger.info("another process saved %s first; keeping its copy", directory)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        import faiss

        vectors = np.ascontiguousarray(self.embedder.encode(texts), dtype=np.float32)
        faiss.normalize_L2(vectors)  # inner product must be cosine whatever the embedder returns
        return vectors

    # ---------------------------------------------------------------------------------- search

    def search(
        self,
        query: str,
        k: int = 3,
        *,
        exclude_texts: Iterable[str] = (),
        exclude_answers: Iterable[str] = (),
        distinct_titles: bool = True,
        fetch: int = 64,
    ) -> list[RetrievedPassage]:
        """The ``k`` best passages for ``query`` that survive the filters (fewer only if the pool runs out).

        ``exclude_texts``: source passages; a passage whose alphanumerics equal, contain or are
        contained in one of them is skipped. ``exclude_answers``: gold answers; a passage that
        contains one as whole normalised tokens is skipped. ``distinct_titles``: at most one
        passage per Wikipedia title. ``fetch`` hits are filtered first, doubled until enough survive.
        """
        return self.search_batch(
            [query],
            k,
            exclude_texts=[exclude_texts],
            exclude_answers=[exclude_answers],
            distinct_titles=distinct_titles,
            fetch=fetch,
        )[0]

    def search_batch(
        self,
        queries: Sequence[str],
        k: int = 3,
        *,
        exclude_texts: Sequence[Iterable[str]] | None = None,
        exclude_answers: Sequence[Iterable[str]] | None = None,
        distinct_titles: bool = True,
        fetch: int = 64,
    ) -> list[list[RetrievedPassage]]:
        """:meth:`search` for many queries with one FAISS call; exclusions are given per query."""
        if self.index is None:
            raise RuntimeError("no index: call build_or_load(cache_root) first")
        if k < 1 or fetch < 1:
            raise ValueError("k and fetch must be positive")
        n = len(queries)
        texts_per = list(exclude_texts) if exclude_texts is not None else [()] * n
        answers_per = list(exclude_answers) if exclude_answers is not None else [()] * n
        if len(texts_per) != n or len(answers_per) != n:
            raise ValueError("exclude_texts and exclude_answers need one entry per query")
        if n == 0 or self.index.ntotal == 0:
            return [[] for _ in range(n)]
        vectors = self._encode(list(queries))
        width = min(max(fetch, k), self.index.ntotal)
        scores, hits = self.index.search(vectors, width)
        results = []
        for q in range(n):
            sources = [s for s in (squash(t) for t in _strings(texts_per[q])) if s]
            answers = [f" {a} " for a in (normalize_answer(x) for x in _strings(answers_per[q])) if a]
            row_width, row_scores, row_hits = width, scores[q], hits[q]
            while True:
                chosen = self._select(row_scores, row_hits, k, sources, answers, distinct_titles)
                if len(chosen) >= k or row_width >= self.index.ntotal:
                    break
                row_width = min(row_width * 2, self.index.ntotal)
                logger.debug("query %d: %d/%d survived; widening to %d", q, len(chosen), k, row_width)
                found_scores, found_hits = self.index.search(vectors[q : q + 1], row_width)
                row_scores, row_hits = found_scores[0], found_hits[0]
            results.append(chosen)
        return results

    def _select(
        self,
        scores: np.ndarray,
        hits: np.ndarray,
        k: int,
        sources: list[str],
        answers: list[str],
        distinct_titles: bool,
    ) -> list[RetrievedPassage]:
        chosen: list[RetrievedPassage] = []
        titles_used: set[str] = set()
        for score, i in zip(scores.tolist(), hits.tolist(), strict=True):
            if i < 0:
                break
            pid, title, text = self.passages.row(i)
            # Empty titles (BoolQ passages) never collide: each passage is its own "title".
            title_key = " ".join(title.casefold().split()) or f"\0id:{i}"
            if distinct_titles and title_key in titles_used:
                continue
            if sources and self._is_source(i, text, sources):
                continue
            if answers and self._has_answer(i, text, answers):
                continue
            titles_used.add(title_key)
            rank = len(chosen) + 1
            chosen.append(RetrievedPassage(pid, title, text, float(score), rank))
            if len(chosen) == k:
                break
        return chosen

    def _is_source(self, i: int, text: str, sources: list[str]) -> bool:
        if i not in self._squashed:
            self._squashed[i] = squash(text)
        text = self._squashed[i]
        return bool(text) and any(text in s or s in text for s in sources)

    def _has_answer(self, i: int, text: str, answers: list[str]) -> bool:
        if i not in self._tokens:
            self._tokens[i] = _padded_tokens(text)
        return any(a in self._tokens[i] for a in answers)
