"""MkDocs hook: `CHANGELOG.md` from the repository root as the site's `changelog.md`.

MkDocs only reads pages inside `docs_dir`; the changelog stays at the root (where a clone shows it) and
is added to the site at build time, its links to `docs/…` pages rewritten relative to `docs/`.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "CHANGELOG.md"
PAGE = "changelog.md"


def page_text() -> str:
    text = SOURCE.read_text(encoding="utf-8")
    return re.sub(r"\]\(docs/", "](", text)


def on_files(files, config):
    files.append(File.generated(config, PAGE, content=page_text()))
    return files
