"""What the typed proposal checks of answer_swap (programs/answer_kinds.py: another kind of answer, another
grammatical number; programs/person_names.py: a stand-in name, a person of the other sex) would have removed
from answer swaps already read blind.

For every swap case in docs/reviews/independent_reading.jsonl whose record is archived (docs/readings/,
docs/reviews/ or runs/, found as scripts/measure_general_checks.py finds them), the old answer is typed in the
seed's passage and the new one in the passage the code edit makes of it, as `AnswerSwap._fit_problem` types a
proposal; a check's effect is the read-invalid cases it fires on (removed) against the read-valid ones (lost),
apart for new answers the pivot proposed and those the code made (distance ladder, made-up and known names).
An unsure verdict counts as not valid. Loads spaCy's small pipeline (programs/entity_tagger.py), no LM.

    python3 scripts/measure_kind_checks.py            # Markdown tables and the cases a check fires on
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from programs.answer_kinds import KINDS, Typed, kind_problem, type_in  # noqa: E402
from programs.entity_tagger import tagger  # noqa: E402
from programs.person_names import generic_name, is_first_name, name_gender, passage_gender  # noqa: E402
from programs.span_edit import replace_forms  # noqa: E402
from scripts.measure_general_checks import READINGS, records  # noqa: E402

CHECKS = ("kind mismatch", "number mismatch", "placeholder", "gender mismatch", "any")
CODE_MADE = ("distance:", "made_up_name", "name:")
ORIGINS = ("pivot", "code")


def origin(r: dict) -> str:
    """Where the new answer came from: "code" when the code made it (a distance rung, a made-up or known name),
    else "pivot" (a proposal of the pivot, or a pivot-listed candidate a ranking pilot kept)."""
    new = r["answers"][0]
    made = [p for p in r.get("proposals") or [] if p.get("proposal") == new]
    kind = str(made[-1].get("answer_type") or "") if made else ""
    return "code" if kind.startswith(CODE_MADE) else "pivot"


def read_swaps() -> tuple[list[tuple[dict, dict]], int]:
    """(verdict, record as read) of every read answer swap whose record is archived, in reading order, and the
    number of read swaps whose record is not."""
    cache: dict[str, dict[str, dict]] = {}
    out, missing = [], 0
    for line in READINGS.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        v = json.loads(line)
        if not v["id"].endswith(":swap"):
            continue
        if v["run"] not in cache:
            cache[v["run"]] = records(v["run"])
        r = cache[v["run"]].get(v["id"])
        if not r or r.get("task") != "answer_swap" or not r.get("context") or not r.get("answers"):
            missing += 1
            continue
        out.append((v, r))
    return out, missing


def typed_checks(tag, r: dict) -> tuple[Typed | None, Typed | None, dict[str, bool]]:
    """The old and new answers' kinds and which checks fire, as `AnswerSwap._fit_problem` reads a proposal."""
    original, gold, question, new_answer = r["original_context"], r["original_answers"], r["question"], r["answers"][0]
    old = type_in(tag, original, gold, question, is_first_name)
    edited = replace_forms(original, gold, new_answer).text
    new = type_in(tag, edited, [new_answer], question, is_first_name)
    problem = kind_problem(old, new, is_first_name) if old and new else None
    said = passage_gender(original, gold[0]) if old and old.kind == "person" else None
    given = name_gender(new_answer) if said else None
    hits = {
        "kind mismatch": problem == "proposal_kind_mismatch",
        "number mismatch": problem == "proposal_number_mismatch",
        "placeholder": generic_name(new_answer),
        "gender mismatch": bool(said and given and said != given),
    }
    hits["any"] = any(hits.values())
    return old, new, hits


def shown(t: Typed | None) -> str:
    if t is None:
        return "not found"
    read = f", read {t.read}" if t.read else ""
    number = {True: ", plural", False: "", None: ""}[t.plural]
    return f"{t.kind}/{t.label or '-'}{read}{number}"


def main() -> None:
    cases, missing = read_swaps()
    tag = tagger()
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    fired: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_kind: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    listed = []
    for v, r in cases:
        verdict = "valid" if v["verdict"] == "valid" else "invalid"
        made = origin(r)
        old, new, hits = typed_checks(tag, r)
        totals[made][verdict] += 1
        kind = old.kind if old else "not found"
        by_kind[kind][verdict] += 1
        by_kind[kind][made] += 1
        for name, hit in hits.items():
            if hit:
                fired[(made, name)][verdict] += 1
        if hits["any"]:
            listed.append((made, v, r, old, new, [n for n in CHECKS[:-1] if hits[n]]))

    print(
        f"# Typed proposal checks on read answer swaps\n\n{len(cases)} read swaps with an archived record "
        f"({missing} read swaps have none); unsure counts as invalid.\n"
    )
    print("| new answer | check | invalid removed | valid lost |\n|---|---|---:|---:|")
    for made in ORIGINS:
        t = totals[made]
        for name in CHECKS:
            c = fired[(made, name)]
            print(f"| {made} | {name} | {c['invalid']} of {t['invalid']} | {c['valid']} of {t['valid']} |")

    print("\n| old kind | read | valid | invalid | pivot | code |\n|---|---:|---:|---:|---:|---:|")
    for kind in (*KINDS, "not found"):
        k = by_kind.get(kind, {})
        n = k.get("valid", 0) + k.get("invalid", 0)
        counts = " | ".join(str(k.get(c, 0)) for c in ("valid", "invalid", *ORIGINS))
        print(f"| {kind} | {n} | {counts} |")

    print(f"\n## The {len(listed)} cases a check fires on\n")
    for made, v, r, old, new, names in listed:
        note = " ".join(str(v.get("note") or "").split())
        note = note if len(note) <= 150 else note[:149] + "…"
        print(
            f"- **{', '.join(names)}** ({made}; read {v['verdict']}) `{v['run']}` `{v['id']}`\n"
            f"  Q: {r['question']} | gold {r['original_answers']} → {r['answers'][0]!r} | "
            f"old {shown(old)} → new {shown(new)}\n  note: {note}"
        )


if __name__ == "__main__":
    main()
