"""One annotator's verdict file, ``runs/<run-id>/review/<annotator>.jsonl``: append-only, fsynced.

Every verdict is one JSON line, written, flushed and fsynced before the page is told it was
saved, so a killed server loses nothing an annotator was shown as answered. Changing a verdict
appends a new line; :func:`experiments.review.load_verdicts` lets the later line win. Each
annotator has their own file, so two annotators at once never write to the same file.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from datetime import datetime, timezone
from pathlib import Path

from experiments.review.verdicts import VERDICTS, Verdict, load_verdicts
from experiments.run_store import repair_torn_tail

logger = logging.getLogger(__name__)

# The name becomes a file name: letters, digits, '_', '.', '-' only, not starting with a dot
# (no path separators, no '..', no hidden files).
ANNOTATOR_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}")
MAX_NOTE = 4000


class AnnotatorNameError(ValueError):
    pass


def check_annotator(name: str) -> str:
    if not isinstance(name, str) or not ANNOTATOR_RE.fullmatch(name):
        raise AnnotatorNameError(
            f"annotator name {name!r} is not allowed: use 1-64 of A-Z a-z 0-9 _ . - "
            "(not starting with a dot); it names the verdict file"
        )
    return name


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


class VerdictLog:
    def __init__(self, review_dir: Path, annotator: str):
        self.annotator = check_annotator(annotator)
        self.path = Path(review_dir) / f"{annotator}.jsonl"
        self._lock = threading.Lock()

    def read(self) -> dict[str, Verdict]:
        """case id -> the annotator's latest verdict."""
        if not self.path.exists():
            return {}
        self._repair_tail()
        return {v.id: v for v in load_verdicts(self.path) if v.annotator == self.annotator}

    def _repair_tail(self) -> None:
        repair_torn_tail(self.path)

    def append(self, case_id: str, verdict: str, note: str = "", at: str | None = None) -> Verdict:
        """Write one verdict line and fsync it; ``at`` defaults to now (an import keeps its own times)."""
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
        note = str(note or "").strip()[:MAX_NOTE]
        line = {
            "id": str(case_id),
            "annotator": self.annotator,
            "verdict": verdict,
            "note": note,
            "at": at or utc_now(),
        }
        text = json.dumps(line, ensure_ascii=False) + "\n"
        with self._lock:
            created = not self.path.exists()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            if created:  # the new directory entry must survive a crash too
                dir_fd = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
        return Verdict(
            id=line["id"], annotator=self.annotator, verdict=verdict, note=note, at=line["at"], source=str(self.path)
        )
