"""Peak memory of a bench run, and the prompt tokens each local LM call sends and llama.cpp reads.

    python benchmarks/bench_memory.py experiments/configs/bench_local.yaml      # cold: new run, empty call cache
    python benchmarks/bench_memory.py experiments/configs/bench_local.yaml --limit 10
    python benchmarks/bench_memory.py CONFIG --run-id <id>     # resume or re-run that run, with the call cache

The bench runs in a child process (this script with --child), so what is measured is the bench's own:

- peak RSS: the child's `ru_maxrss` (its largest resident set, read when it exits), and the resident
  sets of the child and every process under it (Ray's, with `executor: ray`) summed every half second;
- peak PSS of the same processes, sampled alike: a page several processes or mappings share (a weights
  file mapped by two Ray actors, shared libraries) counts once in all, where RSS counts it in each;
- per generation stage (local executor): cases accepted per CPU-hour;
- per stage, in running order: wall and CPU seconds (this process's threads; not Ray actors'), resident
  set and PSS at its end and the child's peak RSS so far, so the stage that set the peak shows;
- per stage kind and LM, over real (uncached) local calls: prompt tokens sent and read (decoded by
  llama.cpp; the rest came from the KV state its context held or from the prefix-state cache), as the
  engine counts them in every run (`lm.<label>.prompt_tokens_read`: experiments/lm/prompt_reads.py),
  Ray actors' calls included. A target's answers are its calls in `evaluate.*`, `conflict.evaluate.*`
  and `knowledge.*` stages.

Cold (the default) means a new run id and an empty DSPy call cache in a temporary directory, so every
call reaches a model; the retrieval index stays where REEVAL_CACHE_DIR keeps it. Prints a table and
one JSON line (with date, commit, machine and command, as docs/results pages record them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.provenance import commit, machine  # noqa: E402

TARGET_STAGES = ("evaluate.", "conflict.evaluate.", "knowledge.")


# -- in the child: the bench, counted ----------------------------------------------------------------------


def rss_mb(pid: int | str = "self") -> float:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0.0


def pss_mb(pid: int | str = "self") -> float:
    """Proportional set size: a page shared by k mappings counts 1/k in each (RSS counts it whole in each)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Pss:")) / 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError, StopIteration, ValueError):
        return 0.0


def cpu_seconds() -> float:
    """User and system CPU time of this process, all its threads: a shared machine stretches wall time,
    much less the CPU a stage used."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def stage_kind(stage: str) -> str:
    """A stage's name without its model (model names hold dots): generate.answer_swap, evaluate, seeds, …"""
    parts = stage.split(".")
    if parts[0] == "conflict":
        return ".".join(parts[:3] if parts[1] == "generate" else parts[:2])
    return ".".join(parts[:2] if parts[0] == "generate" else parts[:1])


def token_summary(stage_metrics: dict[str, dict[str, float]]) -> dict:
    """Per stage kind and LM label (`target/<model>`, `pivot/<model>`, `judge`): real calls, prompt tokens
    sent and read, and per call, from the engine's own counts that every stage records
    (`lm.<label>.prompt_tokens_read`, experiments/lm/prompt_reads.py; workers' counts are merged in, so Ray
    runs count too); targets' answers also on their own. Labels without a read count (provider LMs) are
    left out."""
    groups: dict[str, dict[str, float]] = defaultdict(lambda: {"calls": 0, "sent": 0, "read": 0})
    for stage, metrics in stage_metrics.items():
        kind = stage_kind(stage)
        suffix = ".prompt_tokens_read"
        labels = {key[3 : -len(suffix)] for key in metrics if key.startswith("lm.") and key.endswith(suffix)} - {""}
        for label in sorted(labels):
            counts = [metrics.get(f"lm.{label}.{n}", 0) for n in ("calls", "prompt_tokens", "prompt_tokens_read")]
            target = label.startswith("target/") and stage.startswith(TARGET_STAGES)
            keys = (f"{kind}|{label}", "all") + ((f"target_answers|{label[7:]}", "target_answers") if target else ())
            for key in keys:
                for name, n in zip(("calls", "sent", "read"), counts, strict=True):
                    groups[key][name] += int(n)
    for group in groups.values():
        group["sent_per_call"] = round(group["sent"] / group["calls"], 1) if group["calls"] else None
        group["read_per_call"] = round(group["read"] / group["calls"], 1) if group["calls"] else None
        group["read_share"] = round(group["read"] / group["sent"], 3) if group["sent"] else None
    return dict(sorted(groups.items()))


def accepted_per_cpu_hour(stages: list[dict], metrics: dict[str, dict[str, float]]) -> dict[str, dict]:
    """Per generation stage that ran: cases accepted (the stage's `cases_accepted`), its CPU seconds, and
    accepted cases per CPU-hour. CPU is this process's, so with `executor: ray` (work in actors) it is left
    out. Seed selection, shared by the NQ generators, is its own stage and not charged to any of them."""
    out = {}
    for s in stages:
        accepted = metrics.get(s["stage"], {}).get("cases_accepted")
        if s["ran"] and accepted is not None and s["cpu_seconds"] > 0:
            rate = round(accepted / s["cpu_seconds"] * 3600, 1)
            out[s["stage"]] = {"accepted": int(accepted), "cpu_seconds": s["cpu_seconds"], "per_cpu_hour": rate}
    return out


