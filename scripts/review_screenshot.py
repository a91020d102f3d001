"""Screenshot of the review page for the README (docs/review_page.png).

Serves a small fixture run (tests/review_cases.py: answer-swap cases on Natural Questions
paragraphs, plus one case of each other task) in a temporary folder, answers the Saturn answer-swap
case with the keyboard in Debian's chromium, and captures the page with the judge revealed.

    python3 scripts/review_screenshot.py [OUT.png]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.review.server import ReviewSession, create_app  # noqa: E402
from tests.browser import chromium_page, running_server  # noqa: E402
from tests.review_cases import review_records, write_run  # noqa: E402

SHOWN = "-1012780730954675617:swap"


def main(out: Path) -> None:
    records = [r for r in review_records() if r["id"] != "xss-1:swap"]  # payloads are for the tests
    for record in records:
        if record.get("options"):
            record["options"] = ["luster", "mass", "weight", "hardness"]
            record["question"] = record["question"].split(" <svg")[0]
    with tempfile.TemporaryDirectory() as tmp:
        write_run(Path(tmp), "nq_answer_swap-3f9c2a1b7e", records)
        session = ReviewSession.open("nq_answer_swap-3f9c2a1b7e", "alice", runs_root=Path(tmp))
        index = [c["id"] for c in session.cases].index(SHOWN)
        # Two cases answered before, so the progress bar and the strip show progress.
        for case in session.cases[:3]:
            if case["id"] != SHOWN:
                session.record(str(case["id"]), "valid", "")
                if session.answered == 2:
                    break
        with running_server(create_app(session)) as base, chromium_page(viewport=(1280, 820)) as page:
            page.goto(f"{base}/case/{index}")
            page.keyboard.press("n")
            page.keyboard.type("Swap is clean; nothing else in the passage places Saturn.")
            page.keyboard.press("Escape")
            with page.expect_navigation():
                page.keyboard.press("v")
            page.wait_for_selector("#judge")
            page.mouse.move(0, 0)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True)
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "review_page.png")
