"""Whether a name is a real one the shipped Wikipedia pool knows: a made-up name for a swap must not be."""

from __future__ import annotations

import re
from functools import lru_cache

from experiments.data.loaders import load_passages
from experiments.data.registry import DATASETS


@lru_cache(maxsize=1)
def _pool_text() -> str:
    passages = load_passages(DATASETS["wiki_passages"][0])
    return "\n".join(passages["title"]) + "\n" + "\n".join(passages["text"])


def known_in_pool(name: str) -> bool:
    """The full name, as whole words, in any title or text of the pool."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", _pool_text()) is not None
