"""Retrieval corpora from JSONL or Parquet shards: loaded through datasets, hashed by content."""

from __future__ import annotations

import json
import shutil

import pytest

from experiments.corpus import load_corpus, shard_paths
from experiments.data.errors import DataError

ROWS = [
    {"id": "a", "title": "Apollo", "text": "apollo moon landing"},
    {"id": "b", "title": "Bridge", "text": "a bridge over the harbour"},
    {"id": "c", "title": "", "text": "cheddar cheese"},
]


def jsonl_shards(directory, rows=ROWS):
    directory.mkdir(parents=True, exist_ok=True)
    for n, part in enumerate((rows[:2], rows[2:])):
        (directory / f"part-{n:02d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in part))
    return directory


def test_jsonl_shards_load_in_order_and_hash_by_content(tmp_path):
    ds, sha = load_corpus(str(jsonl_shards(tmp_path / "one")))
    assert ds.column_names == ["id", "title", "text"] and ds["id"] == ["a", "b", "c"]
    moved = tmp_path / "elsewhere"
    shutil.copytree(tmp_path / "one", moved)
    assert load_corpus(str(moved / "*.jsonl"))[1] == sha  # path and mtime do not name a corpus
    (moved / "part-01.jsonl").write_text(json.dumps({**ROWS[2], "text": "edited"}) + "\n")
    assert load_corpus(str(moved))[1] != sha


def test_parquet_shards_without_titles(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    for n, part in enumerate((ROWS[:1], ROWS[1:])):
        table = pa.table({"id": [r["id"] for r in part], "text": [r["text"] for r in part]})
        pq.write_table(table, tmp_path / f"shard-{n}.parquet")
    ds, sha = load_corpus(str(tmp_path / "*.parquet"))
    assert ds["id"] == ["a", "b", "c"] and ds["title"] == ["", "", ""] and len(sha) == 64


def test_bad_corpora_say_what_is_wrong(tmp_path):
    with pytest.raises(DataError, match="no .parquet or .jsonl"):
        shard_paths(str(tmp_path / "nothing-*.parquet"))
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "a.jsonl").write_text(json.dumps(ROWS[0]) + "\n")
    (tmp_path / "mixed" / "b.parquet").write_bytes(b"")
    with pytest.raises(DataError, match="must all be .parquet or all .jsonl"):
        shard_paths(str(tmp_path / "mixed"))
    (tmp_path / "notext").mkdir()
    (tmp_path / "notext" / "a.jsonl").write_text(json.dumps({"id": "a", "body": "x"}) + "\n")
    with pytest.raises(DataError, match="column 'text' missing"):
        load_corpus(str(tmp_path / "notext"))
    with pytest.raises(DataError, match="pin a revision"):
        load_corpus("hf:org/wiki-passages:train")


def test_the_shipped_pool_is_the_default_corpus():
    ds, sha = load_corpus("wiki_passages")
    assert len(ds) == 14_574
    assert sha == "39da9eff5a09bad830932b4dbf153aa35d08dce7af623a12bbd884327a4a9c96"


def test_reeval_index_builds_a_corpus_index_ahead_of_a_run_and_then_finds_it(isolated, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import programs.embedders as embedders
    from experiments.cli import app
    from tests.test_retriever import FakeEmbedder

    monkeypatch.setattr(embedders, "get_embedder", lambda name, backend="torch", cache_root=None: FakeEmbedder())
    shard = tmp_path / "pool.jsonl"
    shard.write_text(
        "".join(json.dumps({"id": f"p{i}", "title": "", "text": f"passage {i} text"}) + "\n" for i in range(3))
    )
    first = CliRunner().invoke(app, ["index", "--corpus", str(shard)])
    assert first.exit_code == 0, first.output
    assert "3 passages, Flat index in" in first.output and "encoded by this process" in " ".join(first.output.split())
    again = CliRunner().invoke(app, ["index", "--corpus", str(shard)])
    assert again.exit_code == 0 and "found in the cache" in " ".join(again.output.split())
