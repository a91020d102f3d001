"""What an LM's tokens cost in dollars: a price the config gives, else LiteLLM's cost map (read from the installed
package, offline), else none.

A local roster model runs in this process and costs no dollars (it costs CPU time, which runs report as seconds).
A provider's model the map knows is priced by the map; a server's own name (`hosted_vllm/…`, `openai/<whatever>`
behind an `api_base`) usually is not, and has no price unless the config gives one: an unknown price is shown
as unknown, never as free.
"""

from __future__ import annotations

import logging
import math

from pydantic import BaseModel, ConfigDict, Field

logger = logging.getLogger(__name__)

# A prompt's tokens counted with one tokenizer may be fewer than another provider's tokenizer makes of it; a bound
# meant to hold counts this much more.
PROMPT_MARGIN = 1.1


class Price(BaseModel):
    """Dollars per million tokens, for a model LiteLLM's cost map lacks (or prices otherwise than the bill)."""

    model_config = ConfigDict(extra="forbid")

    prompt_per_million: float = Field(ge=0, description="dollars per million prompt (input) tokens")
    completion_per_million: float = Field(ge=0, description="dollars per million completion (output) tokens")


def is_local(model: str) -> bool:
    """A roster name (qwen2.5-1.5b) or the model string a local LM carries (local/qwen2.5-1.5b@hash)."""
    return "/" not in model or model.startswith("local/")


def dollars(model: str | None, prompt_tokens: int, completion_tokens: int, price: Price | None = None) -> float | None:
    """The cost of one or more calls' tokens, or None where no price is known."""
    if price is not None:
        return (prompt_tokens * price.prompt_per_million + completion_tokens * price.completion_per_million) / 1e6
    if not model:
        return None
    if is_local(model):
        return 0.0
    import litellm

    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception as exc:  # noqa: BLE001 - LiteLLM raises several kinds for a model its map lacks
        logger.debug("no price for %s: %s", model, exc)
        return None
    return float(prompt) + float(completion)


def is_priced(model: str, price: Price | None = None) -> bool:
    return dollars(model, 1, 1, price) is not None


def unpriced(entries: dict) -> list[str]:
    """The provider models of `entries` (model entries by where a config has them) without a price, each as
    "<where> (<name>)"."""
    return [
        f"{where} ({entry.name})"
        for where, entry in entries.items()
        if "/" in entry.name and not is_priced(entry.name, entry.price)
    ]


def prompt_tokens_bound(model: str, messages: list[dict]) -> int:
    """At least the prompt tokens `messages` make: LiteLLM's count (the model's tokenizer where it has one, else
    OpenAI's), with a margin for a tokenizer that splits finer."""
    import litellm

    try:
        counted = litellm.token_counter(model=model, messages=messages)
    except Exception:  # noqa: BLE001 - a message shape the counter does not take: count its characters
        counted = sum(len(str(m.get("content", ""))) for m in messages)  # a token holds at least one character
        return counted
    return math.ceil(counted * PROMPT_MARGIN)


def request_bound(
    model: str, messages: list[dict], max_tokens: int | None, price: Price | None = None
) -> tuple[float | None, int]:
    """The most one request can cost: its prompt at a bound of its tokens and a reply of `max_tokens`; with the
    prompt tokens counted."""
    prompt = prompt_tokens_bound(model, messages)
    return dollars(model, prompt, int(max_tokens or 0), price), prompt
