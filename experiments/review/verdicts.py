"""Human verdicts on generated cases: export for annotators, read their verdicts, majority vote.

FaithEval and ReEval validate generated cases with optional human review decided by majority
vote. Verdicts come either from the review page (``reeval review``, which appends to
``runs/<run-id>/review/<annotator>.jsonl``) or from spreadsheets: :func:`export_for_review`
writes an annotation file (JSONL plus a CSV twin); each annotator fills ``verdict`` (and
``note``) in a copy named after themselves. :func:`load_verdicts` reads either back,
:func:`majority_vote` decides each case, :func:`agreement` says how far the annotators can be
trusted, and :func:`apply_review` folds the decisions into the case records.

A verdict is ``valid``, ``invalid`` or ``unsure``. ``unsure`` records that the annotator saw the
case (the page resumes past it, the note is kept) but is not a vote: majority vote and agreement
ignore it.

Errors in annotator files name ``file:line: field '…'`` like the data loader, because a bad
cell in a 500-row spreadsheet is otherwise hard to find.
"""

from __future__ import annotations

import copy
import csv
import json
import logging
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

# reviewer id -> their kind ("maintainer, blind"), beside the verdict files
REVIEWERS_FILE = "reviewers.json"

logger = logging.getLogger(__name__)

Label = Literal["valid", "invalid"]
VerdictLabel = Literal["valid", "invalid", "unsure"]
Decision = Literal["valid", "invalid", "tie", "insufficient"]

LABELS: tuple[Label, Label] = ("valid", "invalid")
UNSURE = "unsure"
VERDICTS: tuple[VerdictLabel, ...] = ("valid", "invalid", "unsure")
HUMAN_REJECTION = "rejected:human_review"
ANSWER_SEPARATOR = " | "

_SYNONYMS: dict[str, VerdictLabel] = {
    **dict.fromkeys(("valid", "yes", "1", "true", "accept"), "valid"),
    **dict.fromkeys(("invalid", "no", "0", "false", "reject"), "invalid"),
    "unsure": "unsure",
}


class ReviewFormatError(ValueError):
    """An annotator file or row does not have the expected form; the message says file:line, field."""


@dataclass(frozen=True)
class Verdict:
    id: str
    annotator: str
    verdict: VerdictLabel
    note: str = ""
    source: str = ""  # "file:line", so a later inconsistency can still point at the row
    at: str = ""  # ISO-8601 UTC time the verdict was given, when the file says


@dataclass(frozen=True)
class VoteResult:
    decision: Decision
    valid: int
    invalid: int
    annotators: tuple[str, ...]


# --------------------------------------------------------------------------------------------
# Export


