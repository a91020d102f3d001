"""How many archived, blind-read answer swaps each check of answer_swap/10 removes, and how the removed ones
were read (docs/reviews/: one maintainer's blind reading of each run's review sample). No model runs: the
checks are applied to the proposal, question and texts each case recorded, and the edit is redone in code.

Every answer-swap case set under docs/reviews/ counts, the knowledge-conflict stages one folder down
included; `--rev <commit>` reads the archive as it stood at a commit (a superseded run's verdicts).
A rule's count is the cases it rejects whatever else rejects them; "only" counts those no check of
answer_swap/9 rejected and no other new rule does.

    python scripts/measure_swap_traces.py
    python scripts/measure_swap_traces.py --rev 1f36ca3
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from programs.answer_swap import proposal_problem, swap_checks  # noqa: E402
from programs.span_edit import replace_forms  # noqa: E402

REVIEWS = "docs/reviews"
# What answer_swap/10 added: these statuses are new; every other one answer_swap/9 already had.
NEW = (
    "proposal_translates_answer",
    "proposal_outside_alternatives",
    "old_answer_trace:code",  # widened: "abbreviated CONJ"
    "old_answer_trace:inflection",
    "old_answer_trace:anaphor",
    "old_answer_trace:name_talk",
    "old_answer_trace:letter_count",
    "old_answer_trace:inside_name",
    "old_answer_trace:remainder",
    "old_answer_trace:elapsed_years",
    "old_answer_trace:share",
)


def _files(rev: str | None) -> dict[str, str]:
    """Archive file path → text, at `rev` or in the work tree."""
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / REVIEWS).rglob("*.jsonl")}
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, REVIEWS], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        n: subprocess.run(["git", "show", f"{rev}:{n}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        for n in names
        if n.endswith(".jsonl")
    }


def read_swaps(rev: str | None = None) -> list[tuple[str, dict, str]]:
    """(case set, case, verdict) for every archived answer swap with a verdict."""
    files = _files(rev)
    found = []
    for path, text in sorted(files.items()):
        if not path.endswith("/cases.jsonl"):
            continue
        folder = path[: -len("cases.jsonl")]
        verdicts = {}
        for name, body in files.items():
            if name.startswith(folder + "review/"):
                for line in body.splitlines():
                    if line.strip():
                        record = json.loads(line)
                        verdicts[record["id"]] = record["verdict"]
        for line in text.splitlines():
            case = json.loads(line)
            if case.get("task") == "answer_swap" and case.get("context") and case["id"] in verdicts:
                found.append((folder[len(REVIEWS) + 1 : -1], case, verdicts[case["id"]]))
    return found


def failures(case: dict) -> list[str]:
    """Every check answer_swap/10 fails on the case (not only the first), as statuses without "rejected:"."""
    golds, new = case["original_answers"], case["answers"][0]
    failed = []
    problem = proposal_problem(new, golds, context=case["original_context"], question=case["question"])
    if problem:
        failed.append(problem)
    edit = replace_forms(case["original_context"], golds, new)
    checks = swap_checks(case["original_context"], edit.text, golds, new, 0.9, edit)
    failed += [name for name, ok in checks.items() if ok is False]
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="read the archive at this git commit")
    parser.add_argument("--cases", action="store_true", help="list every case a new rule removes")
    args = parser.parse_args()
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    totals: dict[str, Counter] = defaultdict(Counter)
    removed = []
    for run, case, verdict in read_swaps(args.rev):
        group = f"{run}, {'accepted' if case['status'] == 'accepted' else case['status']}"
        if case["status"].startswith("rejected:judge"):
            group = f"{run}, judge-rejected"
        totals[group][verdict] += 1
        failed = failures(case)
        new = [f for f in failed if f in NEW]
        old = [f for f in failed if f not in NEW]
        for rule in new:
            table[(group, rule)][verdict] += 1
            if not old and new == [rule]:
                table[(group, rule + " (only)")][verdict] += 1
        if new:
            table[(group, "any new rule")][verdict] += 1
            removed.append((group, verdict, case["question"], case["original_answers"][0], case["answers"][0], new))
        if old:
            table[(group, "answer_swap/9 check")][verdict] += 1
    where = f"at {args.rev}" if args.rev else "in the work tree"
    print(f"Archived blind-read answer swaps {where} (docs/reviews/), one maintainer's blind reading")
    for group, counts in sorted(totals.items()):
        print(f"\n{group}: {sum(counts.values())} read ({counts['valid']} valid, {counts['invalid']} invalid)")
        for (g, rule), c in sorted(table.items()):
            if g == group:
                print(f"  {rule:46s} removes {sum(c.values()):3d}: {c['invalid']} read invalid, {c['valid']} valid")
    if args.cases:
        print("\nRemoved cases")
        for group, verdict, question, gold, new, rules in removed:
            print(f"  [{verdict}] {question!r}: {gold!r} → {new!r} ({', '.join(rules)}; {group})")


if __name__ == "__main__":
    main()
