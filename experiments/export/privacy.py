"""What must not leave this machine in an export: provider keys, and the paths of this machine's folders.

A case record can carry text that came back from outside (a provider's error repeating a key) or that
names a local folder (an error message quoting a cache path). Every string of an exported row goes through
:meth:`Scrubber.text`, and :func:`leaks` reads every written file back, so a field added later that escapes
the first pass is still caught before the export is reported done.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.paths import cache_dir, project_root, runs_dir
from experiments.secrets import MASK, secret_values

# A path this short ("/", "/tmp") is also ordinary text: only longer ones are replaced and looked for.
MIN_PATH_LENGTH = 5


def machine_paths(extra: tuple[Path, ...] = ()) -> dict[str, str]:
    """Absolute folders of this machine, longest first (a folder inside another is replaced before it),
    each with the placeholder it becomes."""
    named = [
        (runs_dir(), "<runs>"),
        (cache_dir(), "<cache>"),
        (project_root(), "<project>"),
        (Path(tempfile.gettempdir()), "<tmp>"),
        (Path.home(), "~"),
        *((p, "<runs>") for p in extra),
    ]
    out: dict[str, str] = {}
    for path, placeholder in named:
        for form in {str(path), str(path.resolve())}:
            if len(form) >= MIN_PATH_LENGTH:
                out.setdefault(form, placeholder)
    return dict(sorted(out.items(), key=lambda kv: len(kv[0]), reverse=True))


@dataclass
class Scrubber:
    paths: dict[str, str] = field(default_factory=machine_paths)
    secrets: list[str] = field(default_factory=secret_values)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, MASK)
        for path, placeholder in self.paths.items():
            value = value.replace(path, placeholder)
        return value

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value


def _file_text(path: Path) -> str:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return json.dumps(pq.read_table(path).to_pylist(), ensure_ascii=False, default=str)
    return path.read_text(encoding="utf-8", errors="replace")


def leaks(folder: Path, scrubber: Scrubber) -> list[str]:
    """ "<file>: <what>" for every key value or machine path found in a file under `folder`."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = _file_text(path)
        where = path.relative_to(folder)
        found += [f"{where}: a secret value" for s in scrubber.secrets if s in text]
        found += [f"{where}: the local path {p}" for p in scrubber.paths if p in text]
    return found
