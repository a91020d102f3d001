"""A blind sheet: a run's cases as plain text for a reader without the review page, and the reader's
verdicts read back into the run's verdict files.

The sheet (``OUT.md``) numbers the cases 1..N and holds what a reader needs and nothing more: the task,
the question, the options of a multiple-choice question, the original context and answer, the perturbed
context and the answer it should give. The case status, checks, judge fields, case ids, program version
and pivot stay out of it; the numbers map to case ids in a key (``OUT.key.json``) kept apart from the
sheet, so a reader who gets the sheet and the criteria never sees them. Generated text sits in code
spans and fenced blocks: it is adversarial, and a markdown viewer must show it as text, not render it.

Two draws:

- ``sample``: the run's review sample (``review/sample.json``, the cases the review page shows, in its
  shuffled order); the verdicts go to ``review/<annotator>.jsonl`` beside the page's, and
  ``reeval validity`` counts them;
- ``accepted-only``: a seeded uniform draw among the run's accepted cases, outside the stratified sample.
  Its verdicts go to ``review/accepted-only/<annotator>.jsonl``, a folder ``reeval validity`` does not
  read (they would skew the strata's weights); :func:`sheet_validity` gives their own figure.

Cases that read the same (the sample's READ_FIELDS, within one task) appear once; the key lists every id
a number stands for, and the verdict is written for each.

The reader answers one line per case, ``N | valid|invalid|unsure | reason``; other lines (counts, a
summary of failure kinds) are ignored.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments import task_registry
from experiments.review.sample import (
    SAMPLE_FILE,
    open_sample,
    read_key,
    read_sample,
    sampled_records,
    stratum_of,
    write_sample,
)
from experiments.review.verdict_log import VerdictLog, check_annotator, utc_now
from experiments.review.verdicts import REVIEWERS_FILE, VERDICTS, ReviewFormatError
from experiments.run_store import run_counts
from metrics.intervals import wilson_interval
from programs.multiple_choice import unlettered

logger = logging.getLogger(__name__)

REVIEW_DIR = "review"
DRAW_SAMPLE = "sample"
DRAW_ACCEPTED_ONLY = "accepted-only"
DRAWS = (DRAW_SAMPLE, DRAW_ACCEPTED_ONLY)
# Under review/, where `reeval validity` (review/*.jsonl) does not look.
ACCEPTED_ONLY_DIR = "accepted-only"
DEFAULT_ACCEPTED_ONLY_SIZE = 40
DEFAULT_READER_KIND = "independent reader, blind"
WRAP = 100
LINE_FORMAT = "N | valid|invalid|unsure | reason"

# "N | verdict | reason", also as a bullet, a quote or a markdown table row, N possibly bold or in backticks.
_VERDICT_LINE = re.compile(r"^\s*(?:[-*+>]\s*)?(?P<table>\|)?\s*[*_`]*(?P<n>\d+)[*_`]*\s*[.):]?\s*\|(?P<rest>.*)$")


class SheetError(ReviewFormatError):
    """A sheet, key or verdict text that cannot be used as it is; the message names the file (and line)."""


@dataclass(frozen=True)
class Draw:
    """The cases of one sheet: groups of records that read the same, in sheet order."""

    kind: str
    seed: int
    size: int
    groups: list[list[dict[str, Any]]]

    def key(self, run_id: str, sheet: Path) -> dict[str, Any]:
        return {
            "run_id": run_id,
            "draw": self.kind,
            "seed": self.seed,
            "size": self.size,
            "sheet": sheet.name,
            "at": utc_now(),
            "cases": {str(n): [str(r["id"]) for r in group] for n, group in enumerate(self.groups, start=1)},
        }


@dataclass(frozen=True)
class SheetVerdict:
    number: int
    verdict: str
    reason: str
    source: str  # "file:line"


@dataclass(frozen=True)
class SheetImport:
    draw: str
    path: Path  # the verdict file appended to
    appended: int  # verdict lines written (a number that stands for several cases writes one each)
    answered: list[int]
    missing: list[int]  # numbers of the key without a verdict line
    shared: int  # verdicts written for a case that reads the same as another on the sheet


@dataclass(frozen=True)
class SheetValidity:
    valid: int
    invalid: int
    unsure: int
    low: float
    high: float

    @property
    def n(self) -> int:
        return self.valid + self.invalid

    @property
    def rate(self) -> float:
        return self.valid / self.n if self.n else float("nan")


# --------------------------------------------------------------------------------------------
# Drawing


def task_of(record: Mapping[str, Any]) -> str:
    return str(record.get("task") or record.get("judge_kind") or "unknown")


def group_same_reading(records: Iterable[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
    """Records that read the same (task and READ_FIELDS) in one group each, in order of first appearance;
    a repeated id is kept once."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    seen: set[str] = set()
    for record in records:
        case_id = str(record["id"])
        if case_id in seen:
            continue
        seen.add(case_id)
        groups.setdefault((task_of(record), read_key(record)), []).append(dict(record))
    return list(groups.values())


