"""Resolve an LM config to a configured `dspy.LM`; nothing loads until the first call.

Local roster names run in-process through the llama.cpp engine. Anything written
provider/model (openai/…, anthropic/…, hosted_vllm/… with api_base, ollama_chat/…) goes to
DSPy unchanged. The model string of a local LM carries its file hash, so DSPy's cache key —
which contains the model string and the full request (prompt, decoding, schema) — changes
whenever the weights do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from experiments.lm import engine, roster
from experiments.lm.credentials import require_credentials
from experiments.lm.engine import LlamaCppEngine
from experiments.lm.pool import CoreSplit, plan_split
from experiments.lm.roster import get_spec
from experiments.lm.settings import LMConfig
from experiments.lm.usage import MeteredLM

# Seconds a provider/server call waits for the next byte of a reply (and to send its request) when the
# config sets no `timeout`; connecting has the client's own 10 s. The client's default read timeout is
# 600 s per attempt: one hung server would hold a run for most of an hour across the retries.
DEFAULT_TIMEOUT = 120.0
CONNECT_TIMEOUT = 10.0  # lm15's (DSPy's native client) connect default, which a number of seconds leaves as it is


@dataclass
class ResolvedLM:
    role: str
    config: LMConfig
    lm: Any  # dspy.LM
    engine: Any | None  # LlamaCppEngine for local models

    @property
    def is_local(self) -> bool:
        return self.engine is not None

    @property
    def file_sha256(self) -> str | None:
        """The hash of a local model's weights file (what a judge's fitted parameters are keyed by); None for a
        provider's model."""
        return get_spec(self.config.name).sha256 if self.is_local else None

    def adapter(self):
        import dspy

        return dspy.JSONAdapter() if self.config.adapter == "json" else dspy.ChatAdapter()

    def identity(self) -> dict[str, Any]:
        """What MLflow records: enough to tell whether a rerun used the same model and decoding."""
        cfg = self.config
        ident: dict[str, Any] = {
            "role": self.role,
            "name": cfg.name,
            # only where it differs: bench scan archives are keyed by this identity, which must not change
            **({"label": cfg.label} if cfg.label != cfg.name else {}),
            "kind": "local" if self.is_local else "provider",
            "model_string": self.lm.model,
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "max_tokens": cfg.max_tokens,
            "seed": cfg.seed,
            "adapter": cfg.adapter,
            "cache": cfg.cache,
        }
        if self.is_local:
            # the build's CPU features; the split: contexts × threads per context, out of the process's cores
            ident.update(
                file_sha256=self.file_sha256,
                n_ctx=cfg.n_ctx,
                runtime="llama-cpp-python",
                llama_cpp_features=engine.build_features(),
                n_threads=self.engine.n_threads,
                n_contexts=self.engine.n_contexts,
                cores=self.engine.split.cores,
            )
        if cfg.api_base:
            ident["api_base"] = cfg.api_base
        if not self.is_local:
            ident["endpoint"] = getattr(self.lm, "cache_endpoint", None)
            ident["timeout"] = cfg.timeout if cfg.timeout is not None else DEFAULT_TIMEOUT
        return ident

    def usage(self) -> dict[str, float]:
        """Calls, tokens, seconds (and for providers cost and failed calls) spent since the LM was built."""
        if self.engine is not None:  # runs in this process: CPU time, no dollars
            return {**self.engine.stats.as_dict(), "cost_usd": 0.0}
        meter = getattr(self.lm, "meter", None)  # a MeteredLM; test doubles have none
        return meter.as_dict() if meter is not None else {}


def build_lm(config: LMConfig, role: str, split: CoreSplit | None = None) -> ResolvedLM:
    """`split`: contexts and threads of a local model (default: one context on every core)."""
    import dspy

    decoding = dict(
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        top_p=config.top_p,
        seed=config.seed,
        cache=config.cache,
    )
    if "/" in config.name:
        require_credentials(config.name, role, config.api_base)

        extra = {"api_base": config.api_base} if config.api_base else {}
        extra["timeout"] = config.timeout if config.timeout is not None else DEFAULT_TIMEOUT
        lm = MeteredLM(config.name, num_retries=config.num_retries, price=config.price, **decoding, **extra)
        return ResolvedLM(role, config, lm, None)
    spec = get_spec(config.name)
    # A missing or corrupt weights file fails the run here, with its own message, not as one error per case
    # (the engine loads lazily, and DSPy would record the failure on every case). Verified once: a marker
    # beside the file makes later checks a stat.
    roster.model_path(spec.name)
    split = split or plan_split(1)
    engine = LlamaCppEngine(
        config.name, n_ctx=config.n_ctx, n_threads=split.threads, n_contexts=split.contexts, cores=split.cores
    )
    lm = dspy.LM(f"local/{spec.name}@{spec.short_hash}", engine=engine, num_retries=0, **decoding)
    return ResolvedLM(role, config, lm, engine)
