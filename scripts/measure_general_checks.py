"""What each general check of answer_swap/20 and faitheval/20 would have removed from cases already read blind.

For every case in docs/reviews/independent_reading.jsonl whose record can be found (docs/readings/, docs/reviews/
or runs/), the checks are run on the text the reader saw; a check's effect is the read-invalid cases it flags
(removed) against the read-valid ones it flags (lost).

    python3 scripts/measure_general_checks.py            # a Markdown table per task
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics.arithmetic import derivation  # noqa: E402
from metrics.traces import coarse_dates, conversions_after, weekdays_broken  # noqa: E402
from metrics.word_traces import derived_words, ordinals_of  # noqa: E402
from programs.faitheval import answer_is_subject  # noqa: E402
from programs.sentences import split_sentences  # noqa: E402
from programs.span_edit import replace_forms  # noqa: E402

READINGS = ROOT / "docs" / "reviews" / "independent_reading.jsonl"
PLACES = [ROOT / "docs" / "readings", ROOT / "docs" / "reviews", ROOT / "runs"]


def records(run: str) -> dict[str, dict]:
    """Case id -> record as read: a stage re-made by a newer generator keeps the read one in a superseded
    folder, which wins over the live one."""
    for place in PLACES:
        live = place / run / "cases.jsonl"
        older = sorted((place / run).parent.glob(Path(run).name + ".superseded-*/cases.jsonl"))
        if not live.exists() and not older:
            continue
        out: dict[str, dict] = {}
        for path in [p for p in [live] if p.exists()] + older:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    r = json.loads(line)
                    out[str(r.get("id"))] = r  # the last attempt of a case is the one read
        return out
    return {}


def read_unanswerable() -> list[tuple[dict, dict]]:
    """(verdict, record as read) of every read unanswerable case whose record is archived, in reading order."""
    cache: dict[str, dict] = {}
    out = []
    for line in READINGS.read_text(encoding="utf-8").splitlines():
        v = json.loads(line)
        if not v["id"].endswith(":unanswerable"):
            continue
        cache.setdefault(v["run"], records(v["run"]))
        r = cache[v["run"]].get(v["id"])
        if r and r.get("context"):
            out.append((v, r))
    return out


def unanswerable_checks(r: dict) -> dict[str, bool]:
    context, original, answers, question = r["context"], r["original_context"], r["original_answers"], r["question"]
    opening = split_sentences(original)[0].text if original else ""
    return {
        "answer_is_subject": answer_is_subject(opening, answers),
        "old_answer_trace:coarse_date": bool(coarse_dates(context, answers, question)),
        "old_answer_trace:derived_word": bool(derived_words(context, answers, common=True)),
        "old_answer_not_derivable (products, quotients, rounded sums)": any(derivation(context, a) for a in answers),
    }


def replaced(r: dict) -> list[tuple[int, int, str]]:
    """The spans of the original the swap replaced, re-made by the code edit."""
    if not r.get("answers"):
        return []
    edit = replace_forms(r["original_context"], r["original_answers"], r["answers"][0])
    return [(x.start, x.end, x.new) for x in edit.replacements]


def swap_checks(r: dict) -> dict[str, bool]:
    context, answers = r["context"], r["original_answers"]
    return {
        "old_answer_trace:ordinal": bool(ordinals_of(context, answers)),
        "old_answer_trace:weekday": bool(weekdays_broken(r["original_context"], context)),
        "old_answer_trace:conversion": bool(conversions_after(r["original_context"], replaced(r))),
        "old_answer_not_derivable (products, quotients, rounded sums)": any(derivation(context, a) for a in answers),
    }


def main() -> None:
    flagged: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    cache: dict[str, dict[str, dict]] = {}
    for line in READINGS.read_text(encoding="utf-8").splitlines():
        v = json.loads(line)
        run = v["run"]
        if run not in cache:
            cache[run] = records(run)
        r = cache[run].get(v["id"])
        if not r or not r.get("context") or r.get("task") not in ("unanswerable", "answer_swap"):
            continue
        verdict = "valid" if v["verdict"] == "valid" else "invalid"
        task = r["task"]
        totals[task][verdict] += 1
        for name, hit in (unanswerable_checks(r) if task == "unanswerable" else swap_checks(r)).items():
            if hit:
                flagged[(task, name)][verdict] += 1
    for task in ("answer_swap", "unanswerable"):
        t = totals[task]
        print(f"\n{task}: {t['invalid']} read invalid or unsure, {t['valid']} read valid\n")
        print("| check | invalid removed | valid lost |\n|---|---:|---:|")
        for (tk, name), counts in sorted(flagged.items()):
            if tk == task:
                print(f"| `{name}` | {counts['invalid']} of {t['invalid']} | {counts['valid']} of {t['valid']} |")


if __name__ == "__main__":
    main()