def sample_draw(
    review_dir: Path, records: list[Mapping[str, Any]], run_id: str, size: int | None, seed: int | None
) -> Draw:
    """The run's review sample, as the review page shows it (drawn now if the run has none yet)."""
    drawn, _ = open_sample(review_dir, records, run_id, size=size, seed=seed)
    groups = group_same_reading(sampled_records(drawn, records))
    return Draw(DRAW_SAMPLE, int(drawn["seed"]), int(drawn["size"]), groups)


def accepted_only_draw(records: Iterable[Mapping[str, Any]], run_id: str, size: int | None, seed: int | None) -> Draw:
    """Up to ``size`` distinct readings drawn uniformly (seeded) among the run's accepted generated cases.

    A group of cases that read the same is drawn as one, so every case keeps the same chance of being read.
    """
    size = DEFAULT_ACCEPTED_ONLY_SIZE if size is None else size
    seed = 0 if seed is None else seed
    if size < 1:
        raise SheetError(f"the sheet's size must be at least 1, got {size}")
    records = list(records)
    # stratum_of(unjudged) admits exactly the accepted cases: no baselines, no target's answers, no seed's scores.
    accepted = [r for r in records if stratum_of(r, judged=False) is not None]
    groups = group_same_reading(accepted)
    if not groups:
        raise SheetError(f"run {run_id!r} has no accepted cases to put on a sheet: it has {run_counts(records)}")
    # random.sample returns its picks in random order: the sheet's order says nothing about the cases.
    chosen = random.Random(seed).sample(groups, min(size, len(groups)))
    return Draw(DRAW_ACCEPTED_ONLY, seed, size, chosen)


