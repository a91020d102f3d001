"""Seeds an archived answer-swap run lost at the proposal step, asked again with today's AnswerSwap and the
run's own pivot: how many now get a wrong answer that passes the proposal and swap checks (no judge).

    python3 scripts/measure_proposal_retries.py docs/reviews/nq-answer-swap-eb625ff9e8 [--reasons proposal_is_gold]
        [--out cases.jsonl]

Each seed's proposals and outcome are printed; --out keeps the swapped passages for a blind reading.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dspy  # noqa: E402

from experiments.lm.offline import apply_offline_defaults  # noqa: E402
from experiments.lm.registry import build_lm  # noqa: E402
from experiments.lm.settings import LMConfig  # noqa: E402
from programs.answer_swap import VERSION, AnswerSwap  # noqa: E402
from scripts.archived_runs import latest_records  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--reasons", nargs="+", default=["proposal_is_gold"])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    apply_offline_defaults()
    config = json.loads((args.run / "config.json").read_text())
    lost = [r for r in latest_records(args.run) if r.get("status") in {f"rejected:{x}" for x in args.reasons}]
    pivot = build_lm(LMConfig.model_validate(config["models"]["pivot"]), "pivot")
    options = config.get("options", {})
    program = AnswerSwap(max_attempts=options.get("max_attempts", 3), min_similarity=options.get("min_similarity", 0.9))
    outcomes: Counter = Counter()
    kept = []
    for r in lost:
        with dspy.context(lm=pivot.lm, adapter=pivot.adapter()):
            out = program(question=r["question"], context=r["original_context"], answers=r["original_answers"])
        outcome = out.rejection or "passes"
        outcomes[outcome] += 1
        print(f"{outcome:28} {r['original_answers'][0]!r} -> {[p['proposal'] for p in out.proposals]}")
        if out.rejection is None:
            kept.append({**r, "context": out.context, "answers": [out.new_answer], "program_version": VERSION})
    print(
        f"\n{VERSION}, pivot {pivot.config.name}: of {len(lost)} seeds lost to {', '.join(args.reasons)} in "
        f"{args.run.name}, {outcomes['passes']} now pass the checks; {dict(outcomes)}"
    )
    if args.out:
        args.out.write_text("".join(json.dumps(k, ensure_ascii=False) + "\n" for k in kept))


if __name__ == "__main__":
    main()
