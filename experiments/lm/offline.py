"""Offline settings for the code paths that import hub- or provider-aware libraries.

Without them, imports and first calls of litellm, huggingface_hub, datasets and mlflow
hang on network timeouts on a machine that reaches only package registries. They are
defaults (setdefault): a user with a network can still override each one.
"""

from __future__ import annotations

import os

from experiments.paths import cache_dir

OFFLINE_DEFAULTS = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "1",
}


# Kept even online: a local cost map and no telemetry never hurt.
ALWAYS = ("LITELLM_LOCAL_MODEL_COST_MAP", "MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK")


def apply_offline_defaults() -> None:
    """REEVAL_ONLINE=1 leaves the hub switches alone, for users who load models or data from a hub."""
    online = os.environ.get("REEVAL_ONLINE", "").lower() in {"1", "true", "yes"}
    for key, value in OFFLINE_DEFAULTS.items():
        if not online or key in ALWAYS:
            os.environ.setdefault(key, value)
    # DSPy reads DSPY_CACHEDIR when it is first imported: keep its call cache with our caches.
    os.environ.setdefault("DSPY_CACHEDIR", str(cache_dir() / "dspy"))
