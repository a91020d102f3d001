"""How long a prompt a model takes, where that is known, and a warning before a run sends longer ones.

A local model runs with the `n_ctx` its config gives llama.cpp; a provider's limit comes from LiteLLM's model
map (read from the installed package, offline), and a model the map does not know is not checked. A prompt's
length is estimated from its characters (about four to a token in English): a row whose evidence alone is
longer than the window cannot fit, and its calls would end as `error:context_overflow` one by one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

logger = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4


def context_length(resolved) -> int | None:
    """Tokens the model reads and writes in one call, or None where unknown."""
    if resolved.is_local:
        return resolved.config.n_ctx
    import litellm

    try:
        info = litellm.get_model_info(resolved.config.name)
    except Exception:  # noqa: BLE001 - LiteLLM raises several kinds for a model its map does not hold
        return None
    return info.get("max_input_tokens") or info.get("max_tokens")


def _chars(example) -> int:
    fields = dict(example)
    options = fields.get("options") or []
    return sum(len(str(fields.get(name) or "")) for name in ("question", "context")) + sum(len(o) for o in options)


def warn_long_prompts(examples: list, lms: Iterable[tuple[str, object]]) -> list[str]:
    """One warning per model whose window some rows cannot fit (the reply's `max_tokens` counted in); the
    warnings, as logged."""
    sizes = sorted(((_chars(e), str(e.get("id", "?"))) for e in examples), reverse=True)
    warnings = []
    for label, resolved in lms:
        window = context_length(resolved)
        if not window or not sizes:
            continue
        room = window - resolved.config.max_tokens
        over = [(chars, rid) for chars, rid in sizes if chars / CHARS_PER_TOKEN > room]
        if not over:
            continue
        chars, rid = over[0]
        fix = "raise its n_ctx" if resolved.is_local else "choose a model with a longer context"
        warnings.append(
            f"{resolved.config.label} ({label}): {len(over)} of {len(sizes)} cases will not fit its context of "
            f"{window:,} tokens ({resolved.config.max_tokens} kept for the reply): the longest, {rid!r}, is about "
            f"{chars // CHARS_PER_TOKEN:,} tokens ({chars:,} characters); their calls will end as "
            f"error:context_overflow. Shorten or drop them (data.max_evidence_words), or {fix}"
        )
    for warning in warnings:
        logger.warning("%s", warning)
    return warnings
