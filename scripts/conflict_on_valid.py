"""The knowledge-conflict table (evidence / memory / other) on valid swaps, beside the table on every accepted one.

    python3 scripts/conflict_on_valid.py [--run docs/reviews/knowledge-conflict-9eb7a0a1c6] [--sheet-annotator reader-1]
        [--write-sheet OUT.md --size 40]

Reads an archived knowledge-conflict run: its answer-swap stage's cases and the report's classified answers
(report/conflict_answers.jsonl). The swaps of seeds the target knows are taken through three filters, each
on top of the one before:

1. `checks`: today's answer-swap checks (programs/answer_swap.py: the proposal's problems and swap_checks,
   with the code edit re-made from the recorded proposal) applied to the recorded texts, no model call; a
   swap whose text the code edit no longer makes is dropped too (it is not what today's generator writes).
2. `acceptance`: the shipped acceptance score (experiments/judging/acceptance.py) on the archive's signals
   (docs/reviews/acceptance_signals.jsonl, written by scripts/measure_acceptance.py score).
3. `read valid`: only the swaps a blind reader read valid (the verdicts of --sheet-annotator, from an
   accepted-only sheet of the stage: `reeval review … --sheet … --accepted-only`).

It prints, per prompt setting, n and each label's share with its Wilson 95% interval at each level, and a
prediction-powered estimate for the acceptance level: the shares among valid swaps, with validity taken
from the reader's verdicts where read and from the acceptance score elsewhere, rectified on the read sample
(a ratio of two prediction-powered means, its interval by bootstrap).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.judging import acceptance  # noqa: E402
from experiments.run_store import RunStore  # noqa: E402
from metrics.conflict import LABELS  # noqa: E402
from metrics.intervals import wilson_interval  # noqa: E402
from programs.answer_swap import failed_check, proposal_problem, swap_checks  # noqa: E402
from programs.span_edit import replace_forms  # noqa: E402

STAGE = "conflict.generate.answer_swap.qwen2.5-1.5b"
TARGET = "qwen2.5-1.5b"


def todays_checks(record: dict) -> str | None:
    """Why today's answer-swap code would not write or accept this swap, or None."""
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


def levels(cases: list[dict], annotator: str | None, stage: Path) -> dict[str, dict]:
    params = acceptance.load_params("answer_swap")
    cache = acceptance.SignalCache(ROOT / "docs" / "reviews" / acceptance.SIGNALS_FILE)
    out = {}
    for r in cases:
        entry = cache.entries.get(acceptance.case_key(r, params["scorer"]), {})
        decision = acceptance.decide(params, r, entry) if entry else {"accepted": False, "score": None}
        out[r["id"]] = {"checks": todays_checks(r), "decision": decision}
    verdicts = {}
    path = stage / "review" / "accepted-only" / f"{annotator}.jsonl"
    if annotator and path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                v = json.loads(line)
                verdicts[v["id"]] = v["verdict"]
    for cid, level in out.items():
        level["verdict"] = verdicts.get(cid)
    return out


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
    pool = [a for a in answers if level[a["case_id"]]["decision"].get("accepted")]
    read = [a for a in pool if level[a["case_id"]]["verdict"] in ("valid", "invalid")]
    if not read:
        return {}

    def estimate(pool_s, read_s, label):
        f = [level[a["case_id"]]["decision"]["score"] for a in pool_s]
        lab_p = [(a["label"] == label) * p for a, p in zip(pool_s, f, strict=True)]
        rect_v = [(level[a["case_id"]]["verdict"] == "valid") - level[a["case_id"]]["decision"]["score"] for a in read_s]
        rect_l = [
            (a["label"] == label)
            * ((level[a["case_id"]]["verdict"] == "valid") - level[a["case_id"]]["decision"]["score"])
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
        out[label] = (point, draws[int(0.025 * boot)], draws[int(0.975 * boot)])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, default=ROOT / "docs" / "reviews" / "knowledge-conflict-9eb7a0a1c6")
    parser.add_argument("--sheet-annotator", default=None)
    parser.add_argument("--list-kept", action="store_true", help="print the ids of the swaps that pass both filters")
    args = parser.parse_args()
    cases, answers = known_swaps(args.run)
    level = levels(cases, args.sheet_annotator, args.run / STAGE)
    if args.list_kept:
        for r in cases:
            if level[r["id"]]["checks"] is None and level[r["id"]]["decision"].get("accepted"):
                print(r["id"])
        return
    reasons = defaultdict(int)
    for cid, lv in level.items():
        reasons[lv["checks"] or ("acceptance" if not lv["decision"].get("accepted") else "kept")] += 1
    print(f"{len(cases)} known-seed swaps; " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    filters = {
        "every accepted swap (the run's table)": lambda lv: True,
        "passing today's checks": lambda lv: lv["checks"] is None,
        "... and the acceptance score": lambda lv: lv["checks"] is None and lv["decision"].get("accepted"),
        "... and read valid": lambda lv: lv["checks"] is None
        and lv["decision"].get("accepted")
        and lv["verdict"] == "valid",
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
        kept = {
            cid: lv for cid, lv in level.items() if lv["checks"] is None
        }  # the prediction-powered pool: swaps today's checks pass
        est = ppi_shares([a for a in rows if a["case_id"] in kept], level)
        if est:
            print(
                f"{setting} | among valid, prediction-powered | – | "
                + " | ".join(f"{p:.2f} [{lo:.2f}, {hi:.2f}]" for p, lo, hi in (est[label] for label in LABELS))
            )


if __name__ == "__main__":
    main()
