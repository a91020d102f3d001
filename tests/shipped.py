"""The first rows of the shipped NQ file as a file of their own: loading all 8,500 rows costs more
seconds than a test that needs a handful should spend. Same rows, same loader, same filters."""

import gzip
from pathlib import Path

from experiments.data.registry import DATA_DIR


def nq_head(folder: Path, rows: int) -> Path:
    path = folder / "nq.jsonl"
    with gzip.open(DATA_DIR / "nq.jsonl.gz", "rt", encoding="utf-8") as shipped:
        path.write_text("".join(next(shipped) for _ in range(rows)), encoding="utf-8")
    return path


def nq_row(question: str) -> dict:
    """The shipped NQ row asking `question` (issue regressions name their seeds by question text)."""
    import json

    with gzip.open(DATA_DIR / "nq.jsonl.gz", "rt", encoding="utf-8") as shipped:
        for line in shipped:
            if f'"question":"{question}"' in line:
                return json.loads(line)
    raise KeyError(question)
