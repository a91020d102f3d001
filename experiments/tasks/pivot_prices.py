"""What a pivot's tokens cost in dollars, where LiteLLM's cost map prices its model (a provider's; a local model
or a server's own name has no price, and is shown without one, never as free)."""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)


def dollars(model: str | None, prompt_tokens: int, completion_tokens: int) -> float | None:
    if not model or "/" not in model:
        return None
    import litellm

    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception as exc:  # noqa: BLE001 - LiteLLM raises several kinds for a model its map lacks
        logger.debug("no price for %s: %s", model, exc)
        return None
    return float(prompt) + float(completion)
