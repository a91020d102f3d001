"""PassageRetriever with a fake embedder (filters, widening, the on-disk index cache); one real-pool test
(marked ``real_pool``) on a slice of the shipped pool."""

from __future__ import annotations

import hashlib
import json
import re
import zlib

import numpy as np
import pytest

from metrics.normalize import normalize_answer
from programs.embedders import UnknownEmbedderError, check_embedder_name
from programs.retriever import PassageRetriever, RetrievedPassage, squash

DIM = 64


class FakeEmbedder:
    """Hashed bag of words: deterministic, instant, and it counts every text it embeds."""

    def __init__(self, name: str = "fake-bow"):
        self.name = name
        self.calls = 0
        self.texts = 0

    def encode(self, texts):
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(word.encode()) % DIM] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)


def make(passages, tmp_path, embedder=None, sha="0" * 64):
    embedder = embedder or FakeEmbedder()
    return PassageRetriever(passages, embedder, sha).build_or_load(tmp_path), embedder


def p(pid, title, text):
    return {"id": pid, "title": title, "text": text}


def ids(found):
    return [r.id for r in found]


def test_titles_are_distinct_and_empty_titles_count_per_passage(tmp_path):
    pool = [
        p("a1", "Apollo", "apollo moon landing mission crew"),
        p("a2", "Apollo", "apollo moon landing mission rocket"),
        p("b1", "", "apollo moon landing mission boolq one"),
        p("b2", "", "apollo moon landing mission boolq two"),
        p("c1", "Cheese", "cheddar cheese from somerset"),
    ]
    retriever, _ = make(pool, tmp_path)
    found = retriever.search("apollo moon landing mission", k=3)
    assert len(found) == 3
    assert [r.title for r in found].count("Apollo") == 1
    assert {"b1", "b2"} <= set(ids(found))
    assert [r.rank for r in found] == [1, 2, 3]
    assert all(isinstance(r, RetrievedPassage) for r in found)
    undistinct = retriever.search("apollo moon landing mission", k=4, distinct_titles=False)
    assert {"a1", "a2"} <= set(ids(undistinct))


def test_source_passage_is_excluded_in_any_tokenisation(tmp_path):
    pool = [
        p("src", "Fund", "The fund's earnings rose sharply in the third quarter."),
        p("part", "Fund history", "The fund's earnings rose sharply"),
        p("more", "Report", "Report: the fund's earnings rose sharply in the third quarter. Shares up."),
        p("other", "Bank", "The bank's earnings fell in the third quarter."),
    ]
    retriever, _ = make(pool, tmp_path)
    nq_context = "The fund 's earnings rose sharply in the third quarter ."  # NQ tokenisation
    assert squash(nq_context) == squash(pool[0]["text"])
    found = retriever.search("fund earnings third quarter", k=3, exclude_texts=[nq_context])
    # equal (src), contained in the source (part) and containing it (more) are all the source
    assert ids(found) == ["other"]
    assert ids(retriever.search("fund earnings third quarter", k=1, exclude_texts=nq_context)) == ["other"]


def test_gold_answers_excluded_as_whole_tokens(tmp_path):
    pool = [
        p("exact", "Treaty", "The treaty was signed in 1990 in Paris."),
        p("longer", "Census", "The census code 19901 covers the treaty region of Paris."),
        p("beatles", "Band", "The Beatles' treaty song was recorded in Paris."),
        p("far", "Weather", "Rain and wind and clouds over the old city of Paris in spring."),
    ]
    retriever, _ = make(pool, tmp_path)
    found = retriever.search("treaty signed paris", k=4, exclude_answers=["1990", "the Beatles"])
    assert ids(found)[0] == "longer" and "exact" not in ids(found) and "beatles" not in ids(found)
    assert normalize_answer("The Beatles'") == "beatles"


def test_search_widens_when_the_first_hits_are_all_excluded(tmp_path):
    pool = [p(f"same{i}", "Same", f"rocket engine thrust nozzle {i}") for i in range(10)]
    pool += [p(f"gold{i}", f"Gold {i}", f"rocket engine answer zeppelin {i}") for i in range(5)]
    pool += [p("far1", "Far one", "rocket garden"), p("far2", "Far two", "rocket lake")]
    retriever, _ = make(pool, tmp_path)
    found = retriever.search("rocket engine thrust nozzle answer", k=3, exclude_answers=["zeppelin"], fetch=2)
    assert len(found) == 3
    assert len({r.title for r in found}) == 3
    assert not any(r.id.startswith("gold") for r in found)
    # the pool runs out: fewer than k, no error
    assert len(retriever.search("rocket", k=50, fetch=1)) == 1 + 5 + 2  # Same, Gold 0-4, Far one/two


