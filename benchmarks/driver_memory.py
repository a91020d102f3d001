"""What a retriever over a large corpus costs the driver's memory, in one run.

    python benchmarks/driver_memory.py                       # 1,000,000 synthetic 100-word passages
    python benchmarks/driver_memory.py --passages 200000

The corpus is written as Parquet shards (as a user's Wikipedia dump would be) and loaded the way a run
loads it (`experiments.corpus.load_corpus`: memory-mapped Arrow). Then, in this process:

1. the retriever: RSS added by `PassageRetriever(passages, …)`, which reads rows on demand and scans
   the ids once (their digest and a duplicate check), and how long that scan takes;
2. the lists the retriever held before (ids, titles and texts as Python lists): RSS they add;
3. reads: mean time to fetch the 64 hits of a query (random rows) and one 8,192-passage build window.

No index is built (embedding a million passages takes hours here); a query touches only its hits.
Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.lm.offline import apply_offline_defaults  # noqa: E402


def rss_mb() -> float:
    import os

    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def write_shards(directory: Path, passages: int, words: int, per_shard: int = 100_000) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(0)
    vocab = [f"w{i}" for i in range(20_000)]
    for shard, start in enumerate(range(0, passages, per_shard)):
        rows = range(start, min(start + per_shard, passages))
        table = pa.table(
            {
                "id": [f"p{i}" for i in rows],
                "title": [f"Title {i // 5}" for i in rows],
                "text": [" ".join(rng.choices(vocab, k=words)) for _ in rows],
            }
        )
        pq.write_table(table, directory / f"shard-{shard:04d}.parquet")


class _NoEmbedder:
    name = "none"

    def encode(self, texts):  # pragma: no cover - no index is built here
        raise AssertionError("this benchmark embeds nothing")


def measure(corpus: Path) -> dict:
    from experiments.corpus import load_corpus
    from programs.retriever import PassageRetriever

    passages, sha = load_corpus(str(corpus))
    n = len(passages)
    gc.collect()
    base = rss_mb()
    started = time.perf_counter()
    retriever = PassageRetriever(passages, _NoEmbedder(), sha)
    scan = time.perf_counter() - started
    gc.collect()
    retriever_mb = rss_mb() - base

    rng = random.Random(1)
    queries = 50
    started = time.perf_counter()
    for _ in range(queries):
        for i in rng.sample(range(n), 64):
            retriever.passages.row(i)
    hits_ms = (time.perf_counter() - started) / queries * 1000
    started = time.perf_counter()
    retriever.passages.rows(range(n // 2, n // 2 + 8192))
    window_ms = (time.perf_counter() - started) * 1000

    gc.collect()
    base = rss_mb()
    titles = passages["title"]
    lists = ([str(i) for i in passages["id"]], [t or "" for t in titles], list(passages["text"]))
    del titles
    gc.collect()
    lists_mb = rss_mb() - base
    del lists
    return {
        "passages": n,
        "retriever_rss_mb": round(retriever_mb, 1),
        "id_scan_s": round(scan, 2),
        "lists_rss_mb": round(lists_mb, 1),
        "hits_of_a_query_ms": round(hits_ms, 1),
        "build_window_ms": round(window_ms, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--words", type=int, default=100, help="per passage (ReEval's Wikipedia: 100)")
    args = parser.parse_args(argv)
    apply_offline_defaults()
    with tempfile.TemporaryDirectory() as tmp:
        import os

        os.environ["HF_DATASETS_CACHE"] = str(Path(tmp) / "hf")  # the Arrow conversion goes away with the shards
        shards = Path(tmp) / "shards"
        shards.mkdir()
        started = time.perf_counter()
        write_shards(shards, args.passages, args.words)
        print(f"wrote {args.passages:,} passages in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        result = measure(shards)
    print(
        f"| passages | retriever RSS | id scan | same rows as Python lists | 64 hits | 8,192-row window |\n"
        f"|---:|---:|---:|---:|---:|---:|\n"
        f"| {result['passages']:,} | {result['retriever_rss_mb']:,} MB | {result['id_scan_s']} s | "
        f"{result['lists_rss_mb']:,} MB | {result['hits_of_a_query_ms']} ms | {result['build_window_ms']} ms |"
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
