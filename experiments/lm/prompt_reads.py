"""The prompt tokens llama.cpp reads in a call, against those it is sent, and where the rest came from.

llama-cpp-python (0.3.36) decodes only the part of a prompt its context does not already hold. Before
generating, `Llama._create_completion` may load a saved state from the context's cache (the pool's
`PrefixStateCache`; llama.py 1370-1385), and `Llama.generate` keeps the longest common prefix of the
context's tokens and the prompt and evaluates the rest (llama.py 916-967; docs/guides/scale.md, "What
llama.cpp reuses between calls"). Both go through two methods, which `PromptCounting` observes:

- every token decoded goes through `Llama.eval(tokens)` (llama.py 666-702), which writes them at
  positions `n_tokens`, `n_tokens + 1`, … of the context. A prompt of `sent` tokens sits at positions
  0 … sent − 1 and the reply after it, so the prompt tokens read in a call are the positions below
  `sent` that its evals wrote. Within a call no prompt position is decoded twice (generate's only
  rewind, llama.py 1010-1014, is to a sampled position, past the prompt), so the other `sent − read`
  positions were already held: reused.
- a saved state is restored only through `Llama.load_state` (llama.py 2244-2261), which replaces the
  context's KV state and tokens whole: when it ran, the reused prefix came from the cache, otherwise
  from the context's own previous call.

`choice_logprobs` evaluates again after the reply (the reply text up to a verdict's value); those
positions are past the prompt, and are counted apart when the engine asks (`tokens_decoded`).
"""

from __future__ import annotations

from dataclasses import dataclass

CONTEXT = "context"
STATE_CACHE = "state_cache"


@dataclass(frozen=True)
class PromptCount:
    """One call's prompt: tokens sent, tokens decoded, and where the reused prefix came from (None: no
    prefix was reused)."""

    sent: int
    read: int
    source: str | None

    @property
    def reused(self) -> int:
        return self.sent - self.read


class PromptCounting:
    """Mixed into llama_cpp.Llama, before it: from `begin_count()` on, records the first position and
    length of every eval and whether a saved state was loaded. The pool lends a context to one call at a
    time, so the record needs no lock."""

    _evals: list[tuple[int, int]] | None = None
    _restored = False

    def begin_count(self) -> None:
        self._evals, self._restored = [], False

    def eval(self, tokens):
        if self._evals is not None:
            self._evals.append((int(self.n_tokens), len(tokens)))
        return super().eval(tokens)

    def load_state(self, state) -> None:
        self._restored = True
        return super().load_state(state)

    def tokens_decoded(self) -> int:
        """Tokens decoded since `begin_count()`, wherever they were written."""
        return sum(n for _, n in self._evals or ())

    def prompt_count(self, sent: int) -> PromptCount:
        """What the call since `begin_count()` did with a prompt of `sent` tokens."""
        read = sum(max(0, min(start + n, sent) - start) for start, n in self._evals or ())
        source = (STATE_CACHE if self._restored else CONTEXT) if read < sent else None
        return PromptCount(sent, read, source)
