"""Refuse a provider model whose credentials are not in the environment before anything runs.

Without this a run with `openai/...` and no OPENAI_API_KEY starts, calls, and marks every case
`error:auth`. LiteLLM knows which variables each provider reads (`validate_environment`); what it
lists for an address (`*_API_BASE`) is not a secret and is not required when the config gives
`api_base` (or for Ollama, which defaults to localhost). Some providers read one of several names.
"""

from __future__ import annotations

import os

from experiments.failures import UserError

# A variable LiteLLM names, and the others the same provider also reads.
ALIASES = {
    "TOGETHERAI_API_KEY": ("TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_AI_TOKEN"),
    "GOOGLE_API_KEY": ("GEMINI_API_KEY",),
    "GEMINI_API_KEY": ("GOOGLE_API_KEY",),
}
NOT_SECRET_SUFFIXES = ("_API_BASE", "_API_VERSION")


def missing_credentials(model: str, api_base: str | None = None) -> list[str]:
    """The secret variables the provider of `model` needs and the environment lacks."""
    import litellm

    try:
        needed = litellm.validate_environment(model=model, api_base=api_base)["missing_keys"]
    # A provider LiteLLM cannot check: its call says what is wrong (loading a config refuses unknown prefixes).
    except Exception:  # noqa: BLE001
        return []
    return [
        name
        for name in needed
        if not name.endswith(NOT_SECRET_SUFFIXES)
        and not any(os.environ.get(alias) for alias in (name, *ALIASES.get(name, ())))
    ]


def require_credentials(model: str, role: str, api_base: str | None = None) -> None:
    missing = missing_credentials(model, api_base)
    if missing:
        either = " or ".join(missing)
        raise UserError(
            f"models.{role} {model}: {either} is not set; export it in the shell that runs "
            f"reeval (a config never holds a secret), or use a local model. Nothing was run."
        )
