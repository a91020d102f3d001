"""One sweep table from several sweep runs of the same generator and dial (each run's
report/records.jsonl): seeds of different data sources or splits, one curve.

    python3 scripts/pool_sweeps.py RUN_ID [RUN_ID ...] [--default LEVEL]

Per level and target and setting: cases, evidence answers (the swapped answer), memory answers (the seed's own
answer), other answers, each with a 95% Wilson interval, and the paired difference of success against the
default level on the cases both levels made (exact McNemar p).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.paths import runs_dir  # noqa: E402
from experiments.sweep.curves import sweep_table  # noqa: E402
from metrics.intervals import wilson_interval  # noqa: E402


def pooled_records(run_ids: list[str]) -> dict[str, list[dict]]:
    by_level: dict[str, list[dict]] = defaultdict(list)
    for run_id in run_ids:
        path = runs_dir() / run_id / "report" / "records.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            # a case id is unique within its run only
            by_level[r["level"]].append({**r, "case_id": f"{run_id}|{r['case_id']}"})
    return dict(by_level)


def _share(k: int, n: int) -> str:
    low, high = wilson_interval(k, n) if n else (float("nan"), float("nan"))
    return f"{k / n:.2f} [{low:.2f}, {high:.2f}]" if n else "—"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--default", required=True, help="the level the others are paired against")
    args = parser.parse_args()
    by_level = pooled_records(args.runs)
    targets = sorted({r["target"] for rs in by_level.values() for r in rs})
    settings = sorted({r["setting"] for rs in by_level.values() for r in rs})
    print("| level | target | setting | cases | evidence answer | memory answer | other | success − default (paired) |")
    print("|---|---|---|---:|---|---|---|---|")
    for row in sweep_table(by_level, args.default, targets, settings):
        s, m, d = row["success"], row["memory"], row["vs_default"]
        n, fooled, memory = s["n"], round(s["rate"] * s["n"]), round(m["rate"] * m["n"])
        paired = (
            "(default)"
            if row["level"] == args.default
            else f"{d['diff']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}], p = {d['p']:.2g} (n {d['n']})"
        )
        print(
            f"| {row['level']} | {row['target']} | {row['setting']} | {n} | {_share(n - fooled, n)} | "
            f"{_share(memory, m['n'])} | {_share(fooled - memory, n)} | {paired} |"
        )


if __name__ == "__main__":
    main()
