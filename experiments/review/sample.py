"""The review sample of a run: drawn once, seeded, stratified, kept in ``review/sample.json``.

Strata are ``<task>/judge_accepted`` and ``<task>/judge_rejected`` for a judged run — the
population is the cases the judge decided; cases rejected by the string checks, errors and cases
the judge could not parse are not in it — and ``<task>/accepted`` for an unjudged run. Each
non-empty stratum gets a minimum number of cases (both the judge's precision, from the accepted
stratum, and its recall, which needs valid cases among the rejected, must be estimable); the
rest of the size is shared in proportion to the strata's populations. The case order is shuffled
(seeded) so that the order does not give the judge's verdict away.

Cases of one stratum that read exactly the same (READ_FIELDS: the variants of a compiled-program comparison
often write the same case for a seed) are drawn as one: the sample lists the first of them and the others
under ``same``, so one verdict serves them all and each case keeps the same chance of being read.

``size`` in the file is the size asked for; ``cases`` holds fewer when the population is smaller.

The file is never redrawn silently: reopening reuses it, and asking for another size or seed than
the file holds is a :class:`SampleError` (delete the file to draw again; verdicts already given
stay in the annotators' files, keyed by case id).
"""

from __future__ import annotations

import json
import logging
import os
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from experiments.run_store import is_case, run_counts

logger = logging.getLogger(__name__)

SAMPLE_FILE = "sample.json"
DEFAULT_SIZE = 40
DEFAULT_SEED = 0
# What a reviewer reads of a case.
READ_FIELDS = ("question", "context", "answers", "original_context", "original_answers", "options", "judge_kind")
# At least this many cases per non-empty stratum (fewer when the stratum or the size is smaller):
# a precision or recall estimated from two or three cases is noise.
MIN_PER_STRATUM = 10


class SampleError(ValueError):
    """The sample cannot be drawn or reused as asked; the message says why and what to do."""


def stratum_of(record: Mapping[str, Any], judged: bool) -> str | None:
    """The record's stratum key ``<task>/<stratum>``, or None when it is not part of the population."""
    if not is_case(record):
        return None  # a target's answer, a closed-book baseline, a seed's scores: nothing generated to review
    status = str(record.get("status", ""))
    task = str(record.get("task") or "unknown")
    if judged:
        if status == "accepted" and record.get("judge"):
            return f"{task}/judge_accepted"
        if status.startswith("rejected:judge"):
            return f"{task}/judge_rejected"
        return None
    return f"{task}/accepted" if status == "accepted" else None


def read_key(record: Mapping[str, Any]) -> tuple:
    """Equal for two cases a reader could not tell apart."""
    return tuple(json.dumps(record.get(f), sort_keys=True) for f in READ_FIELDS)


def is_judged(records: Iterable[Mapping[str, Any]]) -> bool:
    return any(r.get("judge") for r in records)


