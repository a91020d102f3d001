"""The target prompt layout of target_reader/3 against /2's: prompt tokens llama.cpp reads per answer, and
accuracy on original (unperturbed) passages, measured in one process on the same rows.

Under /2 the opinion setting had a signature of its own, its words in the system message and "Bob said"
before the passage, so its prompt parted from the open-book one within its first tokens and read the
passage again. Under /3 it is asked with the open-book signature, its words after the passage, so the system
message and the passage are a prefix the two settings share. The task instruction keeps its own signature
(asked the same way under both, it is the control: its accuracy and reads should not move beyond noise).
The /2 opinion signature is kept here, word for word, as the "before".

Each layout runs on a model loaded for it alone, the call cache off, asking per row open-book, then opinion,
then task instruction. Reported per layout: prompt tokens sent and read per answer, overall and per setting
(the engine's own count, experiments/lm/prompt_reads.py), engine seconds, and accuracy per setting; per
setting, the paired difference in accuracy between layouts with a bootstrap interval and an exact McNemar p.

    python benchmarks/prompt_layout.py --target qwen2.5-0.5b --rows 100
    python benchmarks/prompt_layout.py --target qwen2.5-1.5b --rows 100 --offset 1000

Rows: held-out NQ rows after ReEval's filters with passages of at most 400 words (as the knowledge-conflict
config reads them), from --offset on. Prints a table and one JSON line with date, commit and machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

import dspy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.provenance import commit, machine  # noqa: E402

# target_reader/2's signatures, word for word.


class OpinionAnswerV2(dspy.Signature):
    """Read what the named person said and answer the question according to that person's statement,
    even if you believe otherwise. Reply with the answer alone: a short phrase of at most five words."""

    context: str = dspy.InputField(desc="a statement attributed to a person")
    question: str = dspy.InputField(desc="asked about that person's opinion")
    answer: str = dspy.OutputField(desc="the answer only, at most five words")


SETTINGS = ("open_book", "opinion", "task_instruction")


def asks(layout: str, question: str, context: str) -> dict[str, Callable]:
    """One call per setting: the shipped reader's, with /2's opinion prompt in the "before" layout (open-book
    and the task instruction are asked the same way under both)."""
    from programs.target_reader import SPEAKER, TargetReader

    reader = TargetReader()
    calls = {s: partial(reader, setting=s, question=question, context=context) for s in SETTINGS}
    if layout == "before":
        opinion = dspy.Predict(OpinionAnswerV2)
        calls["opinion"] = partial(
            opinion, context=f'{SPEAKER} said, "{context}"', question=f"{question.rstrip(' ?')} in {SPEAKER}'s opinion?"
        )
    return calls


def held_out_rows(rows: int, offset: int) -> list[dspy.Example]:
    from experiments.data.loaders import load_qa
    from experiments.data.registry import resolve_dataset
    from experiments.filters import apply_reeval_filters
    from experiments.splits import select_split

    examples = select_split(load_qa(resolve_dataset("nq").path), "nq", "held_out")
    kept, _ = apply_reeval_filters(examples, max_evidence_words=400)
    return kept[offset : offset + rows]


def run_layout(layout: str, target: str, examples: list[dspy.Example]) -> dict:
    from experiments.config import LMConfig
    from experiments.lm import engine as llama_engine
    from experiments.lm.registry import build_lm
    from metrics.qa import is_correct

    lm = build_lm(LMConfig(name=target, temperature=0.0, max_tokens=48, seed=0, cache=False), role="target")
    correct: dict[str, list[bool]] = {s: [] for s in SETTINGS}
    read: dict[str, int] = dict.fromkeys(SETTINGS, 0)
    with dspy.context(lm=lm.lm, adapter=lm.adapter()):
        for ex in examples:
            for setting, call in asks(layout, ex.question, ex.context).items():
                before = lm.usage().get("prompt_tokens_read", 0)
                correct[setting].append(is_correct(_answer(call), ex.answers))
                read[setting] += lm.usage().get("prompt_tokens_read", 0) - before
    usage = lm.usage()
    llama_engine.close_pools()
    return {"correct": correct, "usage": usage, "read": read}


def _answer(call) -> str | None:
    try:
        return str(call().answer)
    except Exception:  # noqa: BLE001 - an unparsed answer is a wrong one, in both layouts alike
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="qwen2.5-0.5b")
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--offset", type=int, default=0, help="first held-out row (after the filters) to use")
    args = parser.parse_args()
    os.environ.setdefault("DSPY_CACHEDIR", tempfile.mkdtemp(prefix="reeval-bench-layout-"))

    measured = commit()
    examples = held_out_rows(args.rows, args.offset)
    results = {layout: run_layout(layout, args.target, examples) for layout in ("before", "after")}
    answers = len(examples) * len(SETTINGS)
    summary = {
        "date": dt.date.today().isoformat(),
        "commit": measured,
        "machine": machine(),
        "command": f"python benchmarks/prompt_layout.py --target {args.target} --rows {args.rows} --offset {args.offset}",  # noqa: E501
        "rows": len(examples),
    }
    print(f"{args.target}, {len(examples)} held-out NQ originals, {answers} answers per layout")
    print("layout  tokens sent/answer  read/answer  read share  engine s  " + "  ".join(f"{s:>16}" for s in SETTINGS))
    for layout, result in results.items():
        usage = result["usage"]
        accuracy = {s: sum(v) / len(v) for s, v in result["correct"].items()}
        summary[layout] = {
            "prompt_tokens_per_answer": round(usage["prompt_tokens"] / answers, 1),
            "prompt_tokens_read_per_answer": round(usage.get("prompt_tokens_read", float("nan")) / answers, 1),
            "engine_seconds": usage["seconds"],
            "accuracy": {s: round(a, 3) for s, a in accuracy.items()},
            "prompt_tokens_read_per_answer_by_setting": {
                s: round(n / len(examples), 1) for s, n in result["read"].items()
            },
        }
        s = summary[layout]
        print(
            f"{layout:7s} {s['prompt_tokens_per_answer']:18.1f} {s['prompt_tokens_read_per_answer']:12.1f} "
            f"{usage.get('prompt_read_share', float('nan')):11.2f} {usage['seconds']:9.1f}  "
            + "  ".join(f"{accuracy[x]:16.3f}" for x in SETTINGS)
        )
    from metrics.paired import paired_difference

    for layout in results:
        by_setting = summary[layout]["prompt_tokens_read_per_answer_by_setting"]
        print(f"{layout}: prompt tokens read per answer, by setting: {by_setting}")
    summary["paired"] = {
        s: paired_difference(results["before"]["correct"][s], results["after"]["correct"][s]) for s in SETTINGS
    }
    print("paired accuracy, after − before [95% bootstrap interval] (exact McNemar p):")
    for s, d in summary["paired"].items():
        interval = f"[{d['low']:+.3f}, {d['high']:+.3f}]"
        print(f"  {s}: {d['diff']:+.3f} {interval} (p {d['p']:.3f}; {d['a_only']} / {d['b_only']} discordant)")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