def test_batch_search_matches_single_searches(tmp_path):
    pool = [p(f"x{i}", f"T{i % 4}", f"word{i} word{i + 1} shared") for i in range(20)]
    retriever, _ = make(pool, tmp_path)
    queries = ["word3 shared", "word10 word11", "nothing here"]
    batch = retriever.search_batch(queries, k=2, exclude_answers=[["word4"], [], ["shared"]], fetch=3)
    single = [
        retriever.search(q, k=2, exclude_answers=a, fetch=3)
        for q, a in zip(queries, [["word4"], [], ["shared"]], strict=True)
    ]
    assert batch == single
    assert batch[2] == []  # every passage holds the excluded answer


def test_index_is_cached_on_disk_and_reloaded_without_embedding(tmp_path):
    pool = [p(f"x{i}", f"T{i}", f"alpha beta {i}") for i in range(7)]
    retriever, first = make(pool, tmp_path, sha="ab" * 32)
    assert first.texts == 7
    directory = tmp_path / "indexes" / f"{'ab' * 8}-fake-bow"
    # the ids are checked by digest: no id list beside the index (300 MB of JSON at 21M passages)
    assert sorted(f.name for f in directory.iterdir()) == ["index.faiss", "meta.json"]
    meta = json.loads((directory / "meta.json").read_text())
    assert meta["count"] == 7 and meta["dim"] == DIM and meta["build_seconds"] >= 0
    assert meta["ids_sha256"] == hashlib.sha256(b"".join(f"x{i}".encode() + b"\0" for i in range(7))).hexdigest()
    assert not [f for f in (tmp_path / "indexes").iterdir() if f.name.startswith(".")]  # no temp left

    reloaded, second = make(pool, tmp_path, embedder=FakeEmbedder(), sha="ab" * 32)
    assert second.calls == 0
    assert reloaded.search("alpha beta 3", k=1) == retriever.search("alpha beta 3", k=1)
    assert second.calls == 1  # the query only

    # another corpus hash, or the same hash over different passages, is never served this index
    make(pool, tmp_path, embedder=(other := FakeEmbedder()), sha="cd" * 32)
    assert other.texts == 7
    make(pool[:3], tmp_path, embedder=(changed := FakeEmbedder()), sha="ab" * 32)
    assert changed.texts == 3
    assert json.loads((directory / "meta.json").read_text())["count"] == 3
    (directory / "index.faiss").write_bytes(b"truncated")  # a damaged cache is rebuilt, not trusted
    make(pool[:3], tmp_path, embedder=(repaired := FakeEmbedder()), sha="ab" * 32)
    assert repaired.texts == 3


def test_an_index_cached_before_the_id_digest_is_still_used(tmp_path):
    """Caches written by earlier versions keep an ids.json and no digest: they load, and a mismatched
    id list still forces a rebuild."""
    pool = [p(f"x{i}", f"T{i}", f"alpha beta {i}") for i in range(5)]
    make(pool, tmp_path, sha="ef" * 32)
    directory = tmp_path / "indexes" / f"{'ef' * 8}-fake-bow"
    meta = json.loads((directory / "meta.json").read_text())
    del meta["ids_sha256"]
    (directory / "meta.json").write_text(json.dumps(meta))
    (directory / "ids.json").write_text(json.dumps([f"x{i}" for i in range(5)]))
    _, again = make(pool, tmp_path, embedder=FakeEmbedder(), sha="ef" * 32)
    assert again.texts == 0
    (directory / "ids.json").write_text(json.dumps([f"y{i}" for i in range(5)]))
    _, rebuilt = make(pool, tmp_path, embedder=FakeEmbedder(), sha="ef" * 32)
    assert rebuilt.texts == 5


def test_duplicate_ids_are_named(tmp_path):
    pool = [p("a", "T", "one"), p("b", "T", "two"), p("a", "U", "three")]
    with pytest.raises(ValueError, match="'a' occurs more than once"):
        make(pool, tmp_path)


def test_passages_are_read_by_row_from_a_memory_mapped_dataset(tmp_path):
    """A datasets.Dataset on disk is read row by row: the retriever keeps no per-passage lists, and
    search gives what the same passages as a list give."""
    import datasets

    rows = [p(f"x{i}", f"T{i % 4}", f"gamma delta {i} topic{i % 5}") for i in range(40)]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "ds"))
    mapped = datasets.load_from_disk(str(tmp_path / "ds"))
    from_disk, _ = make(mapped, tmp_path / "a")
    from_list, _ = make(rows, tmp_path / "b")
    assert not any(isinstance(v, list) and len(v) == 40 for v in vars(from_disk).values())
    for query in ("topic3 gamma", "delta 17"):
        assert from_disk.search(query, k=3) == from_list.search(query, k=3)
    assert from_disk.passages.rows([7, 2]) == (
        ["x7", "x2"],
        ["T3", "T2"],
        ["gamma delta 7 topic2", "gamma delta 2 topic2"],
    )


