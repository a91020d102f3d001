"""The memory / evidence / other table of an archived knowledge-conflict run, its answers classified again by
the current `metrics.conflict` (no model runs): what a change of the classifier or of the swap checks does to
a measured table.

With `--cases`, answer swaps the current checks reject (the case's proposal and texts as recorded, the edit
redone in code) are left out, as a rerun under the current generator version would have left them out.

    python scripts/reclassify_conflict.py docs/reviews/knowledge-conflict-9eb7a0a1c6/report/conflict_answers.jsonl
    python scripts/reclassify_conflict.py docs/reviews/knowledge-conflict-9eb7a0a1c6/report/conflict_answers.jsonl \
        --cases docs/reviews/knowledge-conflict-9eb7a0a1c6/conflict.generate.answer_swap.qwen2.5-1.5b/cases.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.bench.conflict import classified, table  # noqa: E402
from scripts.measure_swap_traces import failures  # noqa: E402

ANSWER_FIELDS = ("prediction", "status", "label")


def retable(records: list[dict], case_files: list[Path]) -> tuple[list[dict], Counter, Counter]:
    """The table of the records relabelled now, the label changes (archived → now), and the checks that
    reject archived swaps (their answers left out)."""
    dropped: Counter = Counter()
    gone: set[str] = set()
    for path in case_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            if case.get("task") == "answer_swap" and case["status"] == "accepted":
                failed = failures(case)
                if failed:
                    gone.add(case["id"])
                    dropped[failed[0]] += 1
    kept = [r for r in records if r["case_id"] not in gone]
    uses = [{k: v for k, v in r.items() if k not in ANSWER_FIELDS} for r in kept]
    answers = {r["ask_id"]: {"prediction": r["prediction"], "status": r["status"]} for r in kept}
    relabelled = classified(uses, answers)
    changed = Counter((old.get("label"), new.get("label")) for old, new in zip(kept, relabelled, strict=True))
    return table(relabelled), changed, dropped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("answers", type=Path, help="a run's report/conflict_answers.jsonl")
    parser.add_argument("--cases", type=Path, action="append", default=[], help="an answer-swap stage's cases.jsonl")
    args = parser.parse_args()
    records = [json.loads(line) for line in args.answers.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows, changed, dropped = retable(records, args.cases)
    print(f"{len(records)} answers; {sum(dropped.values())} archived swaps the current checks reject")
    for reason, n in dropped.most_common():
        print(f"  {reason}: {n} swaps")
    print("label changes (archived → now): " + ", ".join(f"{a} → {b}: {n}" for (a, b), n in changed.items() if a != b))
    print("\ntarget | task | seeds | setting | n | evidence | memory | other")
    for row in rows:
        shares = " | ".join(
            f"{row[f'{k}_share']:.2f} [{row[f'{k}_low']:.2f}, {row[f'{k}_high']:.2f}]"
            for k in ("evidence", "memory", "other")
        )
        print(f"{row['target']} | {row['task']} | {row['seeds']} | {row['setting']} | {row['n']} | {shares}")


if __name__ == "__main__":
    main()
