"""A DSPy 3.4 LM engine that runs a GGUF model in-process through llama-cpp-python.

DSPy owns caching, retries and history; this engine turns one canonical request into one
response. Structured outputs matter most for small models: when the adapter asks for a JSON
schema, llama.cpp constrains decoding by a grammar built from it, so the reply always parses
(unless max_tokens cuts it off).
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field

from experiments.lm.aligned_prefixes import AlignedPrefixes
from experiments.lm.pool import ContextPool, CoreSplit, decoding_slots
from experiments.lm.prompt_reads import CONTEXT, STATE_CACHE, PromptCount, PromptCounting
from experiments.lm.roster import get_spec, model_path
from experiments.lm.shared_weights import sharing_weights

logger = logging.getLogger(__name__)

_POOLS: dict[tuple[str, int, int], ContextPool] = {}
_POOLS_LOCK = threading.Lock()
# One model load at a time in a process. llama-cpp-python silences a load by pointing file descriptors 1
# and 2 at /dev/null and back; two loads in two threads interleave that, and the second restores the
# first's /dev/null: every later line of the process (progress, results) was lost, exit code 0.
_LOAD_LOCK = threading.Lock()
PROMPT_CACHE_BYTES = 1 << 29


def build_features() -> str:
    """The CPU features the installed llama.cpp build uses ("AVX2 AVX512 AVX512_VNNI …"). scripts/install.sh
    builds for the CPU it runs on, and kernels for other instruction sets may round differently, so a
    greedy run on another kind of CPU can pick another token: runs record which build made them."""
    import llama_cpp

    return " ".join(re.findall(r"(\w+) = 1", llama_cpp.llama_print_system_info().decode()))


@functools.cache
def context_class(base: type) -> type:
    """`base` (llama_cpp.Llama) reusing prefixes only where a cold decode would match them
    (experiments/lm/aligned_prefixes.py) and counting the prompt tokens it reads
    (experiments/lm/prompt_reads.py); one class per base, so contexts of any model share it."""
    return type(f"Context{base.__name__}", (AlignedPrefixes, PromptCounting, base), {})


def new_llama(name: str, n_ctx: int, n_threads: int, cache):
    """One llama.cpp context on the process's model for the file (experiments/lm/shared_weights.py): a
    further context of a model costs its KV cache and buffers, not another copy of the weights."""
    import llama_cpp

    llama = load_llama(context_class(llama_cpp.Llama), name, n_ctx, n_threads)
    llama.set_cache(cache)
    return drop_logits_buffer(llama)


def load_llama(cls: type, name: str, n_ctx: int, n_threads: int, **extra):
    """A `cls` (llama_cpp.Llama or a subclass) on the verified file of `name`, loaded under the process's load
    lock on shared weights."""
    path = model_path(name)
    logger.info("Loading %s (%s) n_ctx=%d threads=%d", name, path.name, n_ctx, n_threads)
    with _LOAD_LOCK, sharing_weights():
        return cls(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            seed=0,
            use_mmap=True,
            verbose=False,
            **extra,
        )


def drop_logits_buffer(llama):
    """Shrink llama-cpp-python's logits buffer to one row. Built without logits_all it allocates n_batch
    rows × vocabulary floats (297 MiB for Qwen's 151,936 tokens at n_batch 512) that nothing here reads:
    sampling reads llama.cpp's own logits, and choice_logprobs reads them with get_logits_ith. The buffer
    became resident all the same, because restoring a saved state broadcasts its logits row into every
    row up to the restored length, and every saved state copied one row per prompt token first. With one
    row, saving copies one row and restoring writes one."""
    import numpy as np

    if not getattr(llama, "_logits_all", False):
        llama.scores = np.zeros((1, llama.scores.shape[1]), dtype=np.single)
    return llama


def context_pool(name: str, n_ctx: int, split: CoreSplit) -> ContextPool:
    """The contexts of one model per (model, context size, threads) per process, shared by every
    engine of that model (a pivot and a judge of the same model borrow from one pool)."""
    key = (name, n_ctx, split.threads)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            # Calls alternate between predictors (closed-book, open-book, …), so the previous prompt
            # rarely shares a prefix with the next. A RAM cache of KV states lets each call resume from
            # the longest cached prefix — the predictor's instructions — which cut prompt time ~30%.
            # One cache per pool: a state saved by one context loads into any context of the model.
            cache = PrefixStateCache(capacity_bytes=PROMPT_CACHE_BYTES)
            pool = ContextPool(
                lambda: new_llama(name, n_ctx, split.threads, cache), split.contexts, decoding_slots(split), label=name
            )
            if not _POOLS:
                import atexit

                atexit.register(close_pools)
            _POOLS[key] = pool
        else:
            pool.grow(split.contexts)
        return pool


def release_models(keep: Collection[str] = ()) -> list[str]:
    """Close the contexts of every local model not named in `keep`: their KV caches, saved prefix states
    and mapped weights leave the process. Nothing else holds a pool, so the next call to a released
    model makes a new one (the weights reload from the page cache, usually in about a second). The
    models that had contexts, by name."""
    with _POOLS_LOCK:
        gone = [key for key in _POOLS if key[0] not in keep]
        pools = [_POOLS.pop(key) for key in gone]
    loaded = sorted({pool.label for pool in pools if pool.contexts})
    for pool in pools:
        pool.close()
    return loaded


def close_pools() -> None:
    """Free the models while llama_cpp can still do it: left to garbage collection at interpreter
    exit, Llama.__del__ runs after the library's functions are gone and prints a traceback."""
    with _POOLS_LOCK:
        while _POOLS:
            _POOLS.popitem()[1].close()


def _prefix_state_cache_class():
    from llama_cpp import LlamaRAMCache

    class _PrefixStateCache(LlamaRAMCache):
        """Keeps KV states only. llama-cpp-python also copies its whole logits buffer into every state
        (n_batch × vocab floats: ~300 MB for Qwen) without counting it, which grew a run to 10 GB.
        A restored state is always re-decoded from at least one token, so the old logits are unused.
        Shared by the contexts of a pool, so every access holds a lock."""

        def __init__(self, capacity_bytes: int):
            super().__init__(capacity_bytes=capacity_bytes)
            self._lock = threading.RLock()

        def __getitem__(self, key):
            with self._lock:
                return super().__getitem__(key)

        def __contains__(self, key):
            with self._lock:
                return super().__contains__(key)

        def __setitem__(self, key, value):
            value.scores = value.scores[-1:].copy()
            with self._lock:
                super().__setitem__(key, value)

        @property
        def cache_size(self):
            return sum(s.llama_state_size + s.scores.nbytes for s in self.cache_state.values())

    return _PrefixStateCache


def PrefixStateCache(capacity_bytes: int):  # noqa: N802 - a lazy class: llama_cpp loads only on first use
    return _prefix_state_cache_class()(capacity_bytes=capacity_bytes)


# What a context reads of the prompts it is sent (experiments/lm/prompt_reads.py): prompt tokens decoded,
# prefixes reused from the context's previous call or from a restored state (calls and tokens), and the
# tokens choice_logprobs decodes after a reply.
READ_KEYS = (
    "prompt_tokens_read",
    "prefix_hits_context",
    "prefix_tokens_context",
    "prefix_hits_state_cache",
    "prefix_tokens_state_cache",
    "logprob_tokens_read",
)


@dataclass
class EngineStats:
    """Counts of real (uncached) calls: what benchmarks divide by. prompt_tokens are those sent;
    prompt_tokens_read those llama.cpp decoded, the rest came as a prefix from the context's last call
    or from a saved state: prompt_tokens = prompt_tokens_read + prefix_tokens_context +
    prefix_tokens_state_cache."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    truncated: int = 0
    prompt_tokens_read: int = 0
    prefix_hits_context: int = 0
    prefix_tokens_context: int = 0
    prefix_hits_state_cache: int = 0
    prefix_tokens_state_cache: int = 0
    logprob_tokens_read: int = 0
    uncounted_calls: int = 0  # calls on a context that does not count its reads (a test's stand-in)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(
        self,
        prompt: int,
        completion: int,
        seconds: float,
        truncated: bool,
        read: PromptCount | None = None,
        logprob_tokens: int = 0,
    ) -> None:
        with self.lock:
            self.calls += 1
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            self.seconds += seconds
            self.truncated += int(truncated)
            if read is None:
                self.uncounted_calls += 1
                return
            self.prompt_tokens_read += read.read
            self.logprob_tokens_read += logprob_tokens
            if read.source == CONTEXT:
                self.prefix_hits_context += 1
                self.prefix_tokens_context += read.reused
            elif read.source == STATE_CACHE:
                self.prefix_hits_state_cache += 1
                self.prefix_tokens_state_cache += read.reused

    def merge(self, other: dict[str, float]) -> None:
        """Add the counts another process (a Ray worker) made with the same model."""
        with self.lock:
            self.calls += int(other.get("calls", 0))
            self.prompt_tokens += int(other.get("prompt_tokens", 0))
            self.completion_tokens += int(other.get("completion_tokens", 0))
            self.seconds += float(other.get("seconds", 0.0))
            self.truncated += int(other.get("truncated", 0))
            if "prompt_tokens_read" not in other:
                self.uncounted_calls += int(other.get("calls", 0))
                return
            for key in READ_KEYS:
                setattr(self, key, getattr(self, key) + int(other.get(key, 0)))

    def as_dict(self) -> dict[str, float]:
        out = {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 3),
            "truncated": self.truncated,
        }
        # Reads some call did not count are unknown, not zero: no read figure unless every call counted them.
        if not self.uncounted_calls:
            out.update({key: getattr(self, key) for key in READ_KEYS})
            if self.prompt_tokens:
                out["prompt_read_share"] = round(self.prompt_tokens_read / self.prompt_tokens, 4)
        return out


def _flatten_system(system) -> str | None:
    if system is None:
        return None
    return system if isinstance(system, str) else "".join(getattr(p, "text", "") for p in system)


def _chat_messages(request) -> list[dict[str, str]]:
    messages = []
    system = _flatten_system(request.system)
    if system:
        messages.append({"role": "system", "content": system})
    for message in request.messages:
        role = "user" if message.role == "developer" else message.role
        messages.append({"role": role, "content": message.text or ""})
    return messages


def completion_prompt(messages: list[dict[str, str]]) -> str:
    """A base model has no chat template: lay the conversation out as a plain transcript."""
    lines = []
    for message in messages:
        label = {"system": "", "user": "User: ", "assistant": "Assistant: "}.get(message["role"], "")
        lines.append(f"{label}{message['content']}".strip())
    return "\n\n".join(lines) + "\n\nAssistant:"


def _json_schema(response_format) -> dict | None:
    """The canonical lm15 response_format → the JSON schema llama.cpp compiles to a grammar."""
    if not response_format:
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        return response_format.get("schema") or {"type": "object"}
    if kind == "json_object":
        return {"type": "object"}
    return None


def enum_fields(schema: dict) -> dict[str, tuple[str, ...]]:
    """The output fields that choose among declared strings (a Literal verdict)."""
    props = schema.get("properties") or {}
    return {
        name: tuple(p["enum"])
        for name, p in props.items()
        if isinstance(p, dict)
        and isinstance(p.get("enum"), list)
        and p["enum"]
        and all(isinstance(v, str) and v for v in p["enum"])
    }


def choice_logprobs(llama, prompt_tokens: int, text: str, schema: dict):
    """Log-probabilities of each declared key at the position where a choice field's value starts.

    llama-cpp-python reports logprobs only for models built with logits_all=True (a logits row per
    prompt token: gigabytes for a 150k vocabulary, and slower prompts). A verdict needs one row: the
    prompt plus the generated text up to the field's opening quote is evaluated again (all but the
    last tokens come from the KV cache) and the first token of each key is read off the last
    logits. The keys' probabilities are renormalised among themselves, so a provider's raw
    top-k tokens and this distribution read the same way (programs.judge.verdict_probability).
    Grammar-constrained decoding does not change these logits: the grammar acts in the sampler.
    """
    import numpy as np
    from dspy.lm15 import TokenLogprob, TopLogprob

    entries = []
    prompt = [int(t) for t in llama.input_ids[:prompt_tokens]]
    for field_name, keys in enum_fields(schema).items():
        match = re.search(r'"' + re.escape(field_name) + r'"\s*:\s*"', text)
        if not match or len(prompt) != prompt_tokens:
            continue
        sequence = prompt + llama.tokenize(text[: match.end()].encode(), add_bos=False, special=False)
        common = 0
        for a, b in zip(llama.input_ids[: llama.n_tokens], sequence[:-1], strict=False):
            if a != b:
                break
            common += 1
        llama.n_tokens = common
        llama.eval(sequence[common:])
        logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),)).astype(np.float64)
        logits -= logits.max()
        logz = np.log(np.exp(logits).sum())
        scores = {}
        for key in keys:
            ids = {
                llama.tokenize(form.encode(), add_bos=False, special=False)[0]
                for form in {key, key.capitalize(), key.upper()}
            }
            scores[key] = float(np.log(sum(np.exp(logits[i] - logz) for i in ids)))
        total = np.log(sum(np.exp(v) for v in scores.values()))
        ranked = sorted(((k, v - total) for k, v in scores.items()), key=lambda kv: -kv[1])
        chosen = text[match.end() :].split('"', 1)[0]
        entries.append(
            TokenLogprob(
                token=chosen,
                logprob=dict(ranked).get(chosen, ranked[0][1]),
                top=tuple(TopLogprob(token=k, logprob=v) for k, v in ranked),
            )
        )
    return tuple(entries) or None


class LlamaCppEngine:
    """Custom DSPy engine (complete/stream/close) for one roster model."""

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = frozenset({"temperature", "top_p", "max_tokens", "seed", "stop", "response_format", "logprobs"})

    def __init__(self, name: str, n_ctx: int = 4096, n_threads: int = 2, n_contexts: int = 1, cores: int | None = None):
        self.spec = get_spec(name)
        self.name = name
        self.n_ctx = n_ctx
        # llama.cpp contexts are not thread-safe: each call borrows one of the model's pool.
        self.split = CoreSplit(contexts=n_contexts, threads=n_threads, cores=cores or n_contexts * n_threads)
        self.stats = EngineStats()

    @property
    def n_threads(self) -> int:
        return self.split.threads

    @property
    def n_contexts(self) -> int:
        return self.split.contexts

    # -- saved with programs (DSPy stores the engine's class path and this state) --
    def dump_state(self) -> dict:
        return {"name": self.name, "n_ctx": self.n_ctx, "n_threads": self.n_threads, "n_contexts": self.n_contexts}

    @classmethod
    def load_state(cls, state: dict) -> LlamaCppEngine:
        return cls(state["name"], state.get("n_ctx", 4096), state.get("n_threads", 2), state.get("n_contexts", 1))

    def complete(self, request):
        from dspy.clients.engines.base import validate_request
        from dspy.lm15 import Message, Response, TextPart, Usage

        validate_request(request)
        config = request.config
        extensions = dict(config.extensions or {})
        seed = config.seed if config.seed is not None else extensions.get("seed", 0)
        temperature = config.temperature if config.temperature is not None else 0.0
        sampling = {
            "temperature": temperature,
            "top_p": config.top_p if config.top_p is not None else 1.0,
            "max_tokens": config.max_tokens or 256,
            "seed": int(seed),
            "stop": list(config.stop) or None,
        }
        if temperature == 0:
            sampling["top_k"] = 1  # greedy regardless of top_p
        schema = _json_schema(config.response_format)
        messages = _chat_messages(request)
        pool = context_pool(self.name, self.n_ctx, self.split)
        logprobs = None
        logprob_tokens = 0
        with pool.context() as llama:
            counting = isinstance(llama, PromptCounting)
            started = time.perf_counter()  # time decoding, not waiting for a free context
            if counting:
                llama.begin_count()
            if self.spec.chat:
                kwargs = dict(sampling)
                if schema is not None:
                    kwargs["response_format"] = {"type": "json_object", "schema": schema}
                out = llama.create_chat_completion(messages=messages, **kwargs)
                text = out["choices"][0]["message"].get("content") or ""
            else:
                kwargs = dict(sampling)
                if schema is not None:
                    from llama_cpp import LlamaGrammar

                    kwargs["grammar"] = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
                out = llama.create_completion(prompt=completion_prompt(messages), **kwargs)
                text = out["choices"][0].get("text") or ""
            usage = out.get("usage") or {}
            # read now: the next call on this context (another thread's, once it is returned) starts a new count
            read = llama.prompt_count(usage.get("prompt_tokens", 0)) if counting else None
            if self.spec.chat and config.logprobs is not None and schema is not None:
                if counting:
                    llama.begin_count()
                logprobs = choice_logprobs(llama, usage.get("prompt_tokens", 0), text, schema)
                logprob_tokens = llama.tokens_decoded() if counting else 0
            elapsed = time.perf_counter() - started
        finish = out["choices"][0].get("finish_reason") or "stop"
        self.stats.add(
            usage.get("prompt_tokens", 0),
            usage.get("completion_tokens", 0),
            elapsed,
            finish == "length",
            read,
            logprob_tokens,
        )
        return Response(
            id=out.get("id"),
            model=request.model,
            message=Message.assistant([TextPart(text)]),
            finish_reason="length" if finish == "length" else "stop",
            usage=Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens")),
            logprobs=logprobs,
        )

    def stream(self, request):
        from dspy.lm15 import response_to_events

        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Models stay loaded for the process: other LMs may share them."""
