"""What each check of metrics/offered_answers.py removes from the archived unanswerable runs read blind.

The archived unanswerable runs under docs/readings/ and docs/reviews/ (every removal, all at `background: 0`)
keep each case's text as read, so no case is made again: each rule is run on what was left of the seed passage of every
accepted case the independent readers read (docs/reviews/independent_reading.jsonl, joined by run folder and
case id), the answer typed in the original passage as the generator types it. A case counts read invalid when
any of its readers read it invalid or unsure. Runs made after a rule shipped were already filtered by it (a
rule flags none of their cases), so its figures there say nothing of what it removes.

The background sweeps' cases were not archived; scripts/measure_background_answers.py makes them again.

    python3 scripts/measure_offered_archived.py            # the table per rule (about a minute)
    python3 scripts/measure_offered_archived.py --cases    # and a line per flagged case, its readers' notes
    python3 scripts/measure_offered_archived.py --missed   # and the cases read invalid that no rule flags
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics.offered_answers import RULES  # noqa: E402
from programs.entity_tagger import tagger  # noqa: E402
from programs.faitheval import REST_RULES, answer_kinds, offers  # noqa: E402

ARCHIVES = (ROOT / "docs" / "readings", ROOT / "docs" / "reviews")
VERDICTS = ROOT / "docs" / "reviews" / "independent_reading.jsonl"


def verdicts() -> dict[tuple[str, str], list[dict]]:
    """(run, case id) -> the independent readers' verdicts."""
    out: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for line in VERDICTS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            v = json.loads(line)
            out[(v["run"], v["id"])].append(v)
    return out


def run_key(folder: Path) -> str:
    """How the independent reading names a run: a stage of a sweep or bench as `run-id/stage`, else the
    folder's name."""
    return f"{folder.parent.name}/{folder.name}" if folder.parent not in ARCHIVES else folder.name


def read_cases(read: dict[tuple[str, str], list[dict]]) -> list[tuple[str, dict, list[dict]]]:
    """(run, case, verdicts) for every accepted unanswerable case archived with its text that was read; a
    case a run holds twice (a resumed run) counts once, as last written."""
    found: dict[tuple[str, str], tuple[str, dict, list[dict]]] = {}
    for archive in ARCHIVES:
        for path in sorted(archive.rglob("cases.jsonl")):
            run = run_key(path.parent)
            for line in path.read_text(encoding="utf-8").splitlines():
                case = json.loads(line)
                given = read.get((run, case["id"]))
                if case.get("task") == "unanswerable" and case.get("status") == "accepted" and case.get("context"):
                    if given:
                        found[(run, case["id"])] = (run, case, given)
    return list(found.values())


def flags(case: dict) -> dict[str, str]:
    """rule -> the first sentence it flags in the case's text, by every rule (`rival` too, which the generator
    does not apply to the rest: its figure here is why)."""
    question, answers = case["question"], list(case["original_answers"])
    kinds = answer_kinds(question, case["original_context"], answers, tagger)
    found: dict[str, str] = {}
    for rule, sentence in offers(case["context"], question, answers, kinds, tagger):
        found.setdefault(rule, sentence)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", action="store_true", help="a line per flagged case")
    parser.add_argument("--missed", action="store_true", help="the cases read invalid that no rule flags")
    args = parser.parse_args()
    tally: Counter = Counter()
    lines, missed = [], []
    for run, case, given in read_cases(verdicts()):
        label = "valid" if all(v["verdict"] == "valid" for v in given) else "invalid"
        found = flags(case)
        applied = ["applied"] if set(found) & set(REST_RULES) else []
        for key in ["(cases read)", *found, *(["any"] if found else []), *applied]:
            tally[(key, label)] += 1
            tally[(key, run, label)] += 1
        notes = " / ".join(v["note"] for v in given if v["verdict"] != "valid") or given[0]["note"]
        head = f"- {run} {case['id']} ({label}): {case['question']!r} → {case['original_answers'][0]!r}"
        for rule, sentence in found.items():
            lines.append(f"{head}\n    {rule}: {sentence[:200]!r}\n    readers: {notes[:300]}")
        if not found and label == "invalid":
            missed.append(f"{head}\n    readers: {notes[:400]}")
    print("| rule | removes read valid | removes read invalid |\n|---|---:|---:|")
    for rule in ["(cases read)", *RULES, "any"]:
        name = {"rival": "rival (not applied to the rest)", "any": "any rule, rival too"}.get(rule, rule)
        print(f"| {name} | {tally[(rule, 'valid')]} | {tally[(rule, 'invalid')]} |")
        if rule == "any":
            print(f"| any rule applied to the rest | {tally[('applied', 'valid')]} | {tally[('applied', 'invalid')]} |")
    runs = sorted({key[1] for key in tally if len(key) == 3})
    print("\n| run | cases read (valid / invalid) | the rules applied remove (valid / invalid) |\n|---|---:|---:|")
    for run in runs:
        read_pair = f"{tally[('(cases read)', run, 'valid')]} / {tally[('(cases read)', run, 'invalid')]}"
        print(f"| {run} | {read_pair} | {tally[('applied', run, 'valid')]} / {tally[('applied', run, 'invalid')]} |")
    if args.cases:
        print("\n" + "\n".join(lines))
    if args.missed:
        print(f"\n{len(missed)} cases read invalid that no rule flags:\n" + "\n".join(missed))


if __name__ == "__main__":
    main()
