"""How often a target follows the passage against its own answer, by how sure it was of that answer (its prior).

    python3 scripts/prior_curve.py --run RUN_A --run RUN_B [--bins 5] [--plot docs/results/prior_curve.png]

ClashEval plots the rate at which a model takes the context's answer against the probability it gives its own
closed-book answer. Here the prior is qwen2.5-1.5b's probability of its recorded closed-book answer after
"Question: … Answer:", read token by token from llama.cpp's logits (experiments/lm/token_scorer.py; the
plain completion prompt, not the bench's chat prompt, so it is the model's belief in the answer rather than
in that exact reply). The swaps are the pooled known-seed swaps of archived knowledge-conflict runs, as
scripts/conflict_on_valid.py pools them; each bin gives the open-book evidence share on every accepted swap
and on the swaps read valid, with Wilson intervals.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.bench.conflict_prior import answer_prior as prior  # noqa: E402
from metrics.intervals import wilson_interval  # noqa: E402
from scripts.conflict_on_valid import TARGET, pooled_swaps  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, action="append", required=True)
    parser.add_argument("--bins", type=int, default=5)
    parser.add_argument("--plot", type=Path, help="write the curve as a PNG")
    args = parser.parse_args()

    from experiments.lm.offline import apply_offline_defaults
    from experiments.lm.token_scorer import LlamaTokenScorer

    apply_offline_defaults()
    cases, answers, level = pooled_swaps(args.run)
    rows = [a for a in answers if a["setting"] == "open_book" and a.get("label") and a.get("closed_answer")]
    scorer = LlamaTokenScorer(TARGET, n_threads=1)
    for a in rows:
        a["prior"] = prior(scorer, a["question"], a["closed_answer"])
    edges = [i / args.bins for i in range(args.bins + 1)]
    print(f"prior bin | every accepted swap: n, evidence | read valid: n, evidence   ({TARGET}, {len(rows)} swaps)")
    print("---|---|---")
    curve = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        inside = [a for a in rows if lo <= a["prior"] < hi or (hi == 1.0 and a["prior"] == 1.0)]
        valid = [
            a for a in inside if level[a["case_id"]]["checks"] is None and level[a["case_id"]]["verdict"] == "valid"
        ]
        cells = []
        for group in (inside, valid):
            k, n = sum(a["label"] == "evidence" for a in group), len(group)
            if n:
                w_lo, w_hi = wilson_interval(k, n)
                cells.append(f"{n}, {k / n:.2f} [{w_lo:.2f}, {w_hi:.2f}]")
            else:
                cells.append("0, —")
        curve.append(((lo + hi) / 2, inside, valid))
        print(f"[{lo:.1f}, {hi:.1f}) | " + " | ".join(cells))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        for name, index in (("every accepted swap", 1), ("read valid", 2)):
            xs = [c[0] for c in curve if c[index]]
            ys = [sum(a["label"] == "evidence" for a in c[index]) / len(c[index]) for c in curve if c[index]]
            ax.plot(xs, ys, marker="o", label=name)
        ax.set_xlabel(f"prior: P(closed-book answer), {TARGET}")
        ax.set_ylabel("open-book answers from the passage")
        ax.set_ylim(0, 1.05)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)


if __name__ == "__main__":
    main()
