"""Prompt prefixes reused only where a cold context would hold the same KV entries: greedy replies that do
not depend on what a context answered before.

llama-cpp-python reuses the longest prefix a context holds (`Llama.generate`) or a saved state holds
(`Llama._create_completion`) and decodes the rest of the prompt as one batch. llama.cpp's CPU kernels
compute a batch's tokens in tiles of a few tokens, and small batches another way, so the logits after a
reused prefix are not always those of the whole prompt decoded at once; which prefix lengths match
depends on the prompt's length and the weights' format (`benchmarks/prefix_numerics.py` finds them;
docs/results/engine.md, "Reused prefixes and cold logits"). A greedy reply then
depended on which calls its context had served before: with several contexts or Ray workers, on which call
went where.

`AlignedPrefixes` keeps two rules, which make every KV entry a prompt reads the one a cold decode of that
prompt computes:

- every batch of a prompt starts at a multiple of `ALIGN` tokens and holds at least `MIN_BATCH` tokens
  (unless the whole prompt is shorter), so each token sits at the same place in its kernel tile as in a
  cold decode, on the batch-size-independent path;
- a held prefix is reused only up to the *aligned frontier*: the last multiple of `ALIGN` below which
  every entry was written by such a batch of a prompt (a reply's tokens, decoded one at a time, are not).

`ALIGN` and `MIN_BATCH` are 16, wider than the tiles of the portable build, for builds whose kernels tile
wider (AVX-512). The cost is up to 31 prompt tokens read again in a call that
reuses a prefix. The frontier travels with saved states (`save_state` / `load_state`), so a prefix restored
from the pool's `PrefixStateCache` is trusted as far as the context that saved it trusted it.
"""

from __future__ import annotations

ALIGN = 16
MIN_BATCH = 16


def batches(start: int, end: int, n_batch: int) -> list[tuple[int, int]]:
    """[first, last) of each batch that decodes positions start … end − 1 of a prompt, start a multiple of
    ALIGN: at most n_batch each, none under MIN_BATCH unless the whole is."""
    if n_batch % ALIGN or n_batch < 2 * ALIGN:
        raise ValueError(f"n_batch {n_batch}: aligned prefixes need a multiple of {ALIGN}, at least {2 * ALIGN}")
    bounds = list(range(start, end, n_batch)) + [end]
    if len(bounds) > 2 and end - bounds[-2] < MIN_BATCH:
        short = MIN_BATCH - (end - bounds[-2])
        bounds[-2] -= -(-short // ALIGN) * ALIGN
    return list(zip(bounds, bounds[1:], strict=False))


def reusable(held: int, frontier: int, end: int) -> int:
    """How much of the `held` prompt positions a prompt of `end` tokens keeps: a multiple of ALIGN within the
    frontier, leaving at least MIN_BATCH tokens to decode."""
    keep = min(held, frontier) // ALIGN * ALIGN
    while keep > 0 and end - keep < MIN_BATCH:
        keep -= ALIGN
    return keep


class AlignedPrefixes:
    """Mixed into llama_cpp.Llama, before it (and before PromptCounting, so the tokens read again are
    counted as read). n_batch must be a multiple of ALIGN, at least twice it (llama-cpp-python's default 512
    is)."""

    _frontier = 0  # positions below it hold the entries a cold decode of any prompt sharing them computes
    _prompt_next = False  # the next eval is a generate call's prompt

    def generate(self, tokens, *args, **kwargs):
        self._prompt_next = True
        yield from super().generate(tokens, *args, **kwargs)

    def eval(self, tokens):
        start = int(self.n_tokens)
        if not self._prompt_next:
            # a reply token, or choice_logprobs' rescoring: written from `start` on, in batches of its own
            self._frontier = min(self._frontier, start)
            return super().eval(tokens)
        self._prompt_next = False
        end = start + len(tokens)
        keep = reusable(start, self._frontier, end)
        # generate kept [0, start) of the prompt: decode [keep, start) again with the rest
        tokens = [int(t) for t in self.input_ids[keep:start]] + list(tokens)
        self.n_tokens = keep
        for first, last in batches(keep, end, self.n_batch):
            super().eval(tokens[first - keep : last - keep])
        self._frontier = end // ALIGN * ALIGN if end - keep >= MIN_BATCH else keep

    def reset(self):
        self._frontier = 0
        return super().reset()

    def save_state(self):
        state = super().save_state()
        state.aligned_frontier = self._frontier
        return state

    def load_state(self, state) -> None:
        super().load_state(state)
        self._frontier = min(getattr(state, "aligned_frontier", 0), int(self.n_tokens))
