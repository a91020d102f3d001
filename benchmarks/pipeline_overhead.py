"""Pipeline overhead and cache effect, measured in one process.

Runs one config three times and reports ratios, not absolute seconds (the machine is shared):
  1. cold      — new run id (--fresh); DSPy's call cache as it is (use --no-cache for a cold LM)
  2. resume    — same run id: the checkpoint answers every case
  3. cached    — new run id again: every LM call is answered by DSPy's disk cache
Reports wall time ÷ raw LM engine time for the cold run (what the harness adds around the LM),
and each later run's wall time ÷ the cold run's, with the number of real LM calls made.

    python benchmarks/pipeline_overhead.py experiments/configs/nq_answer_swap.yaml --limit 10
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--no-cache", action="store_true", help="a private, empty DSPy cache for the cold run")
    args = parser.parse_args()
    if args.no_cache:
        os.environ["DSPY_CACHEDIR"] = tempfile.mkdtemp(prefix="reeval-bench-cache-")
    os.environ.setdefault("REEVAL_RUNS_DIR", tempfile.mkdtemp(prefix="reeval-bench-runs-"))

    from experiments.config_loader import load_config
    from experiments.lm.usage import prompt_read_shares
    from experiments.runner import run_experiment

    config = load_config(args.config, {"data.limit": args.limit})
    rows = []
    cold_id = None
    for label, kwargs in (("cold", {"fresh": True}), ("resume", {}), ("cached", {"fresh": True})):
        if label == "resume":
            kwargs = {"run_id": cold_id}
        time.sleep(1.1)  # fresh run ids carry a timestamp in seconds
        started = time.perf_counter()
        result = run_experiment(config, progress=False, **kwargs)
        wall = time.perf_counter() - started
        cold_id = cold_id or result.run_id
        calls = sum(v for k, v in result.metrics.items() if k.startswith("lm.") and k.endswith(".calls"))
        lm_seconds = sum(v for k, v in result.metrics.items() if k.startswith("lm.") and k.endswith(".seconds"))
        rows.append(
            {
                "run": label,
                "wall_s": round(wall, 2),
                "lm_engine_s": round(lm_seconds, 2),
                "real_lm_calls": int(calls),
                "new_cases": result.new_cases,
                "prompt_read_share": prompt_read_shares(result.metrics),  # per local model: read ÷ sent
            }
        )
    cold = rows[0]
    summary = {
        "rows": rows,
        "cold_wall_over_lm_time": round(cold["wall_s"] / cold["lm_engine_s"], 3) if cold["lm_engine_s"] else None,
        "resume_over_cold": round(rows[1]["wall_s"] / cold["wall_s"], 4),
        "cached_over_cold": round(rows[2]["wall_s"] / cold["wall_s"], 4),
    }
    for row in rows:
        print(
            f"{row['run']:>7}: wall {row['wall_s']:8.2f}s  LM {row['lm_engine_s']:8.2f}s  "
            f"real LM calls {row['real_lm_calls']:4d}  new cases {row['new_cases']}  "
            f"prompt read/sent {row['prompt_read_share'] or '—'}"
        )
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
