"""Fresh held-out rows drawn by the kind of their answer, written as a JSONL file `reeval run --source` reads.

    python3 scripts/draw_rows.py OUT.jsonl --groups "places and organisations" "works and things" \
        --fresh-at COMMIT [--skip 2229-2304 5128-5339] [--first N]

NQ asks mostly for dates and people: a plain run of 260 held-out rows gave 14 accepted swaps that were neither a
year, a number nor a person, so a reading of places or works draws its rows by group. A row is kept when it
passes ReEval's filters (`max_evidence_words: 400`, as the every-kind configs), its answer, typed where it
stands in its passage as the answer swap types it (programs/answer_kinds.py), is of one of the groups, and no
tracked file quoted its question at `--fresh-at`. Rows are the shipped file's, one JSON object a line, in held-out
order; `--skip` leaves held-out index ranges kept for other readings.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.data.loaders import load_qa  # noqa: E402
from experiments.data.registry import DATASETS  # noqa: E402
from experiments.filters import apply_reeval_filters  # noqa: E402
from experiments.splits import select_split  # noqa: E402
from programs.answer_kinds import type_in  # noqa: E402
from programs.entity_tagger import tagger  # noqa: E402
from programs.person_names import is_first_name  # noqa: E402
from scripts.measure_acceptance import quoted_text  # noqa: E402

GROUPS = ("people", "places and organisations", "works and things", "dates and numbers")


def answer_group(tag: Callable, example) -> str | None:
    """The reading group of the example's answer in its passage; None when no answer is found there."""
    typed = type_in(tag, example.context, list(example.answers), example.question, is_first_name)
    return typed.group if typed is not None else None


def drawn(rows: list, groups: Iterable[str], quoted: str, skip: list[tuple[int, int]], tag: Callable) -> list[int]:
    """Held-out indexes of the rows kept, in order."""
    wanted = set(groups)
    kept = []
    for i, row in enumerate(rows):
        if any(a <= i <= b for a, b in skip) or row.question.lower().strip() in quoted:
            continue
        passed, _ = apply_reeval_filters([row], max_evidence_words=400)
        if passed and answer_group(tag, passed[0]) in wanted:
            kept.append(i)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--groups", nargs="+", choices=GROUPS, required=True)
    parser.add_argument("--fresh-at", required=True, help="rows whose question tracked files quoted there are left")
    parser.add_argument("--skip", nargs="*", default=[], help="held-out index ranges left for other readings, A-B")
    parser.add_argument("--first", type=int, default=None, help="at most this many rows")
    args = parser.parse_args()
    path = DATASETS["nq"][0]
    rows = select_split(load_qa(path, source="nq"), "nq", "held_out")
    skip = [tuple(int(x) for x in r.split("-")) for r in args.skip]
    kept = drawn(rows, args.groups, quoted_text(args.fresh_at), skip, tagger())[: args.first]
    raw = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            raw[row["id"]] = json.dumps(row) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(raw[rows[i].id] for i in kept), encoding="utf-8")
    print(f"{args.out}: {len(kept)} rows, held-out indexes {kept[0] if kept else '-'}–{kept[-1] if kept else '-'}")


if __name__ == "__main__":
    main()
