"""Coverage and blind-read validity of an answer-swap run, by the old answer's kind.

    python3 scripts/measure_every_kind.py RUN_DIR [RUN_DIR ...] [--readers reader-a reader-b]

A reader written `a+b` pools two readers who read disjoint sheets (one reader per run folder). NQ holds some
rows twice under other ids (the same question and passage): each is counted once, at its first run folder.

Counts seeds on rows no tracked file quotes (rows read or used before are left out), how many got a new answer
(reachable) and how many were accepted, per reading group of the old answer's kind (`answer_kind` on the case);
then, for each reader of the independent reading (docs/reviews/independent_reading.jsonl), the valid share of
the accepted cases read with a Wilson interval, the cue share (the reader's `cue: yes`), valid and cue-free, per
group; and the two readers' agreement (raw and Cohen's kappa) on the cases both read. Unsure counts as not valid.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.bench.conflict_kinds import kind_group as group  # noqa: E402
from experiments.run_store import RunStore  # noqa: E402
from metrics.intervals import wilson_interval  # noqa: E402
from scripts.measure_acceptance import INDEPENDENT, quoted_text, run_key  # noqa: E402

_CUE = re.compile(r"cue:\s*(yes|no)", re.IGNORECASE)


def share(k: int, n: int) -> str:
    if not n:
        return "—"
    lo, hi = wilson_interval(k, n)
    return f"{k}/{n} ({k / n:.0%} [{lo:.0%}, {hi:.0%}])"


def readings(run: str) -> dict[str, dict[str, tuple[str, bool | None]]]:
    """reader → case id → (verdict, cue)."""
    import json

    out: dict[str, dict] = defaultdict(dict)
    for line in INDEPENDENT.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        x = json.loads(line)
        if x["run"] != run:
            continue
        cue = _CUE.search(x.get("note") or "")
        out[x["reader"]][x["id"]] = (x["verdict"], None if cue is None else cue.group(1).lower() == "yes")
    return out


def kappa(pairs: list[tuple[bool, bool]]) -> float:
    n = len(pairs)
    agree = sum(a == b for a, b in pairs) / n
    pa, pb = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return (agree - expected) / (1 - expected) if expected < 1 else 1.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", type=Path, nargs="+", help="run folders over disjoint rows, counted together")
    parser.add_argument("--readers", nargs="*", default=None)
    parser.add_argument(
        "--fresh-at", default=None, help="the commit the sheet was drawn from: rows quoted there are left out"
    )
    args = parser.parse_args()
    records, seen = [], set()
    for run in args.runs:
        for r in RunStore(run.name, root=run.parent).records():
            key = (r["question"], r.get("original_context") or r.get("context") or "")
            if key not in seen:
                seen.add(key)
                records.append(r)
    quoted = quoted_text(args.fresh_at)
    fresh = [r for r in records if r["question"].lower().strip() not in quoted]
    selected = [r for r in fresh if r["status"] != "rejected:seed_not_selected"]
    reachable = [r for r in selected if r.get("context")]
    accepted = [r for r in selected if r["status"] == "accepted"]
    print(f"# {' + '.join(run.name for run in args.runs)}\n")
    print(
        f"{len(records)} seeds past the filters (NQ rows repeated under another id counted once), "
        f"{len(records) - len(fresh)} on rows tracked files quote (left out)"
    )
    print(f"selected {len(selected)}; reachable {share(len(reachable), len(selected))}")
    print(f"accepted {share(len(accepted), len(selected))}")
    not_code = [r for r in accepted if r.get("answer_kind") not in ("date", "quantity", "person")]
    print(f"accepted neither a year, a number nor a person: {len(not_code)}\n")
    print("| group | selected | reachable | accepted |\n|---|---:|---:|---:|")
    by_group: dict[str, list] = defaultdict(list)
    for r in selected:
        by_group[group(r.get("answer_kind"))].append(r)
    for name, rows in sorted(by_group.items()):
        made = sum(bool(r.get("context")) for r in rows)
        kept = sum(r["status"] == "accepted" for r in rows)
        print(f"| {name} | {len(rows)} | {made} | {kept} |")
    print("\nrejections among selected seeds:")
    for status, n in Counter(r["status"] for r in selected if r["status"] != "accepted").most_common(15):
        print(f"- {status}: {n}")
    cues = sum(bool(r.get("cues")) for r in accepted)
    print(f"\naccepted with a pool cue recorded: {cues} of {len(accepted)}")
    read: dict[str, dict] = defaultdict(dict)
    for run in args.runs:
        for reader, verdicts in readings(run_key(run)).items():
            read[reader].update(verdicts)
    for pooled in [x for x in args.readers or [] if "+" in x]:
        for name in pooled.split("+"):
            read[pooled].update(read.get(name, {}))
    readers = args.readers or sorted(read)
    ids = {r["id"]: r for r in accepted}
    for reader in readers:
        verdicts = {i: v for i, v in read.get(reader, {}).items() if i in ids}
        if not verdicts:
            continue
        valid = sum(v == "valid" for v, _ in verdicts.values())
        cued = sum(bool(c) for _, c in verdicts.values())
        clean = sum(v == "valid" and c is False for v, c in verdicts.values())
        print(
            f"\n## {reader}: valid {share(valid, len(verdicts))}; cue {share(cued, len(verdicts))}; "
            f"valid and cue-free {share(clean, len(verdicts))}"
        )
        per = defaultdict(lambda: [0, 0])
        for i, (v, _) in verdicts.items():
            g = group(ids[i].get("answer_kind"))
            per[g][0] += v == "valid"
            per[g][1] += 1
        for name, (k, n) in sorted(per.items()):
            print(f"- {name}: {share(k, n)}")
        pool = [(bool(ids[i].get("cues")), bool(c)) for i, (_, c) in verdicts.items() if c is not None]
        hits = sum(a and b for a, b in pool)
        print(
            f"- pool cue vs reader cue: both {hits}, pool only {sum(a and not b for a, b in pool)}, "
            f"reader only {sum(b and not a for a, b in pool)}, of {len(pool)}"
        )
    if len(readers) >= 2:
        a, b = (read.get(x, {}) for x in readers[:2])
        both = [i for i in a if i in b and i in ids]
        if both:
            pairs = [(a[i][0] == "valid", b[i][0] == "valid") for i in both]
            same = sum(x == y for x, y in pairs)
            joint = sum(x and y for x, y in pairs)
            print(
                f"\nagreement on {len(both)} cases: {same} same verdict ({same / len(both):.0%}), "
                f"kappa {kappa(pairs):.2f}; valid to both {share(joint, len(both))}"
            )


if __name__ == "__main__":
    main()
