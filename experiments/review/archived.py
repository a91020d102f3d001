"""Archived verdicts made a run's review: the lines of a reading kept apart from any run folder
(docs/reviews/independent_reading.jsonl: `run`, `id`, `verdict`, `note`, `reader`, `kind`, `at`) written into
the run's `review/` as the review page would have (`<reader>.jsonl`, and each reader's kind in
`reviewers.json`), so `reeval validity` and `reeval export --cases reviewed-valid` read them.

Only the lines of that run whose case is in its `cases.jsonl` are taken. A reader whose review file already
holds other verdicts, or whom `reviewers.json` records as another kind, is refused rather than merged: two
readings of one case by one reader cannot both stand, and two readers are never merged under one name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.failures import UserError
from experiments.review.verdicts import REVIEWERS_FILE

REVIEW_DIR = "review"
CASES_FILE = "cases.jsonl"
CONFIG_FILE = "config.json"


@dataclass
class ImportedReview:
    run: str  # the run's name in the archive's `run` field
    by_reader: dict[str, int] = field(default_factory=dict)  # reader -> verdicts written
    unchanged: list[str] = field(default_factory=list)  # readers whose file already held exactly these
    not_in_run: int = 0  # lines of the run whose case id its cases.jsonl does not hold


def archived_name(run_dir: Path) -> str:
    """The name an archive gives a run folder: its own, or `<bench>/<stage>` for a stage inside a run folder."""
    run_dir = run_dir.resolve()
    if (run_dir.parent / CONFIG_FILE).is_file():
        return f"{run_dir.parent.name}/{run_dir.name}"
    return run_dir.name


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"{path}: cannot read the verdicts ({e.strerror})") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise UserError(f"{path}:{number}: invalid JSON ({e.msg})") from None
        if not isinstance(row, dict) or not {"run", "id", "verdict", "reader"} <= set(row):
            raise UserError(f"{path}:{number}: expected an object with run, id, verdict and reader")
        rows.append(row)
    return rows


def _case_ids(run_dir: Path) -> set[str]:
    path = run_dir / CASES_FILE
    if not path.is_file():
        raise UserError(f"{run_dir}: no {CASES_FILE}: not a run folder")
    return {str(json.loads(line)["id"]) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def import_verdicts(run_dir: Path, verdicts: Path, run_name: str | None = None) -> ImportedReview:
    """Write the archive's verdicts on the run in `run_dir` into its `review/`; see the module docstring."""
    run_dir = Path(run_dir)
    name = run_name or archived_name(run_dir)
    ids = _case_ids(run_dir)
    rows = _lines(Path(verdicts))
    mine = [r for r in rows if str(r["run"]) == name]
    if not mine:
        runs = sorted({str(r["run"]) for r in rows})
        shown = ", ".join(runs[:5]) + (", …" if len(runs) > 5 else "")
        raise UserError(f"{verdicts}: no verdict on run {name!r} (it holds verdicts on {len(runs)} runs: {shown})")
    result = ImportedReview(name)
    by_reader: dict[str, list[dict[str, Any]]] = {}
    kinds: dict[str, str] = {}
    for row in mine:
        if str(row["id"]) not in ids:
            result.not_in_run += 1
            continue
        reader = str(row["reader"])
        line = {"id": str(row["id"]), "annotator": reader, "verdict": row["verdict"]}
        line |= {k: row[k] for k in ("note", "at") if row.get(k)}
        by_reader.setdefault(reader, []).append(line)
        if row.get("kind"):
            kinds.setdefault(reader, str(row["kind"]))
    review = run_dir / REVIEW_DIR
    known_path = review / REVIEWERS_FILE
    known = json.loads(known_path.read_text(encoding="utf-8")) if known_path.exists() else {}
    for reader, kind in kinds.items():  # two readers are never merged under one name
        if known.get(reader, kind) != kind:
            raise UserError(f"{known_path}: {reader} is recorded as {known[reader]!r}, the archive says {kind!r}")
    texts = {
        reader: "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines) for reader, lines in by_reader.items()
    }
    for reader, text in texts.items():  # every refusal before any write
        path = review / f"{reader}.jsonl"
        if path.exists() and path.read_text(encoding="utf-8") != text:
            raise UserError(f"{path}: already holds other verdicts of {reader}; remove it to import the archive's")
    review.mkdir(exist_ok=True)
    for reader, text in texts.items():
        path = review / f"{reader}.jsonl"
        if path.exists():
            result.unchanged.append(reader)
            continue
        path.write_text(text, encoding="utf-8")
        result.by_reader[reader] = len(by_reader[reader])
    merged = {**kinds, **known}
    if merged != known:
        known_path.write_text(json.dumps(dict(sorted(merged.items())), indent=1, ensure_ascii=False) + "\n")
    return result
