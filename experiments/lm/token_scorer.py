"""Log-probabilities of given text under a local model, token by token.

The acceptance signals (metrics/plausibility.py) ask how likely a passage and an answer are, not what a
model would write, so they need the model's probability of every token of a fixed text. A generating
context keeps one row of logits (experiments/lm/engine.py drops the rest), so the scorer is a context of
its own, built with every row kept, on the same weights (experiments/lm/shared_weights.py). Texts scored
one after another usually share a prefix (the same passage with another answer), and the scorer decodes
only what differs.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from experiments.lm.engine import load_llama
from experiments.lm.pool import available_cores
from experiments.lm.roster import get_spec

logger = logging.getLogger(__name__)

# Room for a 400-word passage, a question and an answer; every row of logits is kept (n_ctx × vocabulary
# floats: 1.2 GB for Qwen's 151,936 tokens at 2048).
SCORER_CTX = 2048


class TextTooLong(ValueError):
    """A text longer than the scorer's context: its signals cannot be read."""


@dataclass(frozen=True)
class ScoredToken:
    start: int  # character offsets of the token in the scored text
    end: int
    logprob: float  # log P(token | everything before it)


class LlamaTokenScorer:
    """`scorer(text)` → the text's tokens with their log-probabilities (the first token, which has no
    context, is left out). One scorer per model per process; calls are serialised."""

    def __init__(self, name: str, n_threads: int = 2, n_ctx: int = SCORER_CTX):
        import llama_cpp

        get_spec(name)  # an unknown name fails here with the roster's suggestion
        self.name = name
        self._llama = load_llama(llama_cpp.Llama, name, n_ctx, n_threads, logits_all=True)
        self._lock = threading.Lock()

    def identity(self) -> dict:
        spec = get_spec(self.name)
        return {"name": self.name, "sha256": spec.sha256, "role": "scorer"}

    def __call__(self, text: str) -> list[ScoredToken]:
        import numpy as np

        llama = self._llama
        data = text.encode("utf-8")
        tokens = llama.tokenize(data, add_bos=False, special=False)
        if len(tokens) > llama.n_ctx():
            raise TextTooLong(f"{len(tokens)} tokens > the scorer's context of {llama.n_ctx()}")
        with self._lock:
            cached = list(llama.input_ids[: llama.n_tokens])
            common = 0
            for a, b in zip(cached, tokens, strict=False):
                if a != b:
                    break
                common += 1
            common = min(common, len(tokens) - 1)
            llama.n_tokens = common
            llama.eval(tokens[common:])
            logits = np.asarray(llama.scores[: len(tokens) - 1], dtype=np.float64)
        peak = logits.max(axis=1, keepdims=True)
        norm = np.log(np.exp(logits - peak).sum(axis=1)) + peak[:, 0]
        chosen = logits[np.arange(len(tokens) - 1), tokens[1:]]
        logprobs = chosen - norm
        offsets = _char_offsets(llama, tokens, text)
        return [ScoredToken(s, e, float(lp)) for (s, e), lp in zip(offsets[1:], logprobs, strict=True)]


def _char_offsets(llama, tokens: list[int], text: str) -> list[tuple[int, int]]:
    """Each token's span in `text`, in characters. A multi-byte character cut between two tokens belongs
    to the token where it starts."""
    byte_to_char = []
    for i, ch in enumerate(text):
        byte_to_char.extend([i] * len(ch.encode("utf-8")))
    byte_to_char.append(len(text))
    spans, at = [], 0
    for token in tokens:
        piece = llama.detokenize([token])
        start, at = at, min(at + len(piece), len(byte_to_char) - 1)
        spans.append((byte_to_char[start], byte_to_char[at]))
    return spans


_SHARED: dict[str, LlamaTokenScorer] = {}
_SHARED_LOCK = threading.Lock()


def shared_scorer(name: str) -> LlamaTokenScorer:
    """One scorer per model per process, built on first use (its context keeps every row of logits)."""
    with _SHARED_LOCK:
        if name not in _SHARED:
            _SHARED[name] = LlamaTokenScorer(name, n_threads=available_cores())
        return _SHARED[name]
