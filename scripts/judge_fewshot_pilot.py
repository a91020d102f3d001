"""Pilot: does a judge given labelled demonstrations (what DSPy's LabeledFewShot compiles) separate
gold controls from two-answer controls, where every zero-shot method reached at most AUC 0.70?

    python3 scripts/judge_fewshot_pilot.py 20 4 > k4.jsonl    # 20 held-out controls of each, 4 demos
    python3 scripts/judge_fewshot_pilot.py 20 0 > k0.jsonl    # the same question with no demos

The question is the `checks` method's "Apart from X, does the context also give a different answer?",
its yes-probability read from the verdict token's log-probabilities. Demonstrations are the shortest
calibration-half controls, gold and two-answer in turn, from distinct seeds; the evaluated controls
are the first held-out ones (the judge study's split). One line per control on stdout, the AUC on stderr.
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dspy  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from experiments.config import LMConfig  # noqa: E402
from experiments.judging.controls import calibration_seeds, controls_for, other_answer_pool  # noqa: E402
from experiments.lm.registry import build_lm  # noqa: E402
from programs.judge import LOGPROBS, OTHER_CHECK, verdict_probability  # noqa: E402
from signatures.judge import JudgeCheck  # noqa: E402

PAIR = ("gold_answer", "two_answers")


def demonstrations(calibration: list[dict], k: int) -> list[dspy.Example]:
    shortest = sorted(calibration, key=lambda c: len(c["context"].split()))
    demos, used = [], set()
    for condition in PAIR * (k // 2):
        c = next(c for c in shortest if c["condition"] == condition and c["seed_id"] not in used)
        used.add(c["seed_id"])
        demos.append(
            dspy.Example(
                context=c["context"],
                question=c["question"],
                check=OTHER_CHECK.format(answer=c["answers"][0]),
                verdict="yes" if condition == "two_answers" else "no",
            ).with_inputs("context", "question", "check")
        )
    return demos


def main(n: int, k: int) -> None:
    pool = other_answer_pool("nq")
    controls = [c for e in calibration_seeds("nq")[:170] for c in controls_for(e, pool, 0) if c["condition"] in PAIR]
    held = [c for c in controls if c["half"] == "held_out"]
    asked = [c for condition in PAIR for c in [c for c in held if c["condition"] == condition][:n]]
    judge = build_lm(LMConfig(name="qwen2.5-1.5b", temperature=0.0, max_tokens=20, seed=0), "judge")
    predict = dspy.Predict(JudgeCheck)
    predict.demos = demonstrations([c for c in controls if c["half"] == "calibration"], k)
    scores, started = [], time.time()
    with dspy.context(lm=judge.lm, adapter=judge.adapter()):
        for c in asked:
            out = predict(
                context=c["context"],
                question=c["question"],
                check=OTHER_CHECK.format(answer=c["answers"][0]),
                config=dict(LOGPROBS),
            )
            p = verdict_probability(getattr(out, "logprobs", None), ("yes", "no"))
            scores.append(0.5 if p is None else p)
            print(
                json.dumps({"id": c["id"], "condition": c["condition"], "p_other": p, "verdict": out.verdict}),
                flush=True,
            )
    auc = roc_auc_score([c["condition"] == "two_answers" for c in asked], scores)
    print(f"demos {k}, controls {len(asked)}: AUC gold/two {auc:.2f} in {time.time() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20, int(sys.argv[2]) if len(sys.argv) > 2 else 4)
