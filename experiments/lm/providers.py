"""Refuse a model string whose provider prefix LiteLLM does not know, before a run writes anything.

Left to the call, `notaprovider/m` passed `validate`, opened a run folder and an MLflow run, printed
LiteLLM's banner on every call and ended each case in an error until the error budget stopped the run.
The prefixes are LiteLLM's own list (`litellm.provider_list`), so a provider LiteLLM adds is known here
the day it is installed.
"""

from __future__ import annotations

import difflib

from experiments.lm.offline import apply_offline_defaults

PROVIDERS_PAGE = "https://docs.litellm.ai/docs/providers"


def known_providers() -> list[str]:
    apply_offline_defaults()  # litellm fetches its cost map on import unless told to read its own copy
    import litellm

    return sorted(str(getattr(p, "value", p)) for p in litellm.provider_list)


def provider_problem(model: str, providers: list[str] | None = None) -> str | None:
    """None when `model` is a local name or its prefix is a LiteLLM provider; else what is wrong, with the
    nearest providers."""
    if "/" not in model:
        return None
    prefix = model.split("/", 1)[0]
    providers = known_providers() if providers is None else providers
    if prefix in providers:
        return None
    close = difflib.get_close_matches(prefix, providers, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return (
        f"{model}: unknown provider {prefix!r}; {hint}A provider model is written provider/model with one "
        f"of LiteLLM's providers ({PROVIDERS_PAGE}), e.g. openai/<model> with api_base for an "
        "OpenAI-compatible server"
    )
