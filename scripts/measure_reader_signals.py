"""The pivot asked as a reader, on unanswerable cases already read blind: does what it says separate the cases read
valid from those read invalid? Two prompts, each a signal that was tried and not kept (CHANGELOG.md, faitheval/22):

- `closest`: the question and the perturbed passage; the model gives the closest thing to an answer the passage
  offers and whether it is exact, approximate or none;
- `trace`: also the removed sentences and the removed answer; the model quotes where the rest still gives it away.

Each reply is written to OUT (JSON lines, resumable) and the table of replies against verdicts printed.

    python3 scripts/measure_reader_signals.py closest OUT.jsonl [--limit N]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dspy  # noqa: E402

from experiments.lm import registry  # noqa: E402
from experiments.lm.settings import LMConfig  # noqa: E402
from programs.faitheval import gives_answer  # noqa: E402
from programs.sentences import split_sentences  # noqa: E402
from scripts.measure_general_checks import read_unanswerable  # noqa: E402


class ClosestAnswer(dspy.Signature):
    """Answer the question using only the passage. If the passage does not state the exact answer, give the
    closest thing it offers: a broader place, a year or period, a description of who or what, or another
    candidate a reader could take for the answer. Say "none" only if the passage offers nothing of the kind."""

    question: str = dspy.InputField()
    passage: str = dspy.InputField()
    closest: str = dspy.OutputField(desc="a short span copied from the passage, or none")
    how: Literal["exact", "approximate", "none"] = dspy.OutputField(
        desc="does the passage give the exact answer, an approximate one, or nothing"
    )


class RemainingTrace(dspy.Signature):
    """The sentences that answer the question were removed from a passage. Find where the remaining passage
    still gives the answer away: the same answer in other words, a broader or approximate answer (a country
    instead of a town, a year instead of a date, a period instead of a year), a description that identifies
    it, a way to work it out, or another answer to the question. Quote those words exactly from the remaining
    passage, or write "none" if the remaining passage gives nothing away."""

    question: str = dspy.InputField()
    answer: str = dspy.InputField(desc="the answer the removed sentences gave")
    removed: str = dspy.InputField(desc="the removed sentences")
    remaining: str = dspy.InputField(desc="the passage after the removal")
    quote: str = dspy.OutputField(desc="words copied from the remaining passage that give the answer away, or none")
    gives_away: bool = dspy.OutputField()


def read_cases() -> list[tuple[dict, dict]]:
    """Read unanswerable cases, newest generator versions first, one per distinct text."""
    out, seen = [], set()
    for v, r in read_unanswerable():
        key = (r["question"], r["context"])
        if key not in seen:
            seen.add(key)
            out.append((v, r))
    out.sort(key=lambda vr: not str(vr[1].get("program_version", "")).startswith("faitheval/2"))
    return out


def ask(prompt: str, predictor, r: dict) -> dict:
    if prompt == "closest":
        o = predictor(question=r["question"], passage=r["context"])
        return {"closest": o.closest, "flagged": o.how != "none" and o.closest.strip().lower() != "none"}
    removed = " ".join(
        s.text for s in split_sentences(r["original_context"]) if gives_answer(s.text, r["original_answers"])
    )
    o = predictor(question=r["question"], answer=r["original_answers"][0], removed=removed, remaining=r["context"])
    return {"quote": o.quote, "flagged": bool(o.gives_away) and o.quote.strip().lower().strip('".') != "none"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("prompt", choices=("closest", "trace"))
    parser.add_argument("out", type=Path)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    done = {}
    if args.out.exists():
        done = {json.loads(x)["id"]: json.loads(x) for x in args.out.read_text().splitlines() if x.strip()}
    lm = registry.build_lm(LMConfig(name="qwen2.5-1.5b", max_tokens=120), "judge")
    predictor = dspy.Predict(ClosestAnswer if args.prompt == "closest" else RemainingTrace)
    counts: Counter = Counter()
    with dspy.context(lm=lm.lm, adapter=lm.adapter()), args.out.open("a", encoding="utf-8") as f:
        for v, r in read_cases()[: args.limit]:
            if v["id"] not in done:
                done[v["id"]] = {"id": v["id"], "run": v["run"], **ask(args.prompt, predictor, r)}
                f.write(json.dumps(done[v["id"]], ensure_ascii=False) + "\n")
                f.flush()
            counts[(v["verdict"] == "valid", done[v["id"]]["flagged"])] += 1
    print("| read | flagged | not flagged |\n|---|---:|---:|")
    for valid in (True, False):
        print(f"| {'valid' if valid else 'not valid'} | {counts[(valid, True)]} | {counts[(valid, False)]} |")


if __name__ == "__main__":
    main()
