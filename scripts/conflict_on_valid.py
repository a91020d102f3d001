"""The knowledge-conflict table (evidence / memory / other) on valid swaps, beside the table on every accepted one.

    python3 scripts/conflict_on_valid.py --sheet OUT_DIR [--size 60 --parts 2]   # blind sheets of a sample
    python3 scripts/measure_acceptance.py import OUT_DIR/sheet-1.key.json VERDICTS.txt --reader NAME
    python3 scripts/conflict_on_valid.py [--run docs/reviews/knowledge-conflict-9eb7a0a1c6]
    python3 scripts/conflict_on_valid.py --run RUN_A --run RUN_B   # several runs pooled, one swap per seed
    python3 scripts/conflict_on_valid.py --run RUN_A --run RUN_B --by-kind   # the open-book table per answer kind

Reads archived knowledge-conflict runs: each one's answer-swap stage's cases and the report's classified
answers (report/conflict_answers.jsonl), restricted to the seeds the target knows. Several runs are pooled
with one swap per seed, the first run given winning (a code-made swap before a proposed one of the same
seed), so no seed is counted twice. The swaps are taken through:

1. for a swap an older generator version wrote, today's answer-swap checks (programs/answer_swap.py: the
   proposal's problems and swap_checks, with the code edit re-made from the recorded proposal) applied to
   the recorded texts, no model call; a swap whose text the code edit no longer makes is dropped too (it is
   not what today's generator writes);
2. the independent blind reading of a seeded uniform sample of those (docs/reviews/independent_reading.jsonl).

It prints, per prompt setting, n and each label's share with its Wilson 95% interval on every accepted swap,
on the swaps today's checks pass, and on the read swaps read valid; and a prediction-powered estimate over
every swap today's checks pass: each label's share among valid swaps, E[label · valid] / E[valid], each
mean taken from the judge's P(valid) on every swap and rectified by the reading (interval by bootstrap).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.judging import acceptance  # noqa: E402
from experiments.run_store import RunStore  # noqa: E402
from metrics.conflict import LABELS  # noqa: E402
from metrics.intervals import wilson_interval  # noqa: E402
from programs.answer_swap import VERSION, failed_check, proposal_problem, swap_checks  # noqa: E402
from programs.span_edit import replace_forms  # noqa: E402

STAGE = "conflict.generate.answer_swap.qwen2.5-1.5b"
TARGET = "qwen2.5-1.5b"


def todays_checks(record: dict) -> str | None:
    """Why today's answer-swap code would not write or accept this swap, or None."""
    if record.get("program_version") == VERSION:
        return None  # written by today's generator, timeline moves included, which a bare re-edit would not make
    golds, new = record["original_answers"], record["answers"][0]
    problem = proposal_problem(new, golds, context=record["original_context"], question=record["question"])
    if problem:
        return problem
    edit = replace_forms(record["original_context"], golds, new)
    if edit.text != record["context"]:
        return "edit_differs"
    return failed_check(swap_checks(record["original_context"], edit.text, golds, new, 0.9, edit))


