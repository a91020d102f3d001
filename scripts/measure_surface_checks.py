"""How often the surface-form checks fire on the shipped NQ, and how fast they are (no LM, no index).

    python3 scripts/measure_surface_checks.py [--rows N] [--enrich-rows M]

Answer swap and unanswerable are simulated with a code-made proposal of the answer's type (a date a
year later, a number plus one, a made-up name), so what is counted is what the checks would do to
*any* proposal: old forms that cannot be rewritten, distinctive words that survive. Context enriching
uses a lexical retriever over the shipped Wikipedia pool in place of the FAISS index.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics.checks import content_stems, mentions_any_form, old_name_part_left  # noqa: E402
from metrics.evidence_checks import competing_candidates, restating_sentences  # noqa: E402
from metrics.surface_forms import answer_kind, find_forms, single_value  # noqa: E402
from programs.answer_swap import proposal_problem  # noqa: E402
from programs.span_edit import replace_forms  # noqa: E402


def rows(path: Path, n: int) -> list[dict]:
    out = []
    with gzip.open(path, "rt") as f:
        for line in f:
            out.append(json.loads(line))
            if len(out) == n:
                break
    return out


def fake_proposal(answer: str) -> str | None:
    kind = answer_kind(answer)
    value = single_value(answer)
    if kind == "date" and value is not None:
        if value.kind == "date":
            y, m, d = value.value
            if y is None:  # a day of the year: move it a month on
                m = m % 12 + 1
            parts = [calendar_name(m)] if m else []
            if d:
                parts.append(str(min(d, 28)))
            return " ".join(parts) + (f", {y + 1}" if y else "")
        return str(int(value.value) + 1)
    if kind == "number" and value is not None and value.kind == "num":
        return str(value.value + 1)
    if kind == "name":
        return "Zorblat Quenby" if len(answer.split()) > 1 else "Quenby"
    return None


def calendar_name(m: int) -> str:
    import calendar

    return calendar.month_name[m]


def measure_swaps(data: list[dict]) -> dict:
    counts: Counter = Counter()
    started = time.perf_counter()
    for row in data:
        context, answers = row["context"], row["answers"]
        kind = answer_kind(answers[0])
        counts[f"kind:{kind}"] += 1
        forms = [f for a in answers for f in find_forms(context, a)]
        if any(f.how != "same" for f in forms):
            counts["answer_in_another_form"] += 1  # the old token check would not have seen these
            counts[f"answer_in_another_form:{kind}"] += 1
        if old_name_part_left(context, answers):
            counts["name_part_outside_full_answer"] += 1
        proposal = fake_proposal(answers[0])
        if proposal is None or proposal_problem(proposal, answers) is not None:
            continue  # the program refuses such proposals before editing (e.g. another gold alias)
        counts["simulated_swaps"] += 1
        counts[f"simulated_swaps:{kind}"] += 1
        edit = replace_forms(context, answers, proposal)
        if edit.unreplaced:
            counts["rejected:old_forms_replaceable"] += 1
            counts[f"rejected:old_forms_replaceable:{kind}"] += 1
        elif mentions_any_form(edit.text, answers):
            counts["rejected:old_answer_absent"] += 1
        elif old_name_part_left(edit.text, answers, keep=[proposal]):
            counts["rejected:old_name_part_absent"] += 1
        if any(r.how not in ("same",) for r in edit.replacements):
            counts["swaps_rewriting_another_form"] += 1
    seconds = time.perf_counter() - started
    return {
        "rows": len(data),
        "seconds": round(seconds, 2),
        "rows_per_second": round(len(data) / seconds, 1),
        **dict(sorted(counts.items())),
    }


def measure_speed(data: list[dict]) -> dict:
    """Cold caches: every context and answer parsed for the first time."""
    from metrics import surface_forms

    surface_forms.units_of.cache_clear()
    surface_forms._parse_date.cache_clear()
    surface_forms._words_value.cache_clear()
    started = time.perf_counter()
    for row in data:
        mentions_any_form(row["context"], row["answers"])
    cold = time.perf_counter() - started
    started = time.perf_counter()
    for row in data:
        mentions_any_form(row["context"], row["answers"])
    warm = time.perf_counter() - started
    words = sum(len(r["context"].split()) for r in data) / len(data)
    return {
        "rows": len(data),
        "mean_context_words": round(words),
        "cold_cases_per_second": round(len(data) / cold),
        "warm_cases_per_second": round(len(data) / warm),
    }


class LexicalRetriever:
    """TF-IDF over content stems: a stand-in for the FAISS index, good enough to pull related passages."""

    def __init__(self, passages: list[dict]):
        self.passages = passages
        self.index: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(passages):
            for stem in content_stems(f"{p['title']} {p['text']}"):
                self.index[stem].append(i)
        self.idf = {t: math.log(len(passages) / len(ids)) for t, ids in self.index.items()}

    def search(self, query: str, k: int, exclude_answers: list[str]) -> list[dict]:
        scores: Counter = Counter()
        for stem in content_stems(query):
            for i in self.index.get(stem, ())[:5000]:
                scores[i] += self.idf[stem]
        out = []
        for i, _ in scores.most_common(10 * k):
            if mentions_any_form(self.passages[i]["text"], exclude_answers):
                continue
            out.append(self.passages[i])
            if len(out) == k:
                break
        return out


def measure_enrich(data: list[dict], passages: list[dict], k: int = 3, fetch_factor: int = 4) -> dict:
    from programs.context_enrich import kept_evidence

    retriever = LexicalRetriever(passages)
    counts: Counter = Counter()
    fired_by_kind: Counter = Counter()
    started = time.perf_counter()
    for row in data:
        starts = [s for s in row.get("answer_starts") or [] if s is not None]
        kept = kept_evidence(row["context"], "", row["question"], row["answers"], starts[0] if starts else None)
        counts[f"kept:{kept.problem or f'{kept.sentences}_sentences'}"] += 1
        kind = answer_kind(row["answers"][0])
        counts[f"kind:{kind}"] += 1
        hits = retriever.search(row["question"], k * fetch_factor, row["answers"])
        competing = [h for h in hits if competing_candidates(h["text"], row["question"], row["answers"])]
        restating = [h for h in hits if restating_sentences(h["text"], row["question"], row["answers"])]
        flagged = [h for h in hits if h in competing or h in restating]
        counts["passages"] += len(hits)
        counts["passages_skipped"] += len(flagged)
        counts["passages_skipped:other_candidate"] += len(competing)
        counts["passages_skipped:restates_question"] += len(restating)
        counts["passages_skipped:restates_question_only"] += len([h for h in restating if h not in competing])
        fired_by_kind[kind] += len(flagged)
        fired_by_kind[f"{kind}:passages"] += len(hits)
        clean = len(hits) - len(flagged)
        if clean == 0:
            counts["copies_rejected:background_has_other_candidate"] += 1
        elif clean < k:
            counts["copies_with_fewer_than_k_clean"] += 1
    seconds = time.perf_counter() - started
    skip_rate = {
        kind: round(fired_by_kind[kind] / max(fired_by_kind[f"{kind}:passages"], 1), 3)
        for kind in ("date", "number", "name", "other")
    }
    return {
        "rows": len(data),
        "seconds": round(seconds, 1),
        **dict(sorted(counts.items())),
        "passage_skip_rate_by_answer_kind": skip_rate,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=8507)
    parser.add_argument("--enrich-rows", type=int, default=500)
    args = parser.parse_args()
    data = rows(ROOT / "data" / "nq.jsonl.gz", args.rows)
    report = {"speed": measure_speed(data[:2000]), "swap": measure_swaps(data)}
    if args.enrich_rows == 0:
        json.dump(report, sys.stdout, indent=2)
        return
    passages = rows(ROOT / "data" / "wiki_passages.jsonl.gz", 10**9)
    report["enrich"] = measure_enrich(data[: args.enrich_rows], passages)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
