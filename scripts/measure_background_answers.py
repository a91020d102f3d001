"""What each check of metrics/offered_answers.py removes from the unanswerable background sweeps read blind.

The sweeps' cases were not archived, but the generator is code over the shipped rows and the pool's
retriever (`removal: drop`, `lures: remove`: no pivot call), so each read seed is made again at its level,
as the sweep's config loads it, with the checks off (`offered_answers=False`: the generator as read, up to
later changes of other checks). A regenerated case is matched to its reading by what its readers quoted: a
case whose notes' fragments are all in the regenerated text counts as matched. Each rule is run on the
regenerated case (each background passage, and what is left of the seed passage); a flagged case is one the
checked generator no longer makes as read: rejected (`offered_answer:<rule>` on the rest), or made with
other passages in place of a flagged one ("accepted, other passages": a text nobody has read). A case counts
read invalid when any of its readers read it invalid or unsure. The rules were set on these readings; their
figures on rows nobody read are the test.

    python3 scripts/measure_background_answers.py     # tables, and a line per flagged case (about a minute
                                                      # once the pool's index is cached; building it: ~25 min)
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments import corpus  # noqa: E402
from experiments.config_loader import load_config  # noqa: E402
from experiments.runner import load_data  # noqa: E402
from metrics.checks import content_stems  # noqa: E402
from metrics.offered_answers import RULES as OFFER_RULES  # noqa: E402
from programs.entity_tagger import tagger  # noqa: E402
from programs.faitheval import REST_RULES, Unanswerable, answer_kinds, gives_answer, offers  # noqa: E402
from programs.sentences import split_sentences  # noqa: E402

READINGS = ROOT / "docs" / "reviews" / "independent_reading.jsonl"
CONFIG = ROOT / "experiments" / "configs" / "nq_sweep_unanswerable_background.yaml"
SWEEP = re.compile(r"^nq-sweep-unanswerable-background-\w+/generate\.unanswerable\.background-(\d+)\.qwen2\.5-1\.5b$")


def readings() -> dict[tuple[str, int], list[dict]]:
    """(seed id, level) -> the verdicts of the sweeps' readers."""
    out: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for line in READINGS.read_text(encoding="utf-8").splitlines():
        v = json.loads(line)
        level = SWEEP.match(v["run"])
        if level:
            out[(v["id"].removesuffix(":unanswerable"), int(level.group(1)))].append(v)
    return out


def quoted(note: str) -> list[str]:
    """The fragments a note quotes, cut at its ellipses."""
    quotes = re.findall(r'"([^"]{6,})"', note)
    return [p.strip() for q in quotes for p in re.split(r"\.\.\.|…", q) if len(p.strip()) > 5]


def _squeezed(text: str) -> str:
    # NQ's text is tokenised ("Tribeca and Soho ,"); readers quote it as prose.
    return re.sub(r"[\W_]+", "", text).lower()


def matches(verdicts: list[dict], text: str, question: str, answers: list[str]) -> bool | None:
    """All the fragments the notes quote are in the text; None when none is quoted. A fragment of nothing but
    the question's or the answer's words quotes what was asked or removed, not what was left; notes of a case
    read valid often quote what was removed, so a case read invalid is matched by its invalid notes alone."""
    own = content_stems(question) | {w for a in answers for w in content_stems(a)}
    fragments = [f for v in verdicts for f in quoted(v["note"]) if not content_stems(f) <= own]
    if not fragments:
        return None
    return all(_squeezed(f) in _squeezed(text) for f in fragments)


