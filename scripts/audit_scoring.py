"""Read a bench's scoring blind: draw evaluation records from a report's scores.jsonl, print question,
expected answers, options and prediction with every score hidden, then compare a reader's verdicts with the
score the tool gave (task_correct, the main table's).

    python3 scripts/audit_scoring.py dump runs/<id>/report/scores.jsonl OUT --design random --seed 7
    python3 scripts/audit_scoring.py dump runs/<id>/report/scores.jsonl OUT --design rules --seed 11
    python3 scripts/audit_scoring.py compare OUT      # OUT/verdicts.tsv: "index<TAB>1|0|?<TAB>note" per line

`random` draws from each task and variant; `rules` draws where a scoring rule decides: containment
(correct but not exact), long wrong answers, keyword hits that are not the bare constant, and long
answers to counterfactual questions. "?" marks a prediction the reader finds ambiguous."""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.task_registry import task_answer  # noqa: E402
from metrics.scores import expected_answers  # noqa: E402

KEY_FIELDS = ("id", "task", "variant", "setting", "target", "em", "correct", "keyword_strict", "keyword_nonstrict")
KEY_FIELDS += ("mc_correct", "task_correct")
RANDOM_DESIGN = {
    ("answer_swap", "perturbed"): 8,
    ("answer_swap", "original"): 4,
    ("context_enrich", "perturbed"): 6,
    ("unanswerable", "perturbed"): 8,
    ("inconsistent", "perturbed"): 7,
    ("counterfactual", "perturbed"): 7,
}
RULES_DESIGN = {"contain": 10, "long_wrong": 8, "kw_diff": 6, "kw_long": 8, "mc_long": 8}


def _words(record: dict) -> int:
    return len((record.get("prediction") or "").split())


def rule_groups(records: list[dict]) -> dict[str, list[dict]]:
    keyword = [r for r in records if r.get("keyword_nonstrict") is not None]
    return {
        "contain": [
            r
            for r in records
            if r["correct"] and not r["em"] and r["task"] != "counterfactual" and r.get("keyword_nonstrict") is None
        ],
        "long_wrong": [
            r
            for r in records
            if not r["task_correct"] and _words(r) >= 6 and r["task"] in ("answer_swap", "context_enrich")
        ],
        "kw_diff": [r for r in keyword if r["keyword_nonstrict"] != r["keyword_strict"]],
        "kw_long": [r for r in keyword if _words(r) >= 4],
        "mc_long": [r for r in records if r["task"] == "counterfactual" and _words(r) >= 4],
    }


def draw(records: list[dict], design: str, seed: int) -> list[dict]:
    records = [r for r in records if not r.get("error")]
    rng = random.Random(seed)
    picked: list[dict] = []
    if design == "random":
        for (task, variant), n in RANDOM_DESIGN.items():
            picked += rng.sample([r for r in records if r["task"] == task and r["variant"] == variant], n)
    else:
        groups = rule_groups(records)
        for name, n in RULES_DESIGN.items():
            picked += rng.sample(groups[name], min(n, len(groups[name])))
    rng.shuffle(picked)
    seen: set[str] = set()
    return [r for r in picked if not (r["id"] in seen or seen.add(r["id"]))]  # one record can fall in two groups


def blind_text(picked: list[dict]) -> str:
    lines = []
    for i, r in enumerate(picked):
        lines.append(f"=== {i} task={r['task']} setting={r['setting']} target={r['target']}")
        lines.append(f"Q: {r['question']}")
        if r.get("options"):
            labelled = [f"{chr(65 + j)}. {o}" for j, o in enumerate(r["options"])]
            lines.append(f"OPTIONS: {labelled} label: {r.get('answer_label')}")
        # scores.jsonl written before records said what their task expects: the registry tells it
        lines.append(f"EXPECTED: {expected_answers({'task_answer': task_answer(r['task']), **r})}")
        lines.append(f"PRED: {r.get('prediction')!r}")
    return "\n".join(lines) + "\n"


def dump(scores: Path, out: Path, design: str, seed: int) -> None:
    records = [json.loads(line) for line in scores.read_text(encoding="utf-8").splitlines() if line.strip()]
    picked = draw(records, design, seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "blind.txt").write_text(blind_text(picked), encoding="utf-8")
    key = [{k: r.get(k) for k in KEY_FIELDS} for r in picked]
    (out / "key.json").write_text(json.dumps({"design": design, "seed": seed, "records": key}, indent=0))
    print(f"{len(picked)} records -> {out / 'blind.txt'}")


def read_verdicts(path: Path) -> dict[int, tuple[str, str]]:
    verdicts = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) < 2 or parts[1] not in ("1", "0", "?"):
            raise SystemExit(f"{path}:{n}: expected 'index<TAB>1|0|?[<TAB>note]', got {line!r}")
        verdicts[int(parts[0])] = (parts[1], parts[2] if len(parts) > 2 else "")
    return verdicts


def compare(out: Path) -> dict[str, int]:
    key = json.loads((out / "key.json").read_text())["records"]
    verdicts = read_verdicts(out / "verdicts.tsv")
    tally: Counter = Counter()
    for i, k in enumerate(key):
        if i not in verdicts:
            continue
        mine, note = verdicts[i]
        tool = "1" if k["task_correct"] else "0"
        tally["read"] += 1
        if mine == "?":
            tally["ambiguous"] += 1
        elif mine == tool:
            tally["agree"] += 1
        else:
            tally["disagree"] += 1
        if mine != tool:
            print(f"{i}\t{k['task']}/{k['variant']}/{k['setting']}\ttool {tool} reader {mine}\t{note}")
    print(dict(tally))
    return dict(tally)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("scores", type=Path)
    d.add_argument("out", type=Path)
    d.add_argument("--design", choices=("random", "rules"), default="random")
    d.add_argument("--seed", type=int, default=7)
    c = sub.add_parser("compare")
    c.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        dump(args.scores, args.out, args.design, args.seed)
    else:
        compare(args.out)


if __name__ == "__main__":
    main()