class _ThreadProbe:
    """A SentenceTransformer stand-in that records torch's thread count at every encode."""

    def __init__(self):
        self.threads: list[int] = []

    def encode(self, texts, **_):
        import torch

        self.threads.append(torch.get_num_threads())
        return np.ones((len(texts), 4), dtype=np.float32) / 2


def test_an_index_build_uses_every_core_and_queries_one(tmp_path, monkeypatch):
    """A build runs alone, so torch may use every core (2 threads encoded 1.9x one thread's passages on
    this 2-core machine); queries run beside llama.cpp and stay on one thread."""
    import torch

    from programs.embedders import SentenceTransformerEmbedder

    monkeypatch.setenv("REEVAL_THREADS", "2")
    torch.set_num_threads(1)
    probe = _ThreadProbe()
    passages = [p(f"p{i}", "", f"text {i}") for i in range(5)]
    retriever = PassageRetriever(passages, SentenceTransformerEmbedder("probe", probe), "3" * 64)
    retriever.build_or_load(tmp_path)
    assert probe.threads == [2]
    retriever.search("a query", k=1)
    assert probe.threads == [2, 1] and torch.get_num_threads() == 1


def test_unknown_embedder_name_suggests_the_shipped_one():
    with pytest.raises(UnknownEmbedderError, match="all-MiniLM-L6-v2"):
        check_embedder_name("all-MiniLM-L6-v3")
    check_embedder_name("sentence-transformers/all-MiniLM-L12-v2")  # hub ids pass through


@pytest.mark.real_pool
def test_real_pool_returns_three_titles_without_the_source():
    """The shipped pool and MiniLM on the default backend, on a slice: every 15th passage
    plus the paragraphs of the first 40 NQ seeds (1,010 passages). Its index is cached by the slice's
    content hash: built once per machine (the whole pool took 14 minutes with torch), then loaded."""
    import hashlib

    from experiments.data.files import content_sha256
    from experiments.data.loaders import load_passages, load_qa
    from experiments.data.registry import DATASETS
    from experiments.paths import cache_dir
    from programs.embedders import DEFAULT_BACKEND, get_embedder

    path = DATASETS["wiki_passages"][0]
    pool = load_passages(path)
    seeds = load_qa(DATASETS["nq"][0], limit=40)
    wanted = {squash(e.context) for e in seeds}
    rows = [i for i, text in enumerate(pool["text"]) if i % 15 == 0 or squash(text) in wanted]
    sha = hashlib.sha256(f"{content_sha256(path)}:rows:{rows}".encode()).hexdigest()
    embedder = get_embedder("all-MiniLM-L6-v2", backend=DEFAULT_BACKEND)
    retriever = PassageRetriever(pool.select(rows), embedder, sha).build_or_load(cache_dir())
    assert len(retriever) == 1_010 and retriever.meta["dim"] == 384
    assert retriever.describe()["retrieval.index"] == "Flat"
    # the pool holds some paragraphs twice: NQ-tokenised and as plain Wikipedia text
    pool_ids: dict[str, set[str]] = {}
    ids, _, texts = retriever.passages.rows(range(len(retriever)))
    for pid, text in zip(ids, texts, strict=True):
        pool_ids.setdefault(squash(text), set()).add(pid)
    seeds = [e for e in seeds if squash(e.context) in pool_ids]
    unfiltered = retriever.search_batch([e.question for e in seeds], k=5, distinct_titles=False)
    # a seed whose own paragraph the question retrieves: otherwise excluding it proves nothing
    seed = next(
        e for e, top in zip(seeds, unfiltered, strict=True) if pool_ids[squash(e.context)] & {r.id for r in top}
    )

    found = retriever.search(seed.question, k=3, exclude_texts=[seed.context], exclude_answers=seed.answers)
    assert len(found) == 3
    assert len({r.title for r in found}) == 3
    source = squash(seed.context)
    for r in found:
        text = squash(r.text)
        assert text not in source and source not in text
        assert not any(f" {normalize_answer(a)} " in f" {normalize_answer(r.text)} " for a in seed.answers)


def test_the_build_progress_moves_batch_by_batch(tmp_path, monkeypatch):
    """A window is 8,192 passages: counted per window, the bar sat at 0 for minutes on a fresh machine."""
    import programs.retriever as retriever

    monkeypatch.setattr(retriever, "_EMBED_BATCH", 2)
    monkeypatch.setattr(retriever, "_WINDOW", 4)
    pool = [p(str(i), f"T{i}", f"passage number {i} about topic {i % 3}") for i in range(9)]
    built = PassageRetriever(pool, FakeEmbedder(), "0" * 64)
    steps = []
    vectors = list(built._windows(list(range(9)), None, steps.append))
    assert steps == [2, 2, 2, 2, 1]  # batches of 2 within windows of 4, 4 and 1
    assert sum(len(v) for v in vectors) == 9
