"""MkDocs hook: the root's `CHANGELOG.md` and `CONTRIBUTING.md` as the site's `changelog.md` and `contributing.md`.

MkDocs only reads pages inside `docs_dir`; these files stay at the root (where a clone and a code host show
them) and are added to the site at build time, their links to `docs/…` pages rewritten relative to `docs/`.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"changelog.md": ROOT / "CHANGELOG.md", "contributing.md": ROOT / "CONTRIBUTING.md"}


def page_text(source: Path) -> str:
    return re.sub(r"\]\(docs/", "](", source.read_text(encoding="utf-8"))


def on_files(files, config):
    for page, source in PAGES.items():
        files.append(File.generated(config, page, content=page_text(source)))
    return files
