"""Whether a name is a real one the shipped Wikipedia pool knows: a made-up name for a swap must not be."""

from __future__ import annotations

import re
from functools import lru_cache

from experiments.data.loaders import load_passages
from experiments.data.registry import DATASETS


@lru_cache(maxsize=1)
def pool_text() -> tuple[str, list[int]]:
    """The pool as one text, each passage its title, a newline and its text, passages joined by newlines; and
    where each passage starts. Loaded once per process for every reader of the pool's words."""
    passages = load_passages(DATASETS["wiki_passages"][0])
    texts = [f"{t}\n{x}" for t, x in zip(passages["title"], passages["text"], strict=True)]
    starts, at = [], 0
    for text in texts:
        starts.append(at)
        at += len(text) + 1
    return "\n".join(texts), starts


def known_in_pool(name: str) -> bool:
    """The full name, as whole words, in any title or text of the pool."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", pool_text()[0]) is not None