def regenerate(example, level: int, programs: dict) -> dict:
    """The case as read (the checks off), its pieces, and what the checked generator makes of the seed."""
    question, context, answers = example.question, example.context, list(example.answers)
    read, checked = programs[("read", level)], programs[("checked", level)]
    out = read(question=question, context=context, answers=answers)
    kinds = answer_kinds(question, context, answers, read.tagger)
    passages = (read._background(question, context, answers, kinds) or []) if level else []
    rest = programs[("read", 0)](question=question, context=context, answers=answers).context or ""
    now = checked(question=question, context=context, answers=answers)
    return {
        "question": question,
        "answers": answers,
        "context": context,
        "kinds": kinds,
        "evidence": " ".join(s.text for s in split_sentences(context) if gives_answer(s.text, answers)),
        "rejection": out.rejection,
        "text": out.context or "",
        "rest": rest,
        "passages": [h.text for h in passages],
        "now": now.rejection or ("accepted, same text" if now.context == out.context else "accepted, other passages"),
    }


def flagged(case: dict, tagger) -> dict[str, str]:
    """rule -> the first sentence it flags ("background:<rule>" on a passage, "rest:<rule>" on the rest), each
    text by the rules the generator applies to it."""
    found: dict[str, str] = {}
    texts = [("background", p) for p in case["passages"]] + [("rest", case["rest"])]
    for where, text in texts:
        evidence, rules = (case["evidence"], OFFER_RULES) if where == "background" else ("", REST_RULES)
        q, a = case["question"], case["answers"]
        for rule, sentence in offers(text, q, a, case["kinds"], tagger, evidence, rules):
            found.setdefault(f"{where}:{rule}", sentence)
    return found


def main() -> None:
    config = load_config(CONFIG, overrides={"data.limit": None})
    examples = {str(e.id): e for e in load_data(config).examples}
    retriever = corpus.default_retriever(corpus.DEFAULT_EMBEDDER)
    read = readings()
    levels = sorted({level for _, level in read})
    programs = {
        (which, level): Unanswerable(
            removal="drop",
            lures="remove",
            background=level,
            retriever=retriever if level else None,
            offered_answers=which == "checked",
        )
        for which in ("read", "checked")
        for level in {*levels, 0}
    }
    tally: Counter = Counter()
    matched: Counter = Counter()
    lines = []
    for key, verdicts in sorted(read.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        seed, level = key
        label = "valid" if all(v["verdict"] == "valid" for v in verdicts) else "invalid"
        if seed not in examples:
            matched[(level, label, "row not found")] += 1
            continue
        case = regenerate(examples[seed], level, programs)
        invalid = [v for v in verdicts if v["verdict"] != "valid"]
        match = matches(invalid or verdicts, case["text"], case["question"], case["answers"])
        matched[(level, label, {True: "quotes found", False: "quotes missing", None: "nothing quoted"}[match])] += 1
        if case["rejection"]:
            matched[(level, label, f"rejected now: {case['rejection']}")] += 1
        rules = flagged(case, tagger)
        tally[(level, "read", label)] += 1
        for rule in {*rules, *(f"any:{r.split(':')[1]}" for r in rules), *(["any"] if rules else [])}:
            tally[(level, rule, label)] += 1
        if rules:
            tally[(level, f"now {case['now']}", label)] += 1
            where, sentence = next(iter(rules.items()))
            lines.append(
                f"- bg {level} {seed} ({label}; now {case['now']}): {case['question']!r} — {where}: {sentence[:160]!r}"
            )
    print("| level | read | regenerated | cases |\n|---|---|---|---:|")
    for (level, label, what), n in sorted(matched.items()):
        print(f"| {level} | {label} | {what} | {n} |")
    names = sorted({r for _, r, _ in tally} - {"read", "any"}, key=lambda r: (r.startswith("now"), r)) + ["any"]
    print("\n| level | rule | removes read valid | removes read invalid |\n|---|---|---:|---:|")
    for level in levels:
        print(f"| {level} | (cases read) | {tally[(level, 'read', 'valid')]} | {tally[(level, 'read', 'invalid')]} |")
        for rule in names:
            if tally[(level, rule, "valid")] or tally[(level, rule, "invalid")]:
                print(f"| {level} | {rule} | {tally[(level, rule, 'valid')]} | {tally[(level, rule, 'invalid')]} |")
    print("\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