def known_swaps(run: Path) -> tuple[list[dict], list[dict]]:
    stage = run / STAGE
    records = {r["id"]: r for r in RunStore(stage.name, root=stage.parent).records()}
    answers = [
        json.loads(line)
        for line in (run / "report" / "conflict_answers.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    answers = [a for a in answers if a["task"] == "answer_swap" and a["seeds"] == "known" and a["target"] == TARGET]
    cases = [records[cid] for cid in sorted({a["case_id"] for a in answers})]
    return cases, answers


def pooled_swaps(runs: list[Path]) -> tuple[list[dict], list[dict], dict[str, dict]]:
    """Cases, answers and levels of several runs, one swap per seed: the first run that swapped a seed keeps it."""
    cases, answers, level, seen = [], [], {}, set()
    for run in runs:
        run_cases, run_answers = known_swaps(run)
        kept = [r for r in run_cases if r["seed_id"] not in seen]
        seen |= {r["seed_id"] for r in kept}
        ids = {r["id"] for r in kept}
        cases += kept
        answers += [a for a in run_answers if a["case_id"] in ids]
        level |= levels(kept, run)
    return cases, answers, level


@cache
def independent_verdicts() -> dict[str, dict[str, str]]:
    """stage -> case id -> verdict of the independent readings, read once for every run pooled."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    path = ROOT / "docs" / "reviews" / "independent_reading.jsonl"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                v = json.loads(line)
                out[v["run"]][v["id"]] = v["verdict"]
    return out


def levels(cases: list[dict], run: Path) -> dict[str, dict]:
    """Per swap: why today's checks refuse it (or None), the independent reading's verdict where it read it,
    and the judge's P(valid), the predictor the prediction-powered estimate rectifies."""
    stage = f"{run.name}/{STAGE}"
    independent = independent_verdicts().get(stage, {})
    return {
        r["id"]: {
            "checks": todays_checks(r),
            "verdict": independent.get(r["id"]),
            "p": acceptance.judge_p(r),
            "stage": stage,
        }
        for r in cases
    }


def share_row(answers: list[dict]) -> str:
    n = len(answers)
    cells = []
    for label in LABELS:
        k = sum(a["label"] == label for a in answers)
        lo, hi = wilson_interval(k, n) if n else (float("nan"), float("nan"))
        cells.append(f"{k / max(n, 1):.2f} [{lo:.2f}, {hi:.2f}]")
    return f"{n} | " + " | ".join(cells)


def ppi_shares(answers: list[dict], level: dict[str, dict], boot: int = 2000, seed: int = 0) -> dict[str, tuple]:
    """Shares among valid swaps of the accepted level: E[label·valid] / E[valid], each a prediction-powered
    mean (the score's prediction on every swap, rectified by the read ones)."""
    pool = [a for a in answers if level[a["case_id"]]["checks"] is None]
    read = [a for a in pool if level[a["case_id"]]["verdict"] is not None]  # unsure reads as not valid
    if not read:
        return {}

    def estimate(pool_s, read_s, label):
        f = [level[a["case_id"]]["p"] for a in pool_s]
        lab_p = [(a["label"] == label) * p for a, p in zip(pool_s, f, strict=True)]
        rect_v = [(level[a["case_id"]]["verdict"] == "valid") - level[a["case_id"]]["p"] for a in read_s]
        rect_l = [
            (a["label"] == label) * ((level[a["case_id"]]["verdict"] == "valid") - level[a["case_id"]]["p"])
            for a in read_s
        ]
        valid = sum(f) / len(f) + sum(rect_v) / len(rect_v)
        joint = sum(lab_p) / len(lab_p) + sum(rect_l) / len(rect_l)
        return joint / valid if valid > 0 else float("nan")

    rng = random.Random(seed)
    out = {}
    for label in LABELS:
        point = estimate(pool, read, label)
        draws = sorted(
            estimate([rng.choice(pool) for _ in pool], [rng.choice(read) for _ in read], label) for _ in range(boot)
        )
        # A share lies in [0, 1]; the rectified ratio can leave it on a small reading, so it is clipped there.
        clip = lambda v: min(1.0, max(0.0, v))  # noqa: E731
        out[label] = (clip(point), clip(draws[int(0.025 * boot)]), clip(draws[int(0.975 * boot)]))
    return out


def write_sheet(cases: list[dict], level: dict[str, dict], out_dir: Path, size: int, parts: int, seed: int = 0) -> None:
    """A seeded uniform draw of the known-seed swaps that today's checks pass and no one has read, on `parts`
    blind sheets; the keys name each case's stage as scripts/measure_acceptance.py import expects."""
    from experiments.review.sheet import sheet_text

    kept = [r for r in cases if level[r["id"]]["checks"] is None and level[r["id"]]["verdict"] is None]
    drawn = random.Random(seed).sample(kept, min(size, len(kept)))
    out_dir.mkdir(parents=True, exist_ok=True)
    for k in range(parts):
        part = drawn[k::parts]
        (out_dir / f"sheet-{k + 1}.md").write_text(sheet_text([[r] for r in part]), encoding="utf-8")
        key = {str(n): {"run": level[r["id"]]["stage"], "ids": [r["id"]]} for n, r in enumerate(part, start=1)}
        (out_dir / f"sheet-{k + 1}.key.json").write_text(json.dumps(key, indent=1), encoding="utf-8")
    print(f"{len(drawn)} of {len(kept)} unread known-seed swaps passing today's checks, on {parts} sheets in {out_dir}")


@cache
def _kind_group(question: str, context: str, answers: tuple[str, ...]) -> str:
    """The reading group of the old answer's kind, read where it stands in its passage (programs/answer_kinds.py)."""
    from programs.answer_kinds import type_in
    from programs.entity_tagger import tagger
    from programs.person_names import is_first_name

    typed = type_in(tagger(), context, list(answers), question, is_first_name)
    return typed.group if typed is not None else "untyped"


def by_kind(cases: list[dict], answers: list[dict], level: dict[str, dict], setting: str = "open_book") -> None:
    """Evidence / memory / other per answer-kind group, on every accepted swap and on the swaps read valid."""
    record = {r["id"]: r for r in cases}
    rows = [a for a in answers if a["setting"] == setting and a.get("label") in LABELS]
    groups: dict[str, list[dict]] = defaultdict(list)
    for a in rows:
        r = record[a["case_id"]]
        groups[_kind_group(r["question"], r["original_context"], tuple(r["original_answers"]))].append(a)
    print(f"\n{setting}: answer kind | swaps | n | " + " | ".join(LABELS))
    print("---|---|---|" + "---|" * len(LABELS))
    for group, members in sorted(groups.items()):
        valid = [
            a for a in members if level[a["case_id"]]["checks"] is None and level[a["case_id"]]["verdict"] == "valid"
        ]
        print(f"{group} | every accepted swap | " + share_row(members))
        print(f"{group} | read valid | " + share_row(valid))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, action="append", help="a run directory (repeat to pool several)")
    parser.add_argument("--sheet", type=Path, help="write a blind sheet of --size swaps passing today's checks")
    parser.add_argument("--size", type=int, default=60)
    parser.add_argument("--parts", type=int, default=2)
    parser.add_argument("--by-kind", action="store_true", help="the open-book table per answer-kind group too")
    args = parser.parse_args()
    runs = args.run or [ROOT / "docs" / "reviews" / "knowledge-conflict-9eb7a0a1c6"]
    cases, answers, level = pooled_swaps(runs)
    if args.sheet:
        write_sheet(cases, level, args.sheet, args.size, args.parts)
        return
    refused = defaultdict(int)
    for lv in level.values():
        refused[lv["checks"] or "passes"] += 1
    read = [lv["verdict"] for lv in level.values() if lv["checks"] is None and lv["verdict"] is not None]
    lo, hi = wilson_interval(read.count("valid"), len(read)) if read else (float("nan"), float("nan"))
    print(
        f"{len(cases)} known-seed swaps; today's checks: " + ", ".join(f"{k} {v}" for k, v in sorted(refused.items()))
    )
    print(
        f"read blind: {read.count('valid')} of {len(read)} valid = {read.count('valid') / max(len(read), 1):.0%} "
        f"[{lo:.0%}, {hi:.0%}]"
    )
    filters = {
        "every accepted swap (the run's table)": lambda lv: True,
        "passing today's checks": lambda lv: lv["checks"] is None,
        "read valid (restricted to the read sample)": lambda lv: lv["checks"] is None and lv["verdict"] == "valid",
    }
    print("\nsetting | swaps | n | " + " | ".join(LABELS))
    print("---|---|---|" + "---|" * len(LABELS))
    by_setting = defaultdict(list)
    for a in answers:
        by_setting[a["setting"]].append(a)
    for setting, rows in sorted(by_setting.items()):
        rows = [a for a in rows if a.get("label") in LABELS]
        for name, keep in filters.items():
            print(f"{setting} | {name} | " + share_row([a for a in rows if keep(level[a["case_id"]])]))
        est = ppi_shares(rows, level)
        if est:
            n = sum(level[a["case_id"]]["checks"] is None for a in rows)
            print(
                f"{setting} | valid, prediction-powered (judge P(valid) rectified by the reading) | {n} | "
                + " | ".join(f"{p:.2f} [{lo:.2f}, {hi:.2f}]" for p, lo, hi in (est[label] for label in LABELS))
            )
    if args.by_kind:
        by_kind(cases, answers, level)


if __name__ == "__main__":
    main()
