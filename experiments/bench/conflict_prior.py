"""The target's prior (ClashEval): the probability it gives its own closed-book answer, against how often it
follows a passage that states another.

The prior is P(answer | "Question: q\\nAnswer:") under the target's own weights: the product of the answer's
token probabilities, read from llama.cpp's logits (experiments/lm/token_scorer.py). The prompt is the plain
completion one, not the bench's chat prompt, so it is the model's belief in the answer rather than in that
exact reply. A target whose engine gives no log-probabilities of a fixed text (a provider's model) has no
prior: its records carry none, and the bins count them apart instead of reading them as 0.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from experiments.bench.conflict import swap_tasks
from experiments.lm.token_scorer import shared_scorer
from metrics.conflict import LABELS
from metrics.intervals import wilson_interval

# 1: P(answer | "Question: q\nAnswer:") on the target's weights, the product of the answer's token probabilities.
VERSION = "conflict_prior/1"
# Five equal bins: with a few hundred swaps, ten leave the upper bins nearly empty (most priors of a small
# model's multi-token answers are under 0.2).
BINS = 5

Scorer = Callable[[str], list]  # text -> tokens with start, end, logprob (experiments.lm.token_scorer)


def answer_prior(scorer: Scorer, question: str, answer: str) -> float:
    """P(answer | "Question: q\\nAnswer:") under the scorer's model: the product of the answer's token probabilities."""
    prefix = f"Question: {question}\nAnswer:"
    tokens = scorer(f"{prefix} {answer}")
    return math.exp(sum(t.logprob for t in tokens if t.start >= len(prefix)))


def scorer_for(target) -> Callable[[], Scorer] | None:
    """How to build a token scorer on the target's weights, or None where its engine offers no log-probabilities
    of a given text (a provider's chat API scores only what the model writes)."""
    if not target.is_local:
        return None
    name = target.config.name

    def build() -> Scorer:
        return shared_scorer(name)

    return build


class PriorProbe:
    """The per-seed unit of a target's prior stage. The scorer is built on the first item, so a stage taken
    whole from its checkpoint loads no second context."""

    def __init__(self, target: str, build: Callable[[], Scorer]):
        self.target = target
        self.build = build
        self._scorer: Scorer | None = None
        self._lock = threading.Lock()

    def scorer(self) -> Scorer:
        with self._lock:
            if self._scorer is None:
                self._scorer = self.build()
            return self._scorer

    def process(self, example) -> dict:
        started = time.perf_counter()
        prior = answer_prior(self.scorer(), example.question, example.closed_answer)
        return {
            "id": example.id,
            "target": self.target,
            "question": example.question,
            "closed_answer": example.closed_answer,
            "prior": prior,
            "status": "ok",
            "seconds": round(time.perf_counter() - started, 3),
        }


def with_priors(records: Iterable[dict], priors: Mapping[str, Mapping[str, float]]) -> list[dict]:
    """Each record with `closed_prior` where its target's prior of that seed was read; absent elsewhere."""
    out = []
    for record in records:
        prior = priors.get(record["target"], {}).get(str(record["seed_id"]))
        out.append({**record, "closed_prior": prior} if prior is not None else dict(record))
    return out


def _bin(prior: float, bins: int) -> int:
    return min(int(prior * bins), bins - 1)  # 1.0 belongs to the last bin


def prior_bins(
    records: Iterable[Mapping[str, Any]],
    bins: int = BINS,
    tasks: Iterable[str] | None = None,
    by: tuple[str, ...] = ("target", "seeds", "setting"),
) -> tuple[list[dict], dict[tuple, int]]:
    """Per group and prior bin: n, the answers that follow the passage (label `evidence`), and their share with
    a 95% Wilson interval; and per group, the labelled answers with no prior, left out of the bins. Only
    labelled answers count (an error or a seed whose memory already says what the passage says is no
    choice); every bin is listed, empty ones with n = 0. `tasks`: the swap generators by default."""
    tasks = set(swap_tasks() if tasks is None else tasks)
    counts: dict[tuple, list[list[int]]] = {}
    missing: dict[tuple, int] = {}
    for record in records:
        if record.get("task") not in tasks or record.get("label") not in LABELS:
            continue
        key = tuple(record.get(k) for k in by)
        cells = counts.setdefault(key, [[0, 0] for _ in range(bins)])
        missing.setdefault(key, 0)
        prior = record.get("closed_prior")
        if prior is None:
            missing[key] += 1
            continue
        cell = cells[_bin(float(prior), bins)]
        cell[0] += 1
        cell[1] += record["label"] == "evidence"
    rows = []
    for key in sorted(counts, key=lambda k: tuple(str(x) for x in k)):
        for i, (n, k) in enumerate(counts[key]):
            low, high = wilson_interval(k, n)
            rows.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "low": i / bins,
                    "high": (i + 1) / bins,
                    "n": n,
                    "evidence": k,
                    "evidence_share": k / n if n else float("nan"),
                    "evidence_low": low,
                    "evidence_high": high,
                }
            )
    return rows, missing


def plot_prior_curve(rows: list[dict], path: Path, by: tuple[str, ...] = ("target", "seeds", "setting")) -> bool:
    """The evidence share per prior bin, one line per group, at each bin's middle (empty bins left out), with
    its interval as a band; False (no file) when no bin holds an answer."""
    lines: dict[tuple, list[dict]] = {}
    for row in rows:
        if row["n"]:
            lines.setdefault(tuple(row[k] for k in by), []).append(row)
    if not lines:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for key, points in lines.items():
        xs = [(p["low"] + p["high"]) / 2 for p in points]
        line = ax.plot(xs, [p["evidence_share"] for p in points], marker="o", label=" · ".join(map(str, key)))[0]
        ax.fill_between(
            xs,
            [p["evidence_low"] for p in points],
            [p["evidence_high"] for p in points],
            color=line.get_color(),
            alpha=0.15,
        )
    ax.set_xlabel("prior: P(closed-book answer)")
    ax.set_ylabel("answers from the passage")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
