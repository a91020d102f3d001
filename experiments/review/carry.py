"""Reviews follow a stage that ran again only when its cases did not change.

A bench stage whose inputs changed (a new generator version, judge or seed list) runs again from the
call cache in a fresh directory. Verdicts and the review sample speak for the cases as they were read
and for the sample's strata (their populations weight the prediction-powered estimate), so they are
carried over only when every case reads the same as before, status included; otherwise the new cases
need a review of their own.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

logger = logging.getLogger(__name__)

# What a reviewer saw and what the sample's strata rest on; timings and attempts may differ.
CONTENT_FIELDS = ("id", "status", "question", "context", "answers", "original_context", "original_answers",
                  "options", "judge_kind")


def _cases(run_dir: Path) -> dict[str, tuple]:
    path = run_dir / "cases.jsonl"
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            out[str(record.get("id"))] = tuple(json.dumps(record.get(f), sort_keys=True) for f in CONTENT_FIELDS)
    return out


def carry_reviews(old_dir: Path, new_dir: Path) -> bool:
    """Copy old_dir/review into new_dir when both hold the same cases; True when carried."""
    review = old_dir / "review"
    if not review.is_dir() or (new_dir / "review").exists():
        return False
    if _cases(old_dir) != _cases(new_dir):
        logger.warning("%s: the cases changed since they were reviewed; the reviews stay with the old cases "
                       "in %s", new_dir.name, old_dir)
        return False
    shutil.copytree(review, new_dir / "review")
    logger.info("%s: the cases are unchanged; their reviews carried over from %s", new_dir.name, old_dir)
    return True
