"""Reviews follow a stage that ran again, or another stage holding the same cases, case by case.

A bench stage whose inputs changed (a new generator version, judge or seed list) runs again from the
call cache in a fresh directory. A verdict speaks for a case as it was read, and the review sample's
strata (their populations weight the prediction-powered estimate) for the cases as they were judged.
So: when every case reads the same as before, status included, the review directory is copied whole.
Otherwise a new sample is drawn on the new cases (same size and seed), each sampled case that reads
exactly as a reviewed one keeps that verdict, and `reeval review` asks only for the rest.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

from experiments.review.sample import READ_FIELDS, SAMPLE_FILE, open_sample, read_key, read_sample
from experiments.review.verdict_log import VerdictLog
from experiments.review.verdicts import REVIEWERS_FILE, load_verdicts
from experiments.run_store import RunStore

logger = logging.getLogger(__name__)

# What a reviewer saw and what the sample's strata rest on; timings and attempts may differ.
CONTENT_FIELDS = ("id", "status", *READ_FIELDS)
CARRIED = "[verdict carried from the identical case of a superseded run]"


def _records(run_dir: Path) -> list[dict]:
    """The run's current cases, as the run store reads them (each seed's latest attempt)."""

    return RunStore(run_dir.name, root=run_dir.parent).records()


def _content(record: dict, fields: tuple[str, ...] = CONTENT_FIELDS) -> tuple:
    return tuple(json.dumps(record.get(f), sort_keys=True) for f in fields)


def carry_reviews(old_dir: Path, new_dir: Path) -> int:
    """Carry old_dir's reviews into new_dir; the number of verdicts carried (of sampled cases, when the cases
    changed)."""

    review = old_dir / "review"
    files = sorted(review.glob("*.jsonl")) if review.is_dir() else []
    if not files or (new_dir / "review").exists():
        return 0
    old, new = _records(old_dir), _records(new_dir)
    verdicts = load_verdicts(files)
    if [_content(r) for r in old] == [_content(r) for r in new]:
        shutil.copytree(review, new_dir / "review")
        logger.info("%s: the cases are unchanged; their reviews carried over from %s", new_dir.name, old_dir)
        return len(verdicts)
    drawn = read_sample(review / SAMPLE_FILE) if (review / SAMPLE_FILE).exists() else {}
    run_id = f"{new_dir.parent.name}/{new_dir.name}"
    sample, _ = open_sample(new_dir / "review", new, run_id, drawn.get("size"), drawn.get("seed"))
    if (review / REVIEWERS_FILE).exists():  # who gave the verdicts travels with them
        shutil.copy2(review / REVIEWERS_FILE, new_dir / "review" / REVIEWERS_FILE)
    # What a reader saw, status aside: a verdict on the text holds though the judge now decides otherwise, and
    # for any case that reads the same (another stage of a comparison gives the same case another id).
    read = {r["id"]: read_key(r) for r in old}
    by_text: dict[tuple, list] = {}
    for verdict in verdicts:
        if verdict.id in read:
            by_text.setdefault(read[verdict.id], []).append(verdict)
    now = {r["id"]: read_key(r) for r in new}
    carried = 0
    for entry in sample["cases"]:
        given = by_text.get(now.get(entry["id"]), [])
        for verdict in given:
            note = f"{verdict.note} {CARRIED}".strip() if CARRIED not in verdict.note else verdict.note
            VerdictLog(new_dir / "review", verdict.annotator).append(entry["id"], verdict.verdict, note, at=verdict.at)
        carried += bool(given)
    logger.warning(
        "%s: %d of the new sample's %d cases kept their verdicts (identical to reviewed ones); "
        "`reeval review %s` asks for the rest",
        new_dir.name,
        carried,
        len(sample["cases"]),
        run_id,
    )
    return carried
