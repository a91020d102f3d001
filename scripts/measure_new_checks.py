"""How many archived, blind-read cases each rule of context_enrich/10, faitheval/9 and answer_swap/9
would remove, and how the removed ones were read (docs/reviews/: one maintainer's blind reading of
each run's review sample). No model runs: the rules are applied to the texts the runs recorded.

Every archived run is on NQ *development* rows (the first rows of the file), so these counts say what
the rules cost and catch where they were developed, not how they do on held-out rows.

    python scripts/measure_new_checks.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.splits import is_development  # noqa: E402
from metrics.arithmetic import majority_size  # noqa: E402
from metrics.background_checks import background_drops  # noqa: E402
from metrics.evidence_checks import question_names  # noqa: E402
from metrics.traces import descriptions_left, gloss_traces, inside_words  # noqa: E402
from programs.answer_swap import misplaced_articles  # noqa: E402
from programs.context_enrich import kept_evidence  # noqa: E402
from programs.span_edit import replace_forms  # noqa: E402

REVIEWS = ROOT / "docs" / "reviews"


def verdicts(run: Path) -> dict[str, str]:
    found = {}
    for path in sorted((run / "review").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                found[record["id"]] = record["verdict"]
    return found


def swap_rules(case: dict) -> list[str]:
    golds, new = case["original_answers"], case["answers"][0]
    edit = replace_forms(case["original_context"], golds, new)
    spans = [(r.start, r.end, r.new) for r in edit.replacements]
    fired = sorted({f"trace:{kind}" for kind, _ in gloss_traces(case["original_context"], [e for _, e, _ in spans])})
    if inside_words(case["context"], golds, keep=[new]):
        fired.append("trace:inside_word")
    if descriptions_left(case["context"], case["original_context"], golds, "naming"):
        fired.append("trace:description")
    if misplaced_articles(case["context"], spans):
        fired.append("new_answer_fits_grammar")
    return fired


def unanswerable_rules(case: dict) -> list[str]:
    golds = case["original_answers"]
    fired = []
    if descriptions_left(case["context"], case["original_context"], golds):
        fired.append("trace:description")
    if any(majority_size(case["context"], g) for g in golds):
        fired.append("trace:majority")
    return fired


def enrich_rules(case: dict, rows: dict[str, dict]) -> list[str]:
    row = rows.get(case["seed_id"], {})
    starts = [s for s in row.get("answer_starts") or [] if s is not None]
    kept = kept_evidence(
        case["original_context"],
        case.get("supporting_sentence") or "",
        case["question"],
        case["original_answers"],
        starts[0] if starts else None,
        row.get("title", ""),
    )
    fired = []
    if kept.problem:
        fired.append("kept_evidence:refused")
    elif kept.text != case.get("supporting_sentence"):
        fired.append("kept_evidence:changed")
    names = question_names(case["question"], case["original_context"])
    for rule, _ in background_drops(
        case.get("background") or "",
        case.get("supporting_sentence") or "",
        case["question"],
        case["original_answers"],
        names,
    ):
        fired.append(f"background_dropped:{rule}")
    return sorted(set(fired))


def main() -> None:
    import gzip

    with gzip.open(ROOT / "data" / "nq.jsonl.gz", "rt", encoding="utf-8") as f:
        ordered = [json.loads(line) for line in f]
    rows = {r["id"]: r for r in ordered}
    position = {r["id"]: i for i, r in enumerate(ordered)}
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    totals: dict[str, Counter] = defaultdict(Counter)
    for run in sorted(p for p in REVIEWS.iterdir() if (p / "cases.jsonl").exists()):
        read = verdicts(run)
        for line in (run / "cases.jsonl").read_text().splitlines():
            case = json.loads(line)
            if "original_context" not in case or case.get("context") is None or case["id"] not in read:
                continue
            assert is_development("nq", position[case["seed_id"]]), case["seed_id"]
            task = case["task"]
            fired = (
                swap_rules(case)
                if task == "answer_swap"
                else unanswerable_rules(case)
                if task == "unanswerable"
                else enrich_rules(case, rows)
            )
            verdict = read[case["id"]]
            totals[task][verdict] += 1
            for rule in fired:
                table[(task, rule)][verdict] += 1
            if fired:
                table[(task, "any rule")][verdict] += 1
    print("Archived blind-read cases, NQ development rows (docs/reviews/), one maintainer's blind reading")
    for task, counts in sorted(totals.items()):
        print(f"\n{task}: {sum(counts.values())} read ({counts['valid']} valid, {counts['invalid']} invalid)")
        for (t, rule), c in sorted(table.items()):
            if t == task:
                print(f"  {rule:34s} fires on {sum(c.values()):3d}: {c['invalid']} read invalid, {c['valid']} valid")


if __name__ == "__main__":
    main()
