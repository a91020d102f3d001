"""How many archived, blind-read cases each rule of context_enrich/11 and /12, faitheval/9 and answer_swap/9
would change or remove, and how those were read (docs/reviews/: one maintainer's blind reading of each
run's review sample). No model runs: the rules are applied to the texts the runs recorded.

Each run is labelled by the split its seeds come from. The context_enrich/11 rules were built from the
held-out run's invalid copies (`nq-context-enrich-f6b021e81d`), the /12 rules from those of the next
held-out run (`nq-context-enrich-08f109b83e`), so on those runs as on the development runs these counts
say what the rules cost and catch where they were developed; they are not a held-out measurement of the
rules.

For context enriching, each rule new in a version is switched on alone over all the rules of the versions
before it. /11: `work` (background referring to a work nobody introduced), `relation` (the kept evidence
holds the question's qualifiers), `abbreviation` (a background sentence is not cut after "Dr." or an
initial). /12: `work_possessive` ("James ' version" is a possessive), `work_part_of` ("version of the
song" names no work of its own), `rival_date`, `setting`, `purpose` (`metrics.background_checks`). A copy
is *changed* when its kept evidence or background differs, *removed* when it no longer passes the
generator's checks (the background left too short, the kept evidence refused). For /12, the background
sentences each rule drops are counted too, with those dropped in turn by another rule once it has
(a pronoun left leading the background).

    python scripts/measure_new_checks.py
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.splits import is_development  # noqa: E402
from metrics import background_checks  # noqa: E402
from metrics.arithmetic import majority_size  # noqa: E402
from metrics.background_checks import background_drops, without  # noqa: E402
from metrics.evidence_checks import question_names  # noqa: E402
from metrics.traces import descriptions_left, gloss_traces, inside_words  # noqa: E402
from programs import context_enrich  # noqa: E402
from programs.answer_swap import misplaced_articles  # noqa: E402
from programs.context_enrich import enrich_checks, evidence_first, failed_check, kept_evidence  # noqa: E402
from programs.span_edit import replace_forms  # noqa: E402

REVIEWS = ROOT / "docs" / "reviews"


def verdicts(run: Path) -> dict[str, str]:
    found = {}
    for path in sorted((run / "review").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                found[record["id"]] = record["verdict"]
    return found


def swap_rules(case: dict) -> list[str]:
    golds, new = case["original_answers"], case["answers"][0]
    edit = replace_forms(case["original_context"], golds, new)
    spans = [(r.start, r.end, r.new) for r in edit.replacements]
    fired = sorted({f"trace:{kind}" for kind, _ in gloss_traces(case["original_context"], [e for _, e, _ in spans])})
    if inside_words(case["context"], golds, keep=[new]):
        fired.append("trace:inside_word")
    if descriptions_left(case["context"], case["original_context"], golds, "naming"):
        fired.append("trace:description")
    if misplaced_articles(case["context"], spans):
        fired.append("new_answer_fits_grammar")
    return fired


def unanswerable_rules(case: dict) -> list[str]:
    golds = case["original_answers"]
    fired = []
    if descriptions_left(case["context"], case["original_context"], golds):
        fired.append("trace:description")
    if any(majority_size(case["context"], g) for g in golds):
        fired.append("trace:majority")
    return fired


# The rules of each generator version, in order; each is measured switched on alone over all the rules of
# the versions before it.
ENRICH_RULES = {
    "11": ("work", "relation", "abbreviation"),
    "12": ("work_possessive", "work_part_of", "rival_date", "setting", "purpose"),
}
ALL_ENRICH_RULES = tuple(rule for rules in ENRICH_RULES.values() for rule in rules)
# What each /12 rule switches off to: the /11 possessive ("Springfield 's" only), no part-of reading.
_OLD_WORK_REFERENCE = re.compile(
    background_checks._WORK_REFERENCE.pattern.replace(background_checks._POSSESSIVE, r"\s?'s")
)
_OFF = {
    "work": ("refers_to_unintroduced_work", lambda *a: False),
    "abbreviation": ("_ABBREVIATION_END", re.compile(r"(?!)")),
    "work_possessive": ("_WORK_REFERENCE", _OLD_WORK_REFERENCE),
    "work_part_of": ("_PART_OF_REFERENCE", re.compile(r"(?!)")),
    "rival_date": ("dates_rival", lambda *a: False),
    "setting": ("sets_another_time", lambda *a: False),
    "purpose": ("states_purpose", lambda *a: False),
}


@contextmanager
def enrich_rules_on(rules: tuple[str, ...]):
    """Switch off each context_enrich/11 and /12 rule not in `rules`."""
    with ExitStack() as stack:
        for rule in ALL_ENRICH_RULES:
            if rule in rules:
                continue
            if rule == "relation":
                stack.enter_context(mock.patch.object(context_enrich, "relation_words", lambda question: []))
            else:
                stack.enter_context(mock.patch.object(background_checks, *_OFF[rule]))
        yield


def enrich_copy(case: dict, row: dict) -> tuple[str | None, str, str | None, list[tuple[str, str]]]:
    """(kept evidence, background, rejection, drops) of the copy the current rules make from the texts the
    run recorded (its condensed background, its source evidence)."""
    starts = [s for s in row.get("answer_starts") or [] if s is not None]
    kept = kept_evidence(
        case["original_context"],
        case.get("supporting_sentence") or "",
        case["question"],
        case["original_answers"],
        starts[0] if starts else None,
        row.get("title", ""),
    )
    if kept.problem:
        return None, "", kept.problem, []
    names = question_names(case["question"], case["original_context"])
    drops = background_drops(case.get("background") or "", kept.text, case["question"], case["original_answers"], names)
    background = without(case.get("background") or "", drops)
    merged = evidence_first(background, kept.text)
    checks = enrich_checks(merged, kept.text, case["original_answers"], [], case["question"])
    return kept.text, background, failed_check(checks), drops


def enrich_rules(case: dict, rows: dict[str, dict]) -> tuple[list[str], Counter]:
    """The labels of what fires on the copy, and how many background sentences each /12 rule drops."""
    row = rows.get(case["seed_id"], {})
    with enrich_rules_on(()):
        base = enrich_copy(case, row)
    fired = []
    if base[2] in ("no_supporting_sentence", "supporting_sentence_off_topic"):
        fired.append("kept_evidence:refused")
    elif base[0] != case.get("supporting_sentence"):
        fired.append("kept_evidence:changed")
    fired += [f"background_dropped:{rule}" for rule, _ in base[3]]
    sentences: Counter = Counter()
    earlier: tuple[str, ...] = ()
    for version, rules in ENRICH_RULES.items():
        with enrich_rules_on(earlier):
            before = enrich_copy(case, row)
        for rule in rules:
            with enrich_rules_on((*earlier, rule)):
                new = enrich_copy(case, row)
            if new[:3] != before[:3]:
                fired.append(f"/{version} {rule}")
                if new[2] and not before[2]:
                    fired.append(f"/{version} {rule}:removed")
            if version != "11":
                sentences[f"/{version} {rule}"] += len(set(new[3]) - set(before[3]))
        with enrich_rules_on((*earlier, *rules)):
            new = enrich_copy(case, row)
        if new[:3] != before[:3]:
            fired.append(f"/{version} any")
            if new[2] and not before[2]:
                fired.append(f"/{version} any:removed")
        if version != "11":
            sentences[f"/{version} any"] += len(set(new[3]) - set(before[3]))
        earlier = (*earlier, *rules)
    return sorted(set(fired)), sentences


def main() -> None:
    import gzip

    with gzip.open(ROOT / "data" / "nq.jsonl.gz", "rt", encoding="utf-8") as f:
        ordered = [json.loads(line) for line in f]
    rows = {r["id"]: r for r in ordered}
    position = {r["id"]: i for i, r in enumerate(ordered)}
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    dropped: dict[tuple[str, str], Counter] = defaultdict(Counter)
    totals: dict[str, Counter] = defaultdict(Counter)
    for run in sorted(p for p in REVIEWS.iterdir() if (p / "cases.jsonl").exists()):
        read = verdicts(run)
        split = None
        for line in (run / "cases.jsonl").read_text().splitlines():
            case = json.loads(line)
            if "original_context" not in case or case.get("context") is None:
                continue
            # Context-enriching copies the run accepted count read or not: what a rule costs in yield.
            unread_counted = case["task"] == "context_enrich" and case.get("status") == "accepted"
            # Rejected copies count only in the sentences a rule drops from their backgrounds.
            rejected_counted = case["task"] == "context_enrich" and bool(case.get("background"))
            if case["id"] not in read and not unread_counted and not rejected_counted:
                continue
            seed_split = "development" if is_development("nq", position[case["seed_id"]]) else "held-out"
            assert split in (None, seed_split), (run.name, case["seed_id"])
            split = seed_split
            task = f"{case['task']} ({split}, {run.name})" if case["task"] == "context_enrich" else case["task"]
            if case["id"] not in read and not unread_counted:
                for rule, n in enrich_rules(case, rows)[1].items():
                    dropped[(task, rule)]["rejected"] += n
                continue
            sentences: Counter = Counter()
            if case["task"] == "answer_swap":
                fired = swap_rules(case)
            elif case["task"] == "unanswerable":
                fired = unanswerable_rules(case)
            else:
                fired, sentences = enrich_rules(case, rows)
            verdict = read.get(case["id"], "unread")
            for rule, n in sentences.items():
                dropped[(task, rule)][verdict] += n
            totals[task][verdict] += 1
            for rule in fired:
                table[(task, rule)][verdict] += 1
            if fired:
                table[(task, "any rule")][verdict] += 1
    print("Archived blind-read cases (docs/reviews/), one maintainer's blind reading")
    for task, counts in sorted(totals.items()):
        read_n = sum(n for v, n in counts.items() if v != "unread")
        extra = f"; {read_n + counts['unread']} read or accepted copies" if counts["unread"] else ""
        print(f"\n{task}: {read_n} read ({counts['valid']} valid, {counts['invalid']} invalid){extra}")
        for (t, rule), c in sorted(table.items()):
            if t == task:
                read_c = sum(n for v, n in c.items() if v != "unread")
                also = f" (of {read_c + c['unread']} read or accepted)" if counts["unread"] else ""
                unread = f", {c['unread']} unread" if counts["unread"] else ""
                print(f"  {rule:34s} on {read_c:3d} read{also}: {c['invalid']} invalid, {c['valid']} valid{unread}")
        for (t, rule), c in sorted(dropped.items()):
            if t == task and sum(c.values()):
                print(
                    f"  {rule + ' sentences dropped':34s} {sum(c.values()):3d}: in {c['invalid']} invalid, "
                    f"{c['valid']} valid, {c['unread']} unread, {c['rejected']} rejected copies' backgrounds"
                )


if __name__ == "__main__":
    main()
