"""Retrieval speed on the shipped Wikipedia pool: index build, load from cache, query latency.

    python benchmarks/retrieval.py                                 # all-MiniLM-L6-v2
    python benchmarks/retrieval.py --embedder all-mpnet-base-v2 --limit 1000   # build rate on a subset

The build is measured into a fresh directory (``--cache-root``, default a temporary one) so an
existing cache never hides it; ``--reuse`` measures against the project cache instead (load only
when an index is already there). Queries are NQ questions with their own paragraph and answers
excluded, as context enriching uses them. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.data import DATASETS, content_sha256, load_passages, load_qa  # noqa: E402
from experiments.offline import apply_offline_defaults  # noqa: E402
from experiments.paths import cache_dir  # noqa: E402
from programs.embedders import get_embedder  # noqa: E402
from programs.retriever import PassageRetriever  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(
    embedder_name: str, index_root: Path, queries: int, k: int, threads: int | None, limit: int | None
) -> dict:
    import faiss
    import torch

    if threads:
        torch.set_num_threads(threads)
        faiss.omp_set_num_threads(threads)
    path = DATASETS["wiki_passages"][0]
    passages = load_passages(path, limit=limit)
    sha = content_sha256(path)
    if limit is not None:  # a subset is another corpus: never share its cached index with the full pool
        sha = hashlib.sha256(f"{sha}:first{limit}".encode()).hexdigest()

    started = time.perf_counter()
    # Models always live in the project cache (mpnet is assembled there once); only indexes move.
    embedder = get_embedder(embedder_name, cache_root=cache_dir())
    model_load = time.perf_counter() - started

    built = PassageRetriever(passages, embedder, sha)
    started = time.perf_counter()
    built.build_or_load(index_root)
    first = time.perf_counter() - started
    was_built = "loaded_from" not in built.meta

    loaded = PassageRetriever(passages, embedder, sha)
    started = time.perf_counter()
    loaded.build_or_load(index_root)
    load = time.perf_counter() - started

    seeds = load_qa(DATASETS["nq"][0], limit=queries)
    loaded.search(seeds[0].question, k=k)  # warm-up: first call pays lazy initialisation
    latencies = []
    for seed in seeds:
        started = time.perf_counter()
        loaded.search(seed.question, k=k, exclude_texts=[seed.context], exclude_answers=seed.answers)
        latencies.append(time.perf_counter() - started)
    started = time.perf_counter()
    loaded.search_batch(
        [s.question for s in seeds],
        k=k,
        exclude_texts=[[s.context] for s in seeds],
        exclude_answers=[s.answers for s in seeds],
    )
    batch = time.perf_counter() - started

    return {
        "embedder": embedder_name,
        "passages": len(loaded),
        "dim": loaded.meta["dim"],
        "threads": threads or torch.get_num_threads(),
        "model_load_s": round(model_load, 2),
        "index_built": was_built,
        "build_s": round(first, 2) if was_built else None,
        "build_passages_per_s": round(len(loaded) / first, 1) if was_built else None,
        "load_from_cache_s": round(load, 3),
        "queries": len(seeds),
        "k": k,
        "single_p50_ms": round(1000 * statistics.median(latencies), 2),
        "single_p95_ms": round(1000 * percentile(latencies, 0.95), 2),
        "batch_queries_per_s": round(len(seeds) / batch, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--queries", type=int, default=200, help="NQ questions to time (default 200)")
    parser.add_argument("-k", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="index the first N passages only")
    parser.add_argument("--threads", type=int, default=None, help="torch/FAISS threads (default: library's)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--cache-root", type=Path, help="where to put the index (default: a temporary dir)")
    where.add_argument("--reuse", action="store_true", help="use the project cache (REEVAL_CACHE_DIR)")
    args = parser.parse_args(argv)
    apply_offline_defaults()

    options = (args.queries, args.k, args.threads, args.limit)
    if args.reuse or args.cache_root:
        result = run(args.embedder, args.cache_root or cache_dir(), *options)
    else:
        with tempfile.TemporaryDirectory(prefix="reeval-bench-") as tmp:
            result = run(args.embedder, Path(tmp), *options)

    rows = [(key, "-" if value is None else value) for key, value in result.items()]
    width = max(len(key) for key, _ in rows)
    print("\n".join(f"{key:<{width}}  {value}" for key, value in rows))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
