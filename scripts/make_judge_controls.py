"""Make the judge's held-out control cases of a QA source and store them under data/judge_controls/, where every
judged run's opening calibration reads them (experiments/judging/control_set.py).

    python3 scripts/make_judge_controls.py [source]   # default: nq

Run it again after a change to how controls are made (experiments/judging/controls.py, or the checks and span
edits it uses): tests/test_judge.py holds the stored set to what the code makes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's code and data/, whichever checkout is installed

from experiments.data.files import content_sha256  # noqa: E402
from experiments.data.registry import resolve_dataset  # noqa: E402
from experiments.judging.control_set import PER_CONDITION, write_controls  # noqa: E402
from experiments.judging.controls import held_out_controls  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", default="nq", help="a shipped data set's name or a QA JSONL file")
    args = parser.parse_args()
    controls = held_out_controls(args.source, PER_CONDITION)
    path = write_controls(args.source, content_sha256(resolve_dataset(args.source).path), controls)
    print(f"{path}: {len(controls)} controls ({PER_CONDITION} per condition at most)")


if __name__ == "__main__":
    main()