# --------------------------------------------------------------------------------------------
# Rendering


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def _inline(value: Any) -> str:
    """A code span that holds any text (CommonMark: a fence longer than the text's longest backtick run)."""
    text = " ".join(_text(value).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _block(value: Any) -> list[str]:
    """A fenced block, the text wrapped at WRAP columns without breaking a word."""
    text = _text(value)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    lines: list[str] = []
    for line in text.splitlines() or [""]:
        wrapped = textwrap.wrap(line, WRAP, break_long_words=False, break_on_hyphens=False)
        lines += wrapped or [""]
    return [fence + "text", *lines, fence]


def _answers(values: Iterable[Any]) -> str:
    return " or ".join(_inline(v) for v in values if _text(v).strip()) or "(none given)"


def _options(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    options = [_text(o) for o in record.get("options") or []]
    labels = [_text(x) for x in record.get("choice_labels") or []]
    return [(labels[i] if i < len(labels) else chr(ord("A") + i), o) for i, o in enumerate(options)]


def _option(options: list[tuple[str, str]], label: Any) -> str:
    for letter, text in options:
        if letter == _text(label):
            return f"{letter}. {_inline(text)}"
    return _inline(label) if _text(label) else "(none given)"


def _expectation(record: Mapping[str, Any], task: str, options: list[tuple[str, str]]) -> list[str]:
    """The ORIGINAL answer line(s) and what the perturbed context should give, as the task words them."""
    original = record.get("original_answers") or []
    answers = record.get("answers") or []
    if options:
        return [
            f"ORIGINAL answer: {_option(options, record.get('original_answer_label'))}",
            f"NEW answer (the perturbed context should support it, and no other option): "
            f"{_option(options, record.get('answer_label'))}",
        ]
    entry = task_registry.find(task)
    lines = entry.expectation if entry else task_registry.DEFAULT_EXPECTATION
    fields = {
        "original": _answers(original),
        "answers": _answers(answers),
        "new_answer": _answers([record.get("new_answer")]),
        "original_or_answers": _answers(original or answers),
    }
    return [line.format(**fields) for line in lines]


def case_text(number: int, record: Mapping[str, Any]) -> str:
    """One case of the sheet; only fields a reader needs (never status, checks, judge, ids, versions)."""
    task = task_of(record)
    options = _options(record)
    question = unlettered(_text(record.get("question")), [x for x, _ in options], [t for _, t in options])
    lines = [f"## Case {number} — {task}", "", f"Question: {_inline(question)}", ""]
    if options:
        lines += ["Options:", "", *_block("\n".join(f"{x}. {t}" for x, t in options)), ""]
    original_context = _text(record.get("original_context"))
    if original_context:
        lines += ["ORIGINAL context:", "", *_block(original_context), ""]
    else:
        lines += ["ORIGINAL context: (none: the question came without a passage)", ""]
    expectation = _expectation(record, task, options)
    lines += [expectation[0], "", "PERTURBED context:", "", *_block(record.get("context")), ""]
    for line in expectation[1:]:
        lines += [line, ""]
    return "\n".join(lines)


def sheet_text(groups: list[list[Mapping[str, Any]]]) -> str:
    head = [
        "# Cases to read",
        "",
        f"{len(groups)} case(s), numbered 1 to {len(groups)}. For each case write one line: `{LINE_FORMAT}`.",
        "",
    ]
    cases = [case_text(n, group[0]) for n, group in enumerate(groups, start=1)]
    return "\n".join(head) + "\n---\n\n" + "\n---\n\n".join(cases).rstrip("\n") + "\n"


# --------------------------------------------------------------------------------------------
# Writing


def key_path_for(sheet: Path) -> Path:
    return sheet.with_name(sheet.stem + ".key.json")


def _same_mapping(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("run_id", "draw", "cases"))


def _check_key_replaceable(path: Path, key: Mapping[str, Any]) -> None:
    """A key that maps other cases may be what a reader's verdicts on the old sheet need: never replaced."""
    if not path.exists():
        return
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        old = None
    if not isinstance(old, dict) or not _same_mapping(old, key):
        raise SheetError(
            f"{path} exists and maps other cases; verdicts on its sheet need it: write the new sheet under "
            "another name, or delete that key first"
        )


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_sheet(draw: Draw, run_id: str, out: str | Path) -> tuple[Path, Path]:
    """Write the sheet (``out``) and its key beside it; return both paths."""
    out = Path(out)
    key_path = key_path_for(out)
    if key_path == out:
        raise SheetError(f"{out}: the sheet would be its own key; give the sheet a name ending in .md or .txt")
    key = draw.key(run_id, out)
    _check_key_replaceable(key_path, key)
    _write_text(out, sheet_text(draw.groups))
    write_sample(key_path, key)
    logger.info("Wrote a %s sheet of %d case(s) to %s and its key to %s", draw.kind, len(draw.groups), out, key_path)
    return out, key_path


# --------------------------------------------------------------------------------------------
# Reading verdicts back


def load_key(path: str | Path, run_id: str) -> dict[str, Any]:
    """The key of a sheet of ``run_id``: number (as text) -> case ids."""
    path = Path(path)
    try:
        key = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SheetError(f"{path}: cannot read the sheet's key ({exc})") from None
    except json.JSONDecodeError as exc:
        raise SheetError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    cases = key.get("cases") if isinstance(key, dict) else None
    if (
        not isinstance(cases, dict)
        or key.get("draw") not in DRAWS
        or not all(
            k.isdigit() and isinstance(v, list) and v and all(isinstance(i, str) for i in v) for k, v in cases.items()
        )
    ):
        raise SheetError(
            f"{path}: not a sheet's key (expected 'run_id', 'draw' and 'cases' as written by reeval review --sheet)"
        )
    if key.get("run_id") != run_id:
        raise SheetError(
            f"{path}: the key of a sheet of run {key.get('run_id')!r}, not of {run_id!r}; "
            f"import it into that run (reeval review {key.get('run_id')} --import-sheet …)"
        )
    return key


def _verdict_word(text: str) -> str:
    return text.strip().strip("*_`").strip().rstrip(".:;,").lower()


def parse_verdict_line(line: str, where: str) -> SheetVerdict | None:
    """The verdict of one line, or None when the line is not a verdict line (a heading, the counts)."""
    match = _VERDICT_LINE.match(line)
    if match is None:
        return None
    rest = match["rest"].rstrip()
    if match["table"] and rest.endswith("|"):
        rest = rest[:-1]
    word, _, reason = rest.partition("|")
    verdict = _verdict_word(word)
    if verdict not in VERDICTS:
        raise SheetError(
            f"{where}: {word.strip()!r} is not a verdict: write {', '.join(VERDICTS)} (line form: {LINE_FORMAT})"
        )
    return SheetVerdict(int(match["n"]), verdict, reason.strip(), where)


def parse_verdicts(path: str | Path, numbers: Iterable[int]) -> list[SheetVerdict]:
    """Every verdict line of a reader's text, checked against the sheet's numbers; nothing is half read:
    a number not on the sheet, a number answered twice or a bad verdict raises :class:`SheetError`."""
    path = Path(path)
    known = set(numbers)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SheetError(f"{path}: cannot read the verdicts ({exc})") from None
    found: dict[int, SheetVerdict] = {}
    for lineno, line in enumerate(lines, start=1):
        verdict = parse_verdict_line(line, f"{path}:{lineno}")
        if verdict is None:
            continue
        if verdict.number not in known:
            raise SheetError(
                f"{verdict.source}: case {verdict.number} is not on the sheet (its key numbers 1 to {len(known)})"
            )
        if verdict.number in found:
            raise SheetError(
                f"{verdict.source}: case {verdict.number} has a verdict already ({found[verdict.number].source}); "
                "keep one line per case"
            )
        found[verdict.number] = verdict
    if not found:
        raise SheetError(f"{path}: no verdict lines (expected one line per case: {LINE_FORMAT})")
    return list(found.values())


def verdict_dir(review_dir: Path, draw: str) -> Path:
    return review_dir / ACCEPTED_ONLY_DIR if draw == DRAW_ACCEPTED_ONLY else review_dir


def record_reviewer_kind(review_dir: Path, annotator: str, kind: str) -> None:
    """Add ``annotator: kind`` to review/reviewers.json. Another kind already recorded for the name is an
    error: two readers under one name would have their verdicts merged, and figures would name the wrong one."""
    path = review_dir / REVIEWERS_FILE
    kinds: dict[str, str] = {}
    if path.exists():
        try:
            kinds = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SheetError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        if not isinstance(kinds, dict):
            raise SheetError(f"{path}: expected an object, reviewer id -> kind")
    recorded = kinds.get(annotator)
    if recorded == kind:
        return
    if recorded is not None:
        raise SheetError(
            f"{path} records {annotator!r} as {recorded!r}, not {kind!r}: give this reader a name of their own "
            f"(--annotator), or pass --reviewer-kind {recorded!r} if the verdicts are that reviewer's"
        )
    write_sample(path, {**kinds, annotator: kind})


def import_sheet(
    verdicts_path: str | Path,
    key_path: str | Path,
    review_dir: Path,
    run_id: str,
    annotator: str,
    reviewer_kind: str = DEFAULT_READER_KIND,
) -> SheetImport:
    """Append a reader's verdicts on a sheet to the run's verdict file for the sheet's draw.

    Everything is checked before the first line is written. Appending is safe to repeat: the later line
    for a (case, annotator) wins when read.
    """
    check_annotator(annotator)
    if not reviewer_kind.strip():
        raise SheetError("--reviewer-kind must say who the reader is, e.g. 'independent reader, blind'")
    key = load_key(key_path, run_id)
    cases: dict[int, list[str]] = {int(n): ids for n, ids in key["cases"].items()}
    verdicts = parse_verdicts(verdicts_path, cases)
    _warn_outside_sample(review_dir, key, cases)
    record_reviewer_kind(review_dir, annotator, reviewer_kind.strip())
    log = VerdictLog(verdict_dir(review_dir, key["draw"]), annotator)
    appended = shared = 0
    for v in sorted(verdicts, key=lambda v: v.number):
        ids = cases[v.number]
        for case_id in ids:
            log.append(case_id, v.verdict, v.reason)
        appended += len(ids)
        shared += len(ids) - 1
    answered = sorted(v.number for v in verdicts)
    return SheetImport(key["draw"], log.path, appended, answered, sorted(set(cases) - set(answered)), shared)


def _warn_outside_sample(review_dir: Path, key: Mapping[str, Any], cases: Mapping[int, list[str]]) -> None:
    """A sample sheet drawn before the sample was redrawn: its verdicts would be left out of the figures."""
    path = review_dir / SAMPLE_FILE
    if key["draw"] != DRAW_SAMPLE or not path.exists():
        return
    sampled = {str(c["id"]) for c in read_sample(path)["cases"]}
    outside = [i for ids in cases.values() for i in ids if i not in sampled]
    if outside:
        logger.warning(
            "%d case(s) on the sheet are not in %s (redrawn since?), e.g. %s; reeval validity leaves them out",
            len(outside),
            path,
            outside[:3],
        )


# --------------------------------------------------------------------------------------------
# The accepted-only figure


def sheet_validity(run_dir: Path, annotator: str) -> SheetValidity:
    """Counts of the annotator's latest accepted-only verdicts and the Wilson 95% interval of the valid
    share (``unsure`` is not a vote). Cases that read the same count apart, so with such copies the
    interval is too narrow."""
    log = VerdictLog(Path(run_dir) / REVIEW_DIR / ACCEPTED_ONLY_DIR, annotator)
    counts = {verdict: 0 for verdict in VERDICTS}
    for v in log.read().values():
        counts[v.verdict] += 1
    low, high = wilson_interval(counts["valid"], counts["valid"] + counts["invalid"])
    return SheetValidity(counts["valid"], counts["invalid"], counts["unsure"], low, high)
