"""Which of the stacked judge's signals carries its decision, per task, from judged runs: how often each
single-signal judge (the extraction alone, the choice alone, each with the thresholds the judge study fitted
for it) decides as the stacked judge did, and how each agrees with the blind review where a run was read
(docs/reviews/: one maintainer's blind reading). No model runs: every judged record keeps its signals, and a
single-signal decision is recomputed from them.

The extraction alone is exactly what a one-call judge reads (its call is the stacked judge's first). The
choice's recorded probabilities are the stacked judge's own: a choice-only judge would not offer the whole
context's extraction as a rival, so its column is an estimate.

    python scripts/judge_signal_agreement.py                     # every judged run under docs/reviews/
    python scripts/judge_signal_agreement.py runs/<id> [...]      # judged run directories (cases.jsonl)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from programs.judge import score  # noqa: E402
from scripts.archived_runs import latest_records, run_dirs  # noqa: E402

PARAMS = ROOT / "experiments" / "judging" / "params" / "qwen2.5-1.5b.json"
SINGLE = ("extract", "choose")


def verdicts(run: Path) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for path in sorted((run / "review").glob("reviewer-*.jsonl")):
        for line in path.read_text().splitlines():
            v = json.loads(line)
            if v.get("verdict") in ("valid", "invalid"):
                out[v["id"]] = v["verdict"] == "valid"
    return out


def decide(kind: str, signals: dict, params: dict) -> bool | None:
    p = score(kind, signals, params)
    return None if p is None else p >= params.get("thresholds", {}).get(kind, 0.5)


def kappa(pairs: list[tuple[bool, bool]]) -> float:
    n = len(pairs)
    if not n:
        return float("nan")
    observed = sum(a == b for a, b in pairs) / n
    pa, pb = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return (observed - chance) / (1 - chance) if chance < 1 else float("nan")


def measure(run: Path, fitted: dict) -> dict | None:
    records = latest_records(run)
    judged = [r for r in records if (r.get("judge") or {}).get("signals") and r["judge"].get("method") == "stacked"]
    if not judged:
        return None
    reviewed = verdicts(run)

    def single(method: str):
        params = fitted["methods"][method]["params"]
        return lambda r: bool(decide(r["kind"], r["judge"]["signals"], params))

    deciders = {
        "stacked": lambda r: r["status"] == "accepted",
        **{m: single(m) for m in SINGLE},
        "none": lambda r: True,
    }
    for r in judged:
        r["kind"] = r.get("judge_kind", "answer")
    out = {
        "run": str(run.relative_to(ROOT)) if run.is_relative_to(ROOT) else str(run),
        "task": judged[0].get("task"),
        "version": judged[0].get("program_version"),
        "judged": len(judged),
        "reviewed": sum(r["id"] in reviewed for r in judged),
        "valid": sum(reviewed[r["id"]] for r in judged if r["id"] in reviewed),
    }
    for name, decides in deciders.items():
        pairs = [(decides(r), reviewed[r["id"]]) for r in judged if r["id"] in reviewed]
        accepted = [valid for ok, valid in pairs if ok]
        out[name] = {
            "accepts": sum(decides(r) for r in judged),
            "as_stacked": sum(decides(r) == (r["status"] == "accepted") for r in judged),
            "accepted_reviewed": len(accepted),
            "accepted_valid": sum(accepted),
            "kappa": kappa(pairs),
        }
    return out


def markdown(rows: list[dict]) -> str:
    head = (
        "| run | task | judged | decides as stacked: extract · choose | reviewed (valid) | "
        "valid among accepted: stacked · extract · choose · no judge | κ: stacked · extract · choose |\n"
        "|---|---|---:|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        n = r["judged"]
        same = " · ".join(f"{r[m]['as_stacked']}/{n}" for m in SINGLE)
        if r["reviewed"]:
            precision = " · ".join(
                f"{r[m]['accepted_valid']}/{r[m]['accepted_reviewed']}" for m in ("stacked", *SINGLE, "none")
            )
            kappas = " · ".join(f"{r[m]['kappa']:+.2f}" for m in ("stacked", *SINGLE))
            read = f"{r['reviewed']} ({r['valid']})"
        else:
            precision = kappas = read = "—"
        lines.append(
            f"| `{r['run']}` | {r['task']} (`{r['version']}`) | {n} | {same} | {read} | {precision} | {kappas} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", help="judged run directories (default: docs/reviews/)")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args()
    fitted = json.loads(PARAMS.read_text())
    rows = [m for run in run_dirs(args.runs) if (m := measure(run.resolve(), fitted))]
    print(json.dumps(rows, indent=2) if args.json else markdown(rows))


if __name__ == "__main__":
    main()