def allocate(populations: Mapping[str, int], size: int) -> dict[str, int]:
    """Cases per stratum: a minimum for each non-empty stratum, the rest proportional to population.

    The remainder is handed out one case at a time to the stratum furthest below its proportional
    share (ties by name), never past a stratum's population, so the sum is exactly
    ``min(size, total)``.
    """
    strata = {k: n for k, n in sorted(populations.items()) if n > 0}
    total = sum(strata.values())
    if size < 1:
        raise SampleError(f"the sample size must be at least 1, got {size}")
    if size >= total:
        return dict(strata)
    if size < len(strata):
        raise SampleError(
            f"a sample of {size} cannot cover the run's {len(strata)} strata "
            f"({', '.join(strata)}); ask for at least {len(strata)}"
        )
    floor = min(MIN_PER_STRATUM, size // len(strata))
    counts = {k: min(n, floor) for k, n in strata.items()}
    while sum(counts.values()) < size:
        open_strata = [k for k in strata if counts[k] < strata[k]]
        best = max(open_strata, key=lambda k: (size * strata[k] / total - counts[k], -open_strata.index(k)))
        counts[best] += 1
    return counts


def draw_sample(
    records: list[Mapping[str, Any]], run_id: str, size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """The sample as the agreed ``sample.json`` object (not written)."""
    judged = is_judged(records)
    members: dict[str, list[list[str]]] = {}  # stratum -> groups of ids that read the same
    group_of: dict[tuple, list[str]] = {}
    seen: set[str] = set()
    for record in records:
        key = stratum_of(record, judged)
        case_id = str(record["id"])
        if key is None or case_id in seen:
            continue
        seen.add(case_id)
        group = group_of.get((key, read_key(record)))
        if group is None:
            group = group_of[(key, read_key(record))] = []
            members.setdefault(key, []).append(group)
        group.append(case_id)
    if not members:
        wanted = "cases the judge accepted or rejected" if judged else "accepted cases"
        raise SampleError(f"run {run_id!r} has no {wanted} to review: it has {run_counts(records)}")
    counts = allocate({k: len(v) for k, v in members.items()}, size)
    rng = random.Random(seed)
    cases = []
    for key in sorted(members):
        chosen = rng.sample(members[key], counts.get(key, 0))
        cases += [{"id": g[0], "stratum": key} | ({"same": g[1:]} if len(g) > 1 else {}) for g in chosen]
    rng.shuffle(cases)
    strata = {}
    for k in sorted(members):
        strata[k] = {"population": sum(len(g) for g in members[k]), "sampled": counts.get(k, 0)}
        if strata[k]["population"] != len(members[k]):
            strata[k]["distinct"] = len(members[k])
    return {
        "run_id": run_id,
        "seed": seed,
        "size": size,
        "strata": strata,
        "cases": cases,
    }


def read_sample(path: Path) -> dict[str, Any]:
    try:
        sample = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SampleError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    cases = sample.get("cases") if isinstance(sample, dict) else None
    if not isinstance(cases, list) or not all(isinstance(c, dict) and "id" in c for c in cases):
        raise SampleError(f"{path}: expected an object with a 'cases' list of {{'id', 'stratum'}}")
    return sample


def write_sample(path: Path, sample: Mapping[str, Any]) -> None:
    """Written whole or not at all (temporary file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(sample, f, indent=1, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def open_sample(
    review_dir: Path, records: list[Mapping[str, Any]], run_id: str, size: int | None = None, seed: int | None = None
) -> tuple[dict[str, Any], bool]:
    """The run's sample and whether it was drawn now. An existing file is reused as it is; a size
    or seed that differs from the file's raises :class:`SampleError` rather than redraw."""
    path = review_dir / SAMPLE_FILE
    if path.exists():
        sample = read_sample(path)
        for name, asked in (("size", size), ("seed", seed)):
            if asked is not None and sample.get(name) != asked:
                raise SampleError(
                    f"{path} already holds the review sample drawn with {name} {sample.get(name)} "
                    f"({len(sample['cases'])} cases); leave out --{'sample' if name == 'size' else name} to "
                    f"continue it, or delete the file to draw a new one (verdicts given so far stay)"
                )
        return sample, False
    sample = draw_sample(
        records, run_id, DEFAULT_SIZE if size is None else size, DEFAULT_SEED if seed is None else seed
    )
    write_sample(path, sample)
    logger.info(
        "Drew a review sample of %d case(s) over %d strata into %s", len(sample["cases"]), len(sample["strata"]), path
    )
    return sample, True


def sampled_records(sample: Mapping[str, Any], records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The sampled case records in the sample's order; ids no longer in the run are dropped, loudly."""
    by_id = {str(r["id"]): dict(r) for r in records}
    out, missing = [], []
    for entry in sample["cases"]:
        record = by_id.get(str(entry["id"]))
        if record is None:
            missing.append(str(entry["id"]))
        else:
            out.append(record)
    if missing:
        logger.warning(
            "%d sampled case(s) are no longer in the run (a seed re-run replaced them?), e.g. %s",
            len(missing),
            missing[:3],
        )
    return out