def stage_metrics(run_id: str) -> dict[str, dict[str, float]]:
    """Every stage's recorded metrics (the bench's ledger, runs/<id>/stages.json)."""
    from experiments.bench.stages import LEDGER_FILE, Ledger
    from experiments.paths import runs_dir

    return {
        stage: entry.get("metrics", {}) for stage, entry in Ledger(runs_dir() / run_id / LEDGER_FILE).stages.items()
    }


def child(args) -> int:
    from experiments.lm.offline import apply_offline_defaults

    apply_offline_defaults()
    from experiments import launch
    from experiments.bench.stages import StageRunner
    from experiments.config_loader import load_config

    stages: list[dict] = []
    run_stage = StageRunner.run

    def timed_stage(self, stage, *args, **kwargs):
        started, cpu = time.perf_counter(), cpu_seconds()
        try:
            return run_stage(self, stage, *args, **kwargs)
        finally:
            stages.append(
                {
                    "stage": stage,
                    "ran": self.ran.get(stage),
                    "seconds": round(time.perf_counter() - started, 1),
                    "cpu_seconds": round(cpu_seconds() - cpu, 1),
                    "rss_end_mb": round(rss_mb(), 1),
                    "pss_end_mb": round(pss_mb(), 1),
                    "peak_so_far_mb": round(peak_mb(), 1),
                }
            )

    StageRunner.run = timed_stage
    overrides = {"data.limit": args.limit} if args.limit is not None else {}
    if args.executor:
        overrides["run.executor"] = args.executor
    config = load_config(Path(args.config), overrides)
    started = time.perf_counter()
    result = launch.run_experiment(config, run_id=args.run_id, fresh=not args.warm and not args.run_id, progress=False)
    out = {
        "run_id": result.run_id,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "peak_rss_mb": round(peak_mb(), 1),
        "stages": stages,
        "tokens": token_summary(metrics := stage_metrics(result.run_id)),
        "accepted_per_cpu_hour": accepted_per_cpu_hour(stages, metrics),
    }
    Path(args.child).write_text(json.dumps(out))
    return 0


# -- in the parent: the child's memory from outside ----------------------------------------------------------


def tree_pids(root: int) -> set[int]:
    """`root` and every process under it (Ray's raylet and workers)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [p for p, parent in parents.items() if parent == pid and p not in tree]
        tree.update(children)
        frontier.extend(children)
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="a bench config (task: bench)")
    parser.add_argument("--limit", type=int, help="override data.limit")
    parser.add_argument("--executor", choices=("local", "ray"), help="override run.executor")
    parser.add_argument("--run-id", help="run (or resume) this run id; implies the call cache is kept")
    parser.add_argument("--warm", action="store_true", help="keep the call cache and the config's run id")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)

    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        if not args.warm and not args.run_id:
            env["DSPY_CACHEDIR"] = str(Path(tmp) / "dspy")  # cold: every call reaches a model
        out = Path(tmp) / "result.json"
        command = [sys.executable, __file__, "--child", str(out), *(argv if argv is not None else sys.argv[1:])]
        proc = subprocess.Popen(command, cwd=ROOT, env=env)
        tree_peak = tree_pss_peak = 0.0
        while proc.poll() is None:
            pids = tree_pids(proc.pid)
            tree_peak = max(tree_peak, sum(rss_mb(pid) for pid in pids))
            tree_pss_peak = max(tree_pss_peak, sum(pss_mb(pid) for pid in pids))
            time.sleep(0.5)
        child_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if proc.returncode != 0 or not out.exists():
            print(f"the bench exited with code {proc.returncode}", file=sys.stderr)
            return proc.returncode or 1
        result = json.loads(out.read_text())

    result.update(
        {
            "child_peak_rss_mb": round(child_peak, 1),
            "tree_peak_rss_mb_sampled": round(tree_peak, 1),
            "tree_peak_pss_mb_sampled": round(tree_pss_peak, 1),
            "date": date.today().isoformat(),
            "commit": commit(),
            "machine": machine(),
            "command": "python3 benchmarks/bench_memory.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        }
    )
    print(f"run {result['run_id']}: {result['wall_seconds']} s")
    print(f"peak RSS: bench process {result['child_peak_rss_mb']} MB; with its children (sampled) {tree_peak:.1f} MB")
    print(f"peak PSS with its children (sampled): {tree_pss_peak:.1f} MB")
    print(
        f"{'stage':48} {'ran':>5} {'seconds':>9} {'CPU s':>8} {'RSS at end':>11} {'PSS at end':>11}"
        f" {'peak RSS so far':>16}"
    )
    for s in result["stages"]:
        print(
            f"{s['stage']:48} {s['ran']!s:>5} {s['seconds']:>9} {s['cpu_seconds']:>8} {s['rss_end_mb']:>11}"
            f" {s['pss_end_mb']:>11} {s['peak_so_far_mb']:>16}"
        )
    print(f"{'calls (stage kind | LM)':48} {'calls':>6} {'sent/call':>10} {'read/call':>10} {'read share':>11}")
    for key, g in result["tokens"].items():
        print(f"{key:48} {g['calls']:>6} {g['sent_per_call']:>10} {g['read_per_call']:>10} {g['read_share']!s:>11}")
    if not args.executor:
        print(f"{'generation stage':48} {'accepted':>9} {'CPU s':>8} {'per CPU-hour':>13}")
        for stage, g in result["accepted_per_cpu_hour"].items():
            print(f"{stage:48} {g['accepted']:>9} {g['cpu_seconds']:>8} {g['per_cpu_hour']:>13}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
