"""Retrieval at scale, in one run: encoding speed per backend, recall@10 against the float32 index,
IVF query latency at a million vectors, and memory.

    python benchmarks/retrieval.py                       # every 7th pool passage (2,082), all backends
    python benchmarks/retrieval.py --stride 1            # the whole 14,574-passage pool
    python benchmarks/retrieval.py --skip-encoding       # only the 1M-vector index part
    python benchmarks/retrieval.py --reuse --skip-scale  # old mode: build/load the pool index in the cache

1. Encoding: the sample is cut into rounds and every backend encodes each round in turn, so load
   from other jobs on a shared machine falls on all of them alike. Rates are passages per wall
   second and per CPU second of this process (the fair figure when the machine is shared).
2. Recall@10: held-out NQ questions (rows the project's configs do not use) search a flat index of
   each backend's vectors; recall is the overlap with torch float32's top 10.
3. Scale: 1M synthetic unit vectors (Gaussian noise around the pool's real embeddings, so there
   is cluster structure as in real corpora); exact flat search vs the planned IVF at several
   nprobe values (recall@10 vs exact, p50/p95 of one query at a time), then the compressed
   stores (IVF-SQ8, IVF-PQ) with their footprint and recall.
Prints tables and one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.data.files import content_sha256  # noqa: E402
from experiments.data.loaders import load_passages, load_qa  # noqa: E402
from experiments.data.registry import DATASETS  # noqa: E402
from experiments.lm.offline import apply_offline_defaults  # noqa: E402
from experiments.paths import cache_dir  # noqa: E402
from programs.embedders import BACKENDS, get_embedder  # noqa: E402
from programs.retrieval.index_plan import IndexPlan, plan_index  # noqa: E402
from programs.retriever import PassageRetriever  # noqa: E402

_REQUIRES = {"onnx": "onnxruntime", "onnx-int8": "onnxruntime", "openvino": "openvino"}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def top_k(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    import faiss

    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    return index.search(queries, k)[1]


def overlap(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth, strict=True)]))


# ---------------------------------------------------------------------------------------- encoding


def encoding(
    backends: list[str], stride: int, rounds: int, queries: int, threads: int, partial: Path | None = None
) -> dict:
    passages = load_passages(DATASETS["wiki_passages"][0]).select(range(0, 14_574, stride))
    retriever = PassageRetriever(passages, None, "")  # only for its embedding text and length sort
    texts = [retriever.embedding_text(i) for i in range(len(retriever))]
    # held out: the configs draw seeds from the first rows of nq; these come from the end
    nq = load_qa(DATASETS["nq"][0])
    questions = [e.question for e in nq[-queries:]]

    embedders, load = {}, {}
    for backend in backends:
        before, started = rss_mb(), time.perf_counter()
        embedders[backend] = get_embedder("all-MiniLM-L6-v2", backend=backend, cache_root=cache_dir(), threads=threads)
        embedders[backend].encode(texts[:2])  # warm-up: first call pays lazy initialisation
        load[backend] = {"load_s": round(time.perf_counter() - started, 1), "rss_added_mb": round(rss_mb() - before)}

    query_vectors = {b: embedders[b].encode(questions) for b in backends}
    latencies: dict[str, list[float]] = {b: [] for b in backends}
    for backend in backends:
        for question in questions[:50]:
            started = time.perf_counter()
            embedders[backend].encode([question])
            latencies[backend].append(time.perf_counter() - started)

    chunks = np.array_split(np.arange(len(texts)), rounds)
    vectors = {b: np.zeros((len(texts), query_vectors[b].shape[1]), np.float32) for b in backends}
    wall = dict.fromkeys(backends, 0.0)
    cpu = dict.fromkeys(backends, 0.0)
    result: dict = {}
    done = 0
    for number, chunk in enumerate(chunks, 1):
        batch = [texts[i] for i in chunk]
        for backend in backends:
            w, c = time.perf_counter(), time.process_time()
            with getattr(embedders[backend], "bulk", contextlib.nullcontext)():  # torch: as an index build runs
                vectors[backend][chunk] = embedders[backend].encode(batch)
            wall[backend] += time.perf_counter() - w
            cpu[backend] += time.process_time() - c
        done += len(chunk)
        # Figures so far after every round: a shared machine may not let the last round finish soon.
        result = summary(backends, vectors, query_vectors, latencies, load, wall, cpu, done)
        result.update(
            {
                "sample": f"every {stride}th pool passage",
                "sample_size": len(texts),
                "rounds_done": number,
                "rounds": rounds,
                "held_out_queries": len(questions),
                "threads": threads,
            }
        )
        print(json.dumps({"round": number, **result}), file=sys.stderr, flush=True)
        if partial is not None:
            partial.write_text(json.dumps(result, indent=1) + "\n")
    result["sample_vectors"] = vectors.get("torch", next(iter(vectors.values())))
    return result


def summary(backends, vectors, query_vectors, latencies, load, wall, cpu, done) -> dict:
    reference = top_k(vectors["torch"][:done], query_vectors["torch"], 10) if "torch" in backends else None
    rows = {}
    for backend in backends:
        found = top_k(vectors[backend][:done], query_vectors[backend], 10)
        rows[backend] = {
            "passages_per_s": round(done / wall[backend], 2),
            "passages_per_cpu_s": round(done / max(cpu[backend], 1e-9), 2),
            "recall@10_vs_torch_fp32": None if reference is None else round(overlap(found, reference), 4),
            "query_encode_p50_ms": round(1000 * statistics.median(latencies[backend]), 1),
            **load[backend],
        }
    base = rows.get("torch")
    for row in rows.values():
        if base:
            row["speedup_wall"] = round(row["passages_per_s"] / base["passages_per_s"], 2)
            row["speedup_cpu"] = round(row["passages_per_cpu_s"] / base["passages_per_cpu_s"], 2)
    return {"passages": done, "backends": rows}


# ------------------------------------------------------------------------------------------- scale


def synthetic(anchors: np.ndarray, count: int, seed: int, kind: str = "clustered") -> np.ndarray:
    """Unit vectors made from the pool's real passage embeddings. ``clustered``: noise around one
    passage (cosine ≈ 0.85 to it; ~70 near-duplicates per passage at 1M), an easy case for IVF.
    ``mixture``: a random blend of two passages plus noise, spread between topics, a hard one.
    Real corpora lie between the two."""
    import faiss

    rng = np.random.default_rng(seed)
    out = np.empty((count, anchors.shape[1]), np.float32)
    for start in range(0, count, 100_000):
        n = min(100_000, count - start)
        block = anchors[rng.integers(0, len(anchors), n)]
        if kind == "mixture":
            mix = rng.random((n, 1), dtype=np.float32)
            block = mix * block + (1 - mix) * anchors[rng.integers(0, len(anchors), n)]
        out[start : start + n] = block + rng.normal(0, 0.03 if kind == "clustered" else 0.02, block.shape).astype(
            np.float32
        )
    faiss.normalize_L2(out)
    return out


def timed_search(index, queries: np.ndarray, k: int) -> tuple[np.ndarray, list[float], list[float]]:
    """Hits, wall seconds and CPU seconds of one query at a time. FAISS runs single-threaded here
    (omp threads = --threads, 1 by default), so the calling thread's CPU time is the query's cost;
    on a machine shared with other jobs the wall time also holds the wait for a core."""
    hits, wall, cpu = [], [], []
    for q in queries:
        started, cpu_started = time.perf_counter(), time.thread_time()
        hits.append(index.search(q[None, :], k)[1][0])
        wall.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - cpu_started)
    return np.array(hits), wall, cpu


def latency(wall: list[float], cpu: list[float]) -> dict:
    ms = {
        "p50_ms": statistics.median(wall),
        "p95_ms": percentile(wall, 0.95),
        "cpu_p50_ms": statistics.median(cpu),
        "cpu_p95_ms": percentile(cpu, 0.95),
    }
    return {key: round(1000 * value, 3) for key, value in ms.items()}


def scale(anchors: np.ndarray, count: int, queries: int, threads: int, nprobes: list[int], kind: str) -> dict:
    import faiss

    faiss.omp_set_num_threads(threads)
    before = rss_mb()
    vectors = synthetic(anchors, count, 1, kind)
    probe = synthetic(anchors, queries, 2, kind)  # held out: not in the index
    result: dict = {
        "synthetic": kind,
        "vectors": count,
        "dim": int(vectors.shape[1]),
        "queries": queries,
        "threads": threads,
        "vectors_mb": round(vectors.nbytes / 2**20),
    }

    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    truth, wall, cpu = timed_search(flat, probe, 10)
    result["flat"] = {**latency(wall, cpu), "index_mb": round(flat.ntotal * flat.d * 4 / 2**20)}
    print(f"flat: {result['flat']}", file=sys.stderr, flush=True)
    del flat
    gc.collect()

    plan = plan_index(count, vectors.shape[1], flat_below=0)
    result["plan"] = plan.params()
    started = time.perf_counter()
    ivf = plan.new_index(vectors.shape[1])
    ivf.train(vectors[np.linspace(0, count - 1, plan.train_size(count)).astype(np.int64)])
    trained = time.perf_counter() - started
    ivf.add(vectors)
    result["ivf_build"] = {
        "train_s": round(trained, 1),
        "add_s": round(time.perf_counter() - started - trained, 1),
        "index_mb": round(faiss.serialize_index(ivf).nbytes / 2**20),
    }
    print(f"IVF build: {result['ivf_build']}", file=sys.stderr, flush=True)
    result["ivf"] = {}
    for nprobe in nprobes:
        faiss.extract_index_ivf(ivf).nprobe = nprobe
        found, wall, cpu = timed_search(ivf, probe, 10)
        result["ivf"][nprobe] = {"recall@10": round(overlap(found, truth), 4), **latency(wall, cpu)}
        print(f"IVF nprobe {nprobe}: {result['ivf'][nprobe]}", file=sys.stderr, flush=True)
    del ivf
    gc.collect()

    # The compressed stores plan_index falls back to when float32 vectors exceed the memory budget.
    pq_m = plan_index(count, vectors.shape[1], flat_below=0, memory_budget=0).pq_m
    for compressed in (
        IndexPlan("ivfsq8", nlist=plan.nlist, nprobe=plan.nprobe),
        IndexPlan("ivfpq", nlist=plan.nlist, nprobe=plan.nprobe, pq_m=pq_m),
    ):
        started = time.perf_counter()
        index = compressed.new_index(vectors.shape[1])
        index.train(vectors[np.linspace(0, count - 1, compressed.train_size(count)).astype(np.int64)])
        index.add(vectors)
        row = result[compressed.kind] = {
            **compressed.params(),
            "build_s": round(time.perf_counter() - started, 1),
            "index_mb": round(faiss.serialize_index(index).nbytes / 2**20),
        }
        for nprobe in nprobes:
            faiss.extract_index_ivf(index).nprobe = nprobe
            found, wall, cpu = timed_search(index, probe, 10)
            row[f"nprobe_{nprobe}"] = {"recall@10": round(overlap(found, truth), 4), **latency(wall, cpu)}
            print(f"{compressed.factory} nprobe {nprobe}: {row[f'nprobe_{nprobe}']}", file=sys.stderr, flush=True)
        del index
        gc.collect()
    result["peak_rss_added_mb"] = round(rss_mb() - before)
    return result


def cached_pool_vectors() -> np.ndarray:
    """Real passage embeddings to scatter synthetic vectors around: a cached flat index of the pool
    if there is one (no embedding needed), else every 29th passage embedded now."""
    import faiss

    sha = content_sha256(DATASETS["wiki_passages"][0])
    for path in sorted((cache_dir() / "indexes").glob(f"{sha[:16]}-*/index.faiss")):
        index = faiss.read_index(str(path))
        if isinstance(index, faiss.IndexFlat):
            return index.reconstruct_n(0, index.ntotal)
    pool = load_passages(DATASETS["wiki_passages"][0]).select(range(0, 14_574, 29))
    texts = [PassageRetriever(pool, None, "").embedding_text(i) for i in range(len(pool))]
    return get_embedder("all-MiniLM-L6-v2", backend="torch").encode(texts)


# ------------------------------------------------------------------------------------ cache mode


def pool_index(index_root: Path, backend: str, limit: int | None) -> dict:
    """Build (or load) the pool's index with ``backend`` and time it, as the first run would."""
    path = DATASETS["wiki_passages"][0]
    passages = load_passages(path, limit=limit)
    sha = content_sha256(path)
    if limit is not None:  # a subset is another corpus: never share its cached index with the full pool
        sha = hashlib.sha256(f"{sha}:first{limit}".encode()).hexdigest()
    embedder = get_embedder("all-MiniLM-L6-v2", backend=backend, cache_root=cache_dir())
    retriever = PassageRetriever(passages, embedder, sha)
    started = time.perf_counter()
    retriever.build_or_load(index_root)
    seconds = time.perf_counter() - started
    built = "loaded_from" not in retriever.meta
    return {
        "backend": backend,
        "passages": len(retriever),
        "index_built": built,
        "seconds": round(seconds, 1),
        "passages_per_s": round(len(retriever) / seconds, 1) if built else None,
        **retriever.describe(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    available = [b for b in BACKENDS if b == "torch" or importlib.util.find_spec(_REQUIRES[b])]
    parser.add_argument("--backends", default=",".join(available), help=f"default: {','.join(available)}")
    parser.add_argument("--stride", type=int, default=7, help="every Nth pool passage (default 7: 2,082)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--queries", type=int, default=200, help="held-out NQ questions for recall@10")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads per backend (default 1, as a run's queries; torch builds take this many)",
    )
    parser.add_argument("--vectors", type=int, default=1_000_000, help="synthetic vectors for the scale part")
    parser.add_argument("--nprobe", default="4,8,16,32,64")
    parser.add_argument("--synthetic", choices=("clustered", "mixture"), default="mixture")
    parser.add_argument("--skip-encoding", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="also build/load the pool index in the project cache")
    parser.add_argument("--limit", type=int, default=None, help="with --reuse: the first N passages only")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args(argv)
    apply_offline_defaults()
    os.environ["REEVAL_THREADS"] = str(args.threads)  # torch's bulk encoding takes its cores from here

    result: dict = {"machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg()}}
    anchors = None
    if not args.skip_encoding:
        result["encoding"] = encoding(
            args.backends.split(","),
            args.stride,
            args.rounds,
            args.queries,
            args.threads,
            args.out.with_suffix(".partial.json") if args.out else None,
        )
        anchors = result["encoding"].pop("sample_vectors")
    if not args.skip_scale:
        if anchors is None:
            anchors = cached_pool_vectors()
        result["scale"] = scale(
            anchors, args.vectors, args.queries, args.threads, [int(x) for x in args.nprobe.split(",")], args.synthetic
        )
    if args.reuse:
        result["pool_index"] = [pool_index(cache_dir(), b, args.limit) for b in args.backends.split(",")]
    elif args.limit is not None:
        with tempfile.TemporaryDirectory(prefix="reeval-bench-") as tmp:
            result["pool_index"] = [pool_index(Path(tmp), b, args.limit) for b in args.backends.split(",")]
    result["machine"]["load_avg_at_end"] = os.getloadavg()

    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
