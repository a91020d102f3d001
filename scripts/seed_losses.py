"""Where selected seeds are lost, per generator: each selected seed's outcome read off its case records'
status (`accepted`, `rejected:<reason>`, `error:<kind>`), tabulated by reason and by the step that rejected
it (proposal, the generator's checks, the judge, an error). No model runs.

A seed counts as selected unless its only status is `rejected:seed_not_selected`; it yields when any of its
cases is accepted (context enriching makes two copies per seed; an inconsistent seed's pair shares one
status). A seed lost with two different reasons (one per enriched copy) is listed under both, joined.

    python scripts/seed_losses.py                    # every run archived under docs/reviews/
    python scripts/seed_losses.py runs/<id> [...]     # run directories holding a cases.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.archived_runs import latest_records, run_dirs  # noqa: E402

NOT_SELECTED = "rejected:seed_not_selected"


def step(reason: str) -> str:
    """Which step of generation a status belongs to."""
    if reason == "accepted":
        return "yield"
    if reason.startswith("error:"):
        return "error"
    name = reason.removeprefix("rejected:")
    if name.startswith("judge"):
        return "judge"
    if name.startswith("proposal") or name == "empty_proposal":
        return "proposal"
    return "checks"


def seed_outcomes(records: list[dict]) -> dict[str, str]:
    """Per selected seed: "accepted", or the reason(s) its cases were all lost."""
    by_seed: dict[str, set[str]] = defaultdict(set)
    for r in records:
        by_seed[r.get("seed_id", r["id"])].add(str(r.get("status", "?")))
    out = {}
    for seed, statuses in by_seed.items():
        if statuses == {NOT_SELECTED}:
            continue
        statuses.discard(NOT_SELECTED)
        out[seed] = "accepted" if "accepted" in statuses else " + ".join(sorted(statuses))
    return out


def run_label(run: Path) -> str:
    return (
        str(run.relative_to(ROOT / "docs" / "reviews")) if run.is_relative_to(ROOT / "docs" / "reviews") else str(run)
    )


def measure(run: Path) -> dict | None:
    records = latest_records(run)
    if not records or not records[0].get("task"):
        return None
    outcomes = seed_outcomes(records)
    judged = any(r.get("judge") for r in records)
    return {
        "run": run_label(run),
        "task": records[0]["task"],
        "version": records[0].get("program_version", "?"),
        "judged": judged,
        "seeds": len({r.get("seed_id", r["id"]) for r in records}),
        "selected": len(outcomes),
        "outcomes": Counter(outcomes.values()),
    }


def markdown(rows: list[dict]) -> str:
    parts = []
    by_task: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_task[row["task"]].append(row)
    for task, runs in by_task.items():
        head = "| step | outcome | " + " | ".join(
            f"`{r['run']}` (`{r['version']}`{', judged' if r['judged'] else ', no judge'})" for r in runs
        )
        lines = [f"**{task}**", "", head + " |", "|---|---|" + "---:|" * len(runs)]
        lines.append(
            "| | selected seeds (of all) | " + " | ".join(f"{r['selected']} ({r['seeds']})" for r in runs) + " |"
        )
        reasons = Counter()
        for r in runs:
            reasons.update({k: v / max(1, r["selected"]) for k, v in r["outcomes"].items()})
        order = sorted(reasons, key=lambda k: (k != "accepted", -reasons[k], k))
        for reason in order:
            cells = []
            for r in runs:
                n = r["outcomes"].get(reason, 0)
                cells.append(f"{n} ({n / r['selected']:.0%})" if n else "—")
            label = "**yielded an accepted case**" if reason == "accepted" else f"`{reason}`"
            lines.append(f"| {step(reason.split(' + ')[0])} | {label} | " + " | ".join(cells) + " |")
        per_step = []
        for r in runs:
            steps = Counter()
            for reason, n in r["outcomes"].items():
                if reason != "accepted":
                    steps[step(reason.split(" + ")[0])] += n
            per_step.append(", ".join(f"{s} {n}" for s, n in steps.most_common()) or "—")
        lines.append("| | lost, by step | " + " | ".join(per_step) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", help="run directories (default: every run archived under docs/reviews/)")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args()
    rows = [m for run in run_dirs(args.runs) if (m := measure(run))]
    if args.json:
        print(json.dumps(rows, indent=2, default=dict))
    else:
        print(markdown(rows))


if __name__ == "__main__":
    main()
