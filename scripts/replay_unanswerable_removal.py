"""Replay the unanswerable removal settings on the cases already read blind, with the shipped program.

Each read `faitheval/20`–`/21` case is made again from its original passage under each setting (`removal: drop`, no
pivot call). A case read valid counts valid if the setting still accepts it; a case read invalid counts valid
when no span its reader quoted as the giveaway is left in the new text, invalid otherwise. An estimate, not a
reading: a new text can fail in ways its reader never saw, so a setting chosen here is read blind again on
fresh rows before any figure is reported.

    python3 scripts/replay_unanswerable_removal.py
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from programs.faitheval import Unanswerable  # noqa: E402
from scripts.measure_general_checks import read_unanswerable  # noqa: E402

# The readings the faitheval/22 removal was chosen on; its own fresh reading is the test of that choice.
REPLAYED = ("faitheval/20", "faitheval/21")
SETTINGS = {
    "lures kept, min_kept 0.3 (faitheval/21)": {"lures": "keep", "min_kept": 0.3},
    "lures removed, min_kept 0.3": {"lures": "remove", "min_kept": 0.3},
    "lures removed, min_kept 0.2 (faitheval/22)": {"lures": "remove", "min_kept": 0.2},
}


def quoted_spans(note: str) -> list[str]:
    quotes = re.findall(r'"([^"]{6,})"', note)
    return [p.strip()[:25] for q in quotes for p in re.split(r"\.\.\.|…", q) if len(p.strip()) > 5]


def read_cases() -> list[tuple[dict, dict]]:
    return [(v, r) for v, r in read_unanswerable() if r.get("program_version") in REPLAYED]


def main() -> None:
    cases = read_cases()
    print(f"{len(cases)} read cases of {', '.join(REPLAYED)}\n")
    print("| setting | accepted | of them valid (estimate) | share |\n|---|---:|---:|---:|")
    for name, options in SETTINGS.items():
        program = Unanswerable(removal="drop", **options)
        counts: Counter = Counter()
        for v, r in cases:
            out = program(question=r["question"], context=r["original_context"], answers=r["original_answers"])
            if out.rejection:
                continue
            spans = quoted_spans(v["note"])
            valid = v["verdict"] == "valid" or (bool(spans) and not any(s in out.context for s in spans))
            counts[valid] += 1
        accepted = counts[True] + counts[False]
        print(f"| {name} | {accepted} | {counts[True]} | {counts[True] / accepted:.1%} |")


if __name__ == "__main__":
    main()
