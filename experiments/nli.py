"""Entailment backends for the `entailment` metric: `nli(premise, hypothesis) -> probability`.

- `cross-encoder:<hub id or local dir>` — a real NLI cross-encoder (default
  cross-encoder/nli-deberta-v3-base), batched through sentence-transformers. None ships on PyPI,
  so offline this needs a local directory.
- `judge` — the offline fallback: the judge LM asked the entailment question with a constrained
  verdict (1.0 or 0.0). Honest about what it is: an LM's judgement, not an NLI model; the report
  names the backend next to every entailment number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import dspy

from experiments.config import ConfigError
from signatures.entailment import Entails

DEFAULT_CROSS_ENCODER = "cross-encoder/nli-deberta-v3-base"


class CrossEncoderNLI:
    def __init__(self, model: str = DEFAULT_CROSS_ENCODER, batch_size: int = 16):
        from sentence_transformers import CrossEncoder

        self.name = f"cross-encoder:{model}"
        self.model = CrossEncoder(model, device="cpu")
        # sentence-transformers 6 keeps the Hugging Face config on the wrapped model
        config = getattr(self.model, "config", None) or self.model.model.config
        labels = {v.lower(): int(k) for k, v in config.id2label.items()}
        self.entailment_index = labels["entailment"]
        self.batch_size = batch_size

    def batch(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        probs = self.model.predict(list(pairs), batch_size=self.batch_size, apply_softmax=True)
        return [float(p[self.entailment_index]) for p in probs]

    def __call__(self, premise: str, hypothesis: str) -> float:
        return self._cached(premise, hypothesis)

    @lru_cache(maxsize=65536)  # noqa: B019 - one backend per process; the cache dies with it
    def _cached(self, premise: str, hypothesis: str) -> float:
        return self.batch([(premise, hypothesis)])[0]


class JudgeLMNLI:
    def __init__(self, judge_lm):
        self.name = f"judge-lm:{judge_lm.config.label}"
        self.judge_lm = judge_lm
        self.ask = dspy.Predict(Entails)

    def __call__(self, premise: str, hypothesis: str) -> float:
        with dspy.context(lm=self.judge_lm.lm, adapter=self.judge_lm.adapter()):
            return 1.0 if self.ask(premise=premise, hypothesis=hypothesis).verdict == "entailment" else 0.0


def build_nli(spec: str, judge_lm=None) -> Callable[[str, str], float] | None:
    if spec == "none":
        return None
    if spec == "judge":
        if judge_lm is None:
            raise ConfigError("options.nli: judge needs models.judge; add a judge or choose another backend")
        return JudgeLMNLI(judge_lm)
    if spec.startswith("cross-encoder:") or spec == "cross-encoder":
        return CrossEncoderNLI(spec.partition(":")[2] or DEFAULT_CROSS_ENCODER)
    raise ConfigError(f"options.nli: unknown nli backend {spec!r}: none, judge, or cross-encoder:<hub id or directory>")
