"""llama_cpp.Llama with its native layer replaced: a word tokenizer, a KV "cache" that is a list of
tokens, scripted replies. Everything above the native layer is llama-cpp-python's own code: the chat
handler and its ChatML template, `create_completion`, the cache lookup and state save of
`_create_completion`, the prefix reuse of `generate`, the batching of `eval`. So what the engine counts
on it is what it counts on a real model, without loading one.

`install` also patches `llama_vocab_is_eog`: that one native call is made by module function, not by
method.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

llama_cpp = pytest.importorskip("llama_cpp")
from llama_cpp import llama_chat_format  # noqa: E402
from llama_cpp.llama import LlamaState  # noqa: E402

EOS = 0
N_VOCAB = 4096
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# One vocabulary for every context: a state saved by one context is read by another, as with one model file.
_VOCAB: dict[str, int] = {"<eos>": EOS}
_PIECES: dict[int, str] = {EOS: "<eos>"}
_PIECE = re.compile(r"\s+|\w+|[^\w\s]")


def token_ids(text: str) -> list[int]:
    out = []
    for piece in _PIECE.findall(text):
        if piece not in _VOCAB:
            _VOCAB[piece] = len(_VOCAB)
            _PIECES[_VOCAB[piece]] = piece
        out.append(_VOCAB[piece])
    return out


class _Model:
    vocab = None

    def token_bos(self):
        return -1

    def token_eos(self):
        return EOS

    def token_cls(self):
        return -1

    def token_sep(self):
        return -1

    def add_bos_token(self):
        return False

    def add_eos_token(self):
        return False

    def n_vocab(self):
        return N_VOCAB


class _Batch:
    def set_batch(self, batch, n_past, logits_all):
        self.tokens, self.n_past = list(batch), n_past


class _Context:
    """The KV cache as the tokens it holds, checked against the positions each decode writes."""

    def __init__(self):
        self.kv: list[int] = []
        self.batches: list[tuple[int, int]] = []  # per position held: (first position, length) of its decode
        self.decoded = 0  # tokens decoded over the context's life
        self.logits = np.zeros(N_VOCAB, dtype=np.float32)

    def kv_cache_seq_rm(self, seq_id, p0, p1):
        del self.kv[p0:]
        del self.batches[p0:]
        return True

    def decode(self, batch):
        assert batch.n_past == len(self.kv), "a decode must continue what the KV cache holds"
        self.kv += batch.tokens
        self.batches += [(batch.n_past, len(batch.tokens))] * len(batch.tokens)
        self.decoded += len(batch.tokens)

    def get_logits_ith(self, i):
        import ctypes

        return self.logits.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


class StandInLlama(llama_cpp.Llama):
    """Built as the engine builds a Llama (keyword arguments); replies pop from `replies` (text)."""

    replies: list[str] = []  # shared, set by a test: contexts of one pool take turns answering

    def __init__(self, n_ctx: int = 512, **_):
        self._model, self._ctx, self._batch = _Model(), _Context(), _Batch()
        self._n_ctx, self.n_batch = n_ctx, 32  # a small batch: prompts take several
        self._n_vocab = N_VOCAB
        self._logits_all, self._is_recurrent, self._is_hybrid = False, False, False
        self.input_ids = np.zeros(n_ctx, dtype=np.intc)
        self.scores = np.zeros((self.n_batch, N_VOCAB), dtype=np.single)
        self.n_tokens, self._requires_eval, self._seed = 0, True, 0
        self.cache, self.draft_model, self.verbose, self.spm_infill = None, None, False, False
        self.metadata, self.model_path, self.chat_format = {}, "stand-in.gguf", None
        self.chat_handler = llama_chat_format.chat_formatter_to_chat_completion_handler(
            llama_chat_format.Jinja2ChatFormatter(CHATML, eos_token="<|im_end|>", bos_token="")
        )
        self._chat_handlers = {}
        self.prompts: list[list[int]] = []  # the prompt tokens of each generation, as generate received them
        self._reply: list[int] = []

    def close(self):
        pass

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return token_ids(text.decode())

    def detokenize(self, tokens, prev_tokens=None, special=False) -> bytes:
        return "".join(_PIECES[int(t)] for t in tokens if int(t) != EOS).encode()

    def generate(self, tokens, **kwargs):
        self.prompts.append(list(tokens))
        return super().generate(tokens, **kwargs)

    def _init_sampler(self, **kwargs):
        self._reply = token_ids(StandInLlama.replies.pop(0)) + [EOS]
        return None

    def sample(self, **kwargs):
        return self._reply.pop(0)

    def save_state(self) -> LlamaState:
        kv = np.array(self._ctx.kv, dtype=np.intc).tobytes()
        state = LlamaState(
            input_ids=self.input_ids.copy(),
            scores=self._scores.copy(),
            n_tokens=self.n_tokens,
            llama_state=kv,
            llama_state_size=len(kv),
            seed=self._seed,
        )
        state.batches = list(self._ctx.batches)  # what the stand-in's "KV state" records beside the tokens
        return state

    def load_state(self, state: LlamaState) -> None:
        """Llama.load_state with the KV state copied into the stand-in's context instead of llama.cpp's."""
        self.scores[: state.n_tokens, :] = state.scores.copy()
        self.input_ids = state.input_ids.copy()
        self.n_tokens = state.n_tokens
        self._requires_eval = True
        self._seed = state.seed
        self._ctx.kv = np.frombuffer(state.llama_state, dtype=np.intc).tolist()
        self._ctx.batches = list(state.batches)


def lcp(a, b) -> int:
    """Longest common prefix of two token lists: the oracle the tests compare counts with."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def decoded_as_cold(batches: list[tuple[int, int]], length: int) -> bool:
    """Whether each position of a prompt of `length` tokens was written by a batch a cold decode's kernels
    treat alike (experiments/lm/aligned_prefixes.py): started at a multiple of ALIGN, MIN_BATCH tokens or
    more (or the whole prompt), and reaching the end of the position's ALIGN-block or of this prompt (a
    block a batch left partly empty is not reused)."""
    from experiments.lm.aligned_prefixes import ALIGN, MIN_BATCH

    return len(batches) >= length and all(
        first % ALIGN == 0
        and (size >= MIN_BATCH or (first, size) == (0, length))
        and first + size >= min(length, (p // ALIGN + 1) * ALIGN)
        for p, (first, size) in enumerate(batches[:length])
    )


def kept(prefix: int, previous: int, length: int) -> int:
    """The prefix an aligned context reuses of `prefix` held tokens of a `previous` prompt, for a prompt of
    `length` tokens (the previous prompt's batches reached its last multiple of ALIGN)."""
    from experiments.lm.aligned_prefixes import ALIGN, reusable

    return reusable(prefix, previous // ALIGN * ALIGN, length)


def install(monkeypatch, tmp_path) -> None:
    """The real engine and pool (with its PrefixStateCache) make StandInLlama contexts through new_llama."""
    from experiments.lm import engine

    monkeypatch.setattr(llama_cpp, "Llama", StandInLlama)
    monkeypatch.setattr(llama_cpp.llama_cpp, "llama_vocab_is_eog", lambda vocab, token: token == EOS)
    monkeypatch.setattr(engine, "model_path", lambda name: tmp_path / f"{name}.gguf")
    monkeypatch.setattr(StandInLlama, "replies", [])
