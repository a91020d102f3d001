"""Local-model parallelism: 1 llama.cpp context × N threads against N contexts × 1 thread.

Runs one config (default: the default run, experiments/configs/nq_seed_selection.yaml) with
`run.threads` 1 and then N (N = the cores: 2 here) in one process, the LM call cache off, and
reports cases per minute, the LM engine's own seconds, and the anonymous and file-backed
resident memory each run added (the weights are memory-mapped: a second context should add its
KV cache and buffers to the anonymous memory, not another copy of the weights). Then it checks that
the greedy records of both runs are identical case by case.

    python benchmarks/local_parallelism.py --limit 10
    python benchmarks/local_parallelism.py CONFIG --limit 10 --repeat 2   # alternate the order: A B B A

Runs, MLflow and the cache go to temporary folders unless REEVAL_RUNS_DIR / MLFLOW_TRACKING_URI are set.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time


def memory_kb() -> dict[str, int]:
    """Anonymous memory of this process (heap, KV caches, compute buffers: what a context costs,
    and where weights would go if llama.cpp copied them) and resident mapped files (the weights;
    a page mapped by two contexts counts twice here although it is in memory once)."""
    fields = {}
    with open("/proc/self/smaps_rollup") as rollup:
        for line in rollup:
            key, _, value = line.partition(":")
            if key in ("Anonymous", "Rss"):
                fields[key] = int(value.split()[0])
    fields["File"] = fields["Rss"] - fields["Anonymous"]
    return fields


def comparable(records: list[dict]) -> dict[str, dict]:
    return {r["id"]: {k: v for k, v in r.items() if k not in ("seconds", "attempt")} for r in records}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", nargs="?", default=None, help="default: the default run's config")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1, help="rounds; each round runs both splits (ABBA order)")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="reeval-bench-parallel-")
    os.environ.setdefault("REEVAL_RUNS_DIR", os.path.join(scratch, "runs"))
    os.environ.setdefault("MLFLOW_TRACKING_URI", f"sqlite:///{scratch}/mlflow.db")
    os.environ.setdefault("DSPY_CACHEDIR", os.path.join(scratch, "dspy"))

    from experiments.config_loader import load_config
    from experiments.lm import engine as llama_engine
    from experiments.lm.pool import available_cores
    from experiments.lm.usage import prompt_read_shares
    from experiments.runner import run_experiment

    cores = available_cores()
    overrides = {"data.limit": args.limit}
    base = load_config(args.config)
    for role in ("pivot", "judge"):
        if getattr(base.models, role) is not None:
            overrides[f"models.{role}.cache"] = False  # every call decoded, in both splits
    settings = {f"1x{cores}": {"run.threads": 1}, f"{cores}x1": {"run.threads": cores}}
    order = []
    for round_ in range(args.repeat):
        order.extend(settings if round_ % 2 == 0 else reversed(list(settings)))

    rows, records = [], {}
    for i, label in enumerate(order):
        config = load_config(args.config, {**overrides, **settings[label]})
        baseline = memory_kb()
        started = time.perf_counter()
        result = run_experiment(config, run_id=f"bench-{label}-{i}", progress=True)
        wall = time.perf_counter() - started
        memory = memory_kb()
        llama_engine.close_pools()  # the next split loads its own contexts
        records.setdefault(label, comparable(result.records))
        calls = sum(v for k, v in result.metrics.items() if k.startswith("lm.") and k.endswith(".calls"))
        lm_seconds = sum(v for k, v in result.metrics.items() if k.startswith("lm.") and k.endswith(".seconds"))
        rows.append(
            {
                "split": label,
                "cases": result.new_cases,
                "wall_s": round(wall, 1),
                "cases_per_min": round(60 * result.new_cases / wall, 2),
                "lm_calls": int(calls),
                "lm_engine_s": round(lm_seconds, 1),
                "prompt_read_share": prompt_read_shares(result.metrics),  # per local model: read ÷ sent
                "anon_mb_added": round((memory["Anonymous"] - baseline["Anonymous"]) / 1024),
                "file_rss_mb_added": round((memory["File"] - baseline["File"]) / 1024),
            }
        )
        print(json.dumps(rows[-1]), flush=True)

    first, second = (records[label] for label in settings)
    differing = sorted(k for k in first.keys() | second.keys() if first.get(k) != second.get(k))
    summary = {
        "cores": cores,
        "config": str(args.config or "default"),
        "limit": args.limit,
        "rows": rows,
        "identical_greedy_records": not differing,
        "differing_cases": differing[:20],
    }
    by_split = {label: [r["cases_per_min"] for r in rows if r["split"] == label] for label in settings}
    mean = {label: sum(v) / len(v) for label, v in by_split.items()}
    a, b = list(settings)
    summary["speedup_contexts_over_threads"] = round(mean[b] / mean[a], 3)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