def export_for_review(
    records: Iterable[Mapping[str, Any]],
    path: str | Path,
    *,
    statuses: Sequence[str] = ("accepted",),
    sample: int | None = None,
    seed: int = 0,
    overwrite: bool = False,
) -> int:
    """Write the cases to annotate to ``path`` (``.jsonl``) and its ``.csv`` twin; return the count.

    A status in ``statuses`` matches exactly or as a prefix (``"rejected"`` selects every
    ``rejected:<reason>``). ``sample`` draws a seeded random subset, written in input order.
    Existing files are refused unless ``overwrite``: they may already hold an annotator's work.
    """
    path = Path(path)
    if path.suffix != ".jsonl":
        raise ValueError(f"{path}: the annotation file must end in .jsonl (a .csv twin is written beside it)")
    csv_path = path.with_suffix(".csv")
    if not overwrite:
        for existing in (p for p in (path, csv_path) if p.exists()):
            raise FileExistsError(f"{existing} exists and may hold annotations; pass overwrite=True to replace it")

    chosen = _select(list(records), statuses, sample, seed)
    rows = [_review_row(r) for r in chosen]
    columns = _columns(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps({c: row[c] for c in columns}, ensure_ascii=False) + "\n")
    # utf-8-sig: without the BOM, Excel decodes UTF-8 CSV as the local code page.
    with open(csv_path, "w", encoding="utf-8-sig", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows([_csv_cell(row[c]) for c in columns] for row in rows)
    logger.info("Exported %d case(s) for review to %s and %s", len(rows), path, csv_path)
    return len(rows)


def _status_matches(status: str, wanted: Sequence[str]) -> bool:
    return any(status == w or status.startswith(w + ":") for w in wanted)


def _select(records: list[Mapping[str, Any]], statuses: Sequence[str], sample: int | None, seed: int) -> list:
    if isinstance(statuses, str):  # a bare "accepted" would otherwise match per character
        statuses = (statuses,)
    eligible = [r for r in records if _status_matches(str(r.get("status", "")), statuses)]
    if sample is None or sample >= len(eligible):
        return eligible
    if sample < 0:
        raise ValueError(f"sample must be >= 0, got {sample}")
    keep = sorted(random.Random(seed).sample(range(len(eligible)), sample))
    return [eligible[i] for i in keep]


def _review_row(record: Mapping[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": str(record["id"]),
        "task": record.get("task", ""),
        "question": record.get("question", ""),
        "context": record.get("context") or "",
        "expected_answer": ANSWER_SEPARATOR.join(str(a) for a in record.get("answers") or []),
    }
    if record.get("options") is not None:
        row["options"] = record["options"]
    row["verdict"] = None
    row["note"] = ""
    if record.get("judge") is not None:
        row["judge"] = record["judge"]
    return row


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    # One column set for the whole file: a CSV needs it, and a JSONL that matches it reads the same.
    columns = ["id", "task", "question", "context", "expected_answer"]
    if any("options" in r for r in rows):
        columns.append("options")
    columns += ["verdict", "note"]
    if any("judge" in r for r in rows):
        columns.append("judge")
    for row in rows:
        row.setdefault("options", None)
        row.setdefault("judge", None)
    return columns


# A cell starting with one of these is a formula to a spreadsheet: model- and data-written text
# must not run as one on an annotator's machine (CSV injection). OWASP's rule: prefix a single quote.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# A value that itself starts with a quote gets one more, so reading strips exactly what writing added.
_GUARDED = (*_FORMULA_START, "'")


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return "'" + text if text.startswith(_GUARDED) else text


def _uncell(text: str) -> str:
    """Undo the export's formula guard (NQ ids start with '-', and come back in verdict files)."""
    return text[1:] if text.startswith("'") and text[1:].startswith(_GUARDED) else text


# --------------------------------------------------------------------------------------------
# Reading annotator files


def load_verdicts(paths: str | Path | Iterable[str | Path]) -> list[Verdict]:
    """Read annotator files (``.jsonl`` or ``.csv`` with ``id``, ``verdict``, optional ``annotator``).

    Without an ``annotator`` value the file's stem names the annotator. Empty verdicts are
    skipped as not annotated. Within one file a later row for the same (id, annotator) replaces
    the earlier one: the review page appends when an annotator changes their mind. The same
    (id, annotator) in two different files, or an unknown verdict value, raises
    :class:`ReviewFormatError` naming the file, line and field.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    verdicts: list[Verdict] = []
    seen: dict[tuple[str, str], tuple[str, bool]] = {}
    for path in map(Path, paths):
        in_file: dict[tuple[str, str], Verdict] = {}
        from_stem: dict[tuple[str, str], bool] = {}
        skipped = replaced = 0
        for where, row in _read_rows(path):
            verdict = _parse_row(row, where, default_annotator=path.stem)
            if verdict is None:
                skipped += 1
                continue
            key = (verdict.id, verdict.annotator)
            replaced += key in in_file
            in_file[key] = verdict  # a dict keeps the first position: order stays that of first answers
            from_stem[key] = not _text(row.get("annotator"))
        for key, verdict in in_file.items():
            _check_duplicate(seen, verdict, from_stem=from_stem[key])
            verdicts.append(verdict)
        logger.info(
            "%s: %d verdict(s) (%d replaced by a later line), %d row(s) not annotated",
            path,
            len(in_file),
            replaced,
            skipped,
        )
    return verdicts


def _read_rows(path: Path) -> Iterable[tuple[str, dict[str, Any]]]:
    if path.suffix == ".jsonl":
        return _read_jsonl(path)
    if path.suffix == ".csv":
        return _read_csv(path)
    raise ReviewFormatError(f"{path}: unsupported annotation file (expected .jsonl or .csv)")


def _read_jsonl(path: Path) -> Iterable[tuple[str, dict[str, Any]]]:
    with open(path, encoding="utf-8-sig") as f:
        for lineno, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as e:
                raise ReviewFormatError(f"{path}:{lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
            if not isinstance(obj, dict):
                raise ReviewFormatError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            yield f"{path}:{lineno}", obj


def _read_csv(path: Path) -> Iterable[tuple[str, dict[str, Any]]]:
    # Reports the physical line where a record starts: contexts hold newlines, so the
    # record count would point an annotator at the wrong line in an editor.
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise ReviewFormatError(f"{path}: empty file (expected a header row)")
        header = [h.strip() for h in header]
        for field in ("id", "verdict"):
            if field not in header:
                raise ReviewFormatError(f"{path}:1: field '{field}': missing column (header: {header})")
        start = reader.line_num + 1
        for cells in reader:
            if any(c.strip() for c in cells):
                if len(cells) > len(header):
                    raise ReviewFormatError(
                        f"{path}:{start}: {len(cells)} cells but the header has {len(header)} columns"
                    )
                # Some tools drop trailing empty cells; those read as empty, i.e. not annotated.
                cells += [""] * (len(header) - len(cells))
                yield f"{path}:{start}", {h: _uncell(c) for h, c in zip(header, cells, strict=True)}
            start = reader.line_num + 1


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _parse_row(row: dict[str, Any], where: str, default_annotator: str) -> Verdict | None:
    if "verdict" not in row:
        raise ReviewFormatError(f"{where}: field 'verdict': missing")
    case_id = _text(row.get("id"))
    if not case_id:
        raise ReviewFormatError(f"{where}: field 'id': missing or empty")
    label = _parse_label(row["verdict"], where)
    if label is None:
        return None
    return Verdict(
        id=case_id,
        annotator=_text(row.get("annotator")) or default_annotator,
        verdict=label,
        note=_text(row.get("note")),
        source=where,
        at=_text(row.get("at")),
    )


def _parse_label(value: Any, where: str) -> VerdictLabel | None:
    if isinstance(value, bool):  # before int: True is an int too
        return "valid" if value else "invalid"
    if isinstance(value, int) and value in (0, 1):
        return "valid" if value else "invalid"
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and value.strip().lower() in _SYNONYMS:
        return _SYNONYMS[value.strip().lower()]
    raise ReviewFormatError(
        f"{where}: field 'verdict': {value!r} is not a verdict "
        "(use valid/invalid/unsure; yes/no, 1/0, true/false, accept/reject also work; leave empty to skip)"
    )


def _check_duplicate(seen: dict[tuple[str, str], tuple[str, bool]], v: Verdict, from_stem: bool) -> None:
    key = (v.id, v.annotator)
    if key not in seen:
        seen[key] = (v.source, from_stem)
        return
    first, first_from_stem = seen[key]
    hint = ""
    if from_stem or first_from_stem:
        hint = " (the annotator name comes from the file name; add an 'annotator' column to tell files apart)"
    raise ReviewFormatError(
        f"{v.source}: field 'id': duplicate verdict for case {v.id!r} by annotator {v.annotator!r} "
        f"(first at {first}){hint}"
    )


# --------------------------------------------------------------------------------------------
# Voting and agreement


def _by_case(verdicts: Iterable[Verdict]) -> dict[str, dict[str, Label]]:
    """case id -> annotator -> label over votes ("unsure" is none); a repeated (id, annotator)
    would count one person twice."""
    table: dict[str, dict[str, Label]] = defaultdict(dict)
    for v in verdicts:
        if v.verdict == UNSURE:
            continue
        if v.annotator in table[v.id]:
            raise ReviewFormatError(
                f"{v.source}: duplicate verdict for case {v.id!r} by annotator {v.annotator!r}; keep one"
            )
        table[v.id][v.annotator] = v.verdict
    return dict(table)


def majority_vote(verdicts: Iterable[Verdict], *, min_votes: int = 1) -> dict[str, VoteResult]:
    """Decide each annotated case; a tie is ``"tie"`` and fewer than ``min_votes`` is ``"insufficient"``.

    ``unsure`` verdicts are not votes: a case only annotators were unsure about is
    ``"insufficient"`` with no votes (it was seen, but nobody decided it).
    """
    if min_votes < 1:
        raise ValueError(f"min_votes must be >= 1, got {min_votes}")
    verdicts = list(verdicts)
    table = _by_case(verdicts)
    for v in verdicts:
        table.setdefault(v.id, {})
    results = {}
    for case_id, labels in table.items():
        counts = Counter(labels.values())
        n_valid, n_invalid = counts["valid"], counts["invalid"]
        if n_valid + n_invalid < min_votes:
            decision: Decision = "insufficient"
        elif n_valid == n_invalid:
            decision = "tie"
        else:
            decision = "valid" if n_valid > n_invalid else "invalid"
        results[case_id] = VoteResult(decision, n_valid, n_invalid, tuple(sorted(labels)))
    return results


def agreement(verdicts: Iterable[Verdict]) -> dict[str, Any]:
    """Inter-annotator agreement.

    Returns ``n_items`` (cases with any verdict), ``n_annotators``, per annotator pair
    ``(a, b)`` (sorted names): ``n_shared``, ``percent_agreement`` and ``cohen_kappa`` over the
    cases both annotated; ``overall_agreement`` pooled over all pairs; ``fleiss_kappa`` over
    the ``fleiss_n_items`` cases every annotator rated, when there are at least three
    annotators (else None). A kappa is None when undefined (no shared cases, or a single
    label used throughout so chance agreement is 1).
    """
    table = _by_case(verdicts)
    annotators = sorted({a for labels in table.values() for a in labels})
    n_shared, percent, cohen = {}, {}, {}
    total_agree = total_shared = 0
    for a, b in combinations(annotators, 2):
        shared = [labels for labels in table.values() if a in labels and b in labels]
        y_a, y_b = [s[a] for s in shared], [s[b] for s in shared]
        agree = sum(x == y for x, y in zip(y_a, y_b, strict=True))
        n_shared[(a, b)] = len(shared)
        percent[(a, b)] = agree / len(shared) if shared else None
        cohen[(a, b)] = _cohen_kappa(y_a, y_b)
        total_agree, total_shared = total_agree + agree, total_shared + len(shared)

    fleiss, fleiss_items = None, 0
    if len(annotators) >= 3:
        complete = [labels for labels in table.values() if len(labels) == len(annotators)]
        fleiss_items = len(complete)
        fleiss = _fleiss_kappa([[Counter(labels.values())[c] for c in LABELS] for labels in complete])
    return {
        "n_items": len(table),
        "n_annotators": len(annotators),
        "n_shared": n_shared,
        "percent_agreement": percent,
        "overall_agreement": total_agree / total_shared if total_shared else None,
        "cohen_kappa": cohen,
        "fleiss_kappa": fleiss,
        "fleiss_n_items": fleiss_items,
    }


def _cohen_kappa(y_a: list[str], y_b: list[str]) -> float | None:
    # One label throughout makes chance agreement 1 and kappa 0/0; sklearn would warn and give nan.
    if len(set(y_a) | set(y_b)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score  # heavy import, only needed here

    return float(cohen_kappa_score(y_a, y_b, labels=list(LABELS)))


def _fleiss_kappa(counts: list[list[int]]) -> float | None:
    """Fleiss' kappa from an items x categories count table with the same number of raters per item."""
    if not counts:
        return None
    n_raters = sum(counts[0])
    if n_raters < 2 or any(sum(row) != n_raters for row in counts):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings for every item")
    n_items = len(counts)
    pair_agreement = [(sum(c * c for c in row) - n_raters) / (n_raters * (n_raters - 1)) for row in counts]
    p_observed = sum(pair_agreement) / n_items
    shares = [sum(row[j] for row in counts) / (n_items * n_raters) for j in range(len(counts[0]))]
    p_chance = sum(p * p for p in shares)
    if p_chance >= 1:
        return None
    return (p_observed - p_chance) / (1 - p_chance)


# --------------------------------------------------------------------------------------------
# Folding decisions back into the cases


def apply_review(records: Iterable[Mapping[str, Any]], votes: Mapping[str, VoteResult]) -> list[dict]:
    """New records with ``review`` set for every voted case; inputs are never mutated.

    A ``valid`` decision makes the case ``accepted``, ``invalid`` makes it
    ``rejected:human_review``; a tie or too few votes leaves the status alone. An ``error:*``
    case keeps its status: it has no generated content that a vote could accept.
    """
    out, matched = [], set()
    for record in records:
        new = copy.deepcopy(dict(record))
        vote = votes.get(str(record.get("id")))
        if vote is not None:
            matched.add(str(record["id"]))
            _apply_vote(new, vote)
        out.append(new)
    unknown = sorted(set(votes) - matched)
    if unknown:
        # Often a spreadsheet that turned a numeric id into 1.2E+18: worth a loud warning.
        logger.warning("%d voted id(s) match no case, e.g. %s", len(unknown), unknown[:5])
    return out


def _apply_vote(record: dict, vote: VoteResult) -> None:
    status = str(record.get("status", ""))
    record["review"] = {
        "decision": vote.decision,
        "valid": vote.valid,
        "invalid": vote.invalid,
        "annotators": list(vote.annotators),
        "previous_status": status,
    }
    if status.startswith("error:"):
        if vote.decision in LABELS:
            logger.warning(
                "Case %s is %s; its human decision %r does not change it", record["id"], status, vote.decision
            )
        return
    if vote.decision == "valid":
        record["status"] = "accepted"
    elif vote.decision == "invalid":
        record["status"] = HUMAN_REJECTION
