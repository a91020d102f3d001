"""MkDocs hook: `CONTRIBUTING.md` from the repository root as the site's `contributing.md`.

The guide stays at the root, where a clone and a code host show it, and is added to the site at build time,
its links to `docs/…` pages rewritten relative to `docs/` as the changelog's are (docs/hooks/changelog.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "CONTRIBUTING.md"
PAGE = "contributing.md"


def page_text() -> str:
    text = SOURCE.read_text(encoding="utf-8")
    return re.sub(r"\]\(docs/", "](", text)


def on_files(files, config):
    files.append(File.generated(config, PAGE, content=page_text()))
    return files
