"""The judge's held-out control cases as they ship: one stored set per QA source under `data/judge_controls/`.

Making controls reads the whole source and runs the answer checks and span edits on thousands of rows
(experiments/judging/controls.py); the controls depend on the code and the data alone, never on a run. So
they are made once, by `python3 scripts/make_judge_controls.py [source]`, and every judged run's opening
calibration reads the first n per condition of the stored set. A test holds the stored set to what the
code makes today.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from experiments.paths import project_root

KIND = "judge_controls"
# Controls per condition a stored set holds: the most `validation.calibration_controls` may ask for.
PER_CONDITION = 50


def controls_dir() -> Path:
    return project_root() / "data" / "judge_controls"


def control_set_path(source: str) -> Path:
    """The stored set made from `source`: a registry name, or a file named by its stem."""
    return controls_dir() / f"{Path(source).name.split('.')[0]}.jsonl.gz"


def read_header(source: str) -> dict:
    """What the stored set of `source` was made from and how many controls per condition it holds."""
    path = control_set_path(source)
    if not path.exists():
        raise FileNotFoundError(
            f"no stored judge controls for {source!r} ({path}); make them with "
            f"`python3 scripts/make_judge_controls.py {source}`"
        )
    with gzip.open(path, "rt", encoding="utf-8") as f:
        header = json.loads(f.readline())
    if header.get("kind") != KIND:
        raise ValueError(f"{path}: line 1 is not a {KIND} header")
    return header


def read_controls(source: str, n_per_condition: int) -> list[dict]:
    """The first `n_per_condition` controls of each condition, in stored order: the controls that making
    n per condition from the same seeds would give."""
    header = read_header(source)
    if n_per_condition > header["per_condition"]:
        raise ValueError(
            f"validation.calibration_controls: {n_per_condition} per condition asked; the stored set of "
            f"{source!r} holds {header['per_condition']}"
        )
    counts: dict[str, int] = {}
    out = []
    with gzip.open(control_set_path(source), "rt", encoding="utf-8") as f:
        next(f)
        for line in f:
            control = json.loads(line)
            condition = control["condition"]
            if counts.get(condition, 0) < n_per_condition:
                counts[condition] = counts.get(condition, 0) + 1
                out.append(control)
    return out


def write_controls(source: str, source_sha256: str, controls: list[dict]) -> Path:
    """`controls` (made with PER_CONDITION per condition) as the stored set of `source`."""
    path = control_set_path(source)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"kind": KIND, "source": source, "source_sha256": source_sha256, "per_condition": PER_CONDITION}
    tmp = path.with_suffix(".tmp")
    # mtime=0 and no file name: the same controls give the same bytes, so git sees no change when none changed
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        for row in (header, *controls):
            f.write((json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n").encode())
    tmp.replace(path)
    return path
