"""What a card says of where a case set comes from: generator version, pivot, judge, commit, seeds and split,
the validity figure and who reviewed, and how the run's targets answered the exported cases.

Read from the run store and, where the run was tracked here, its MLflow run (the commit); a figure that has
nothing behind it is said to be missing rather than left out.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.export.selection import CaseSet
from experiments.run_store import RunStore
from experiments.tracking import find_runs
from experiments.validity import run_validity, statement
from experiments.validity.inputs import evaluation_runs
from experiments.validity.render import reviewers
from metrics.intervals import wilson_interval

logger = logging.getLogger(__name__)

NOT_RECORDED = "not recorded"


@dataclass
class Provenance:
    generator_versions: list[str]
    pivots: list[str]
    judge: str  # "qwen2.5-1.5b (extract)", or "none"
    commit: str
    source: str
    split: str
    rows: str  # "offset 3000, limit 160"
    seeds: dict[str, Any]  # LM seeds and the seed rule
    validity: str  # one or two sentences
    valid_share: dict[str, float] | None  # estimate, low, high of the accepted cases' valid share
    reviewed_by: str  # "4 reviewers (...)" or "not reviewed"
    accuracy: list[dict[str, Any]] = field(default_factory=list)


def _models(config: dict[str, Any], role: str) -> dict[str, Any]:
    return (config.get("models") or {}).get(role) or {}


def _commit(run_id: str) -> str:
    """The commit the run's MLflow run recorded; this store may not hold the run (an archived folder)."""
    try:
        runs = find_runs(run_id)
    except Exception as exc:  # noqa: BLE001 - a card is still written without the tracking store
        logger.warning("commit of %s: the tracking store could not be read (%s)", run_id, exc)
        return NOT_RECORDED
    for run in runs:
        commit = run.data.tags.get("git.commit")
        if commit and commit != "unknown":
            dirty = run.data.tags.get("git.dirty") == "true"
            return commit + (" (with uncommitted changes)" if dirty else "")
    return NOT_RECORDED


def _judge(case_set: CaseSet) -> str:
    judge = _models(case_set.config, "judge").get("name")
    if not judge or not any(r.get("judge") for r in case_set.records):
        return "none"
    methods = sorted({str((r.get("judge") or {}).get("method")) for r in case_set.records if r.get("judge")})
    return f"{judge} ({', '.join(methods)})"


def _validity(case_set: CaseSet, root: Path) -> tuple[str, dict[str, float] | None, str]:
    try:
        rv = run_validity(case_set.run_id, runs_root=root)
    except Exception as exc:  # noqa: BLE001 - a run whose figures cannot be computed still exports
        logger.warning("validity of %s: %s", case_set.run_id, exc)
        return f"not computed ({type(exc).__name__})", None, "not reviewed"
    ppi = rv.figures.accepted_valid_ppi
    share = None
    if ppi is not None and ppi.defined:
        share = {"estimate": ppi.estimate, "low": ppi.low, "high": ppi.high, "n_reviewed": float(ppi.n_labelled)}
    if not rv.inputs.annotators:
        return statement(rv), share, "not reviewed"
    who = _reviewers(rv.inputs.annotators, rv.inputs.reviewer_kinds)
    # The terminal's sentence names each reviewer with their kind; a card names each kind once.
    return statement(rv).replace(reviewers(rv), who), share, who


def _reviewers(ids: list[str], kinds: dict[str, str]) -> str:
    """ "8 reviewers (fresh-reader-1, …: independent blind reader …)": readers grouped by their kind."""
    groups: dict[str, list[str]] = {}
    for reviewer in ids:
        groups.setdefault(kinds.get(reviewer, "kind not recorded"), []).append(reviewer)
    named = "; ".join(f"{', '.join(names)}: {kind}" for kind, names in groups.items())
    return f"{len(ids)} reviewer{'' if len(ids) == 1 else 's'} ({named})"


def _rate_row(group: dict[str, Any], label: str, outcomes: list[bool]) -> dict[str, Any]:
    n = len(outcomes)
    low, high = wilson_interval(sum(outcomes), n)
    rate = sum(outcomes) / n if n else math.nan
    return {**group, "variant": label, "accuracy": rate, "low": low, "high": high, "n": n}


def accuracy_rows(case_set: CaseSet, root: Path) -> list[dict[str, Any]]:
    """Per target (and setting, decoding), accuracy on the exported cases and on their originals: from the
    targets a compare-pivots run asked, or from every evaluate run that read this run's cases."""
    ids = {str(r["id"]) for r in case_set.records}
    outcomes: dict[tuple, list[bool]] = {}
    for record in case_set.records:
        for target, answer in (record.get("targets") or {}).items():
            for variant in ("original", "perturbed"):
                correct = answer.get(f"{variant}_correct")
                if correct is not None:
                    outcomes.setdefault((target, "open_book", "greedy", variant), []).append(bool(correct))
    if not outcomes:
        for eval_id in evaluation_runs(case_set.run_id, root):
            for r in RunStore(eval_id, root=root).records():
                if str(r.get("case_id")) not in ids or r.get("task_correct") is None:
                    continue
                if str(r.get("status", "")).startswith("error:"):
                    continue
                key = (r["target"], r.get("setting", ""), r.get("decoding", ""), r.get("variant", ""))
                outcomes.setdefault(key, []).append(bool(r["task_correct"]))
    rows = []
    for (target, setting, decoding, variant), values in sorted(outcomes.items()):
        rows.append(_rate_row({"target": target, "setting": setting, "decoding": decoding}, variant, values))
    return rows


def provenance(case_set: CaseSet, root: Path) -> Provenance:
    config = case_set.config
    data = config.get("data") or {}
    versions = Counter(str(r.get("program_version")) for r in case_set.records if r.get("program_version"))
    pivots = sorted({str(r["pivot"]) for r in case_set.records if r.get("pivot")}) or [
        str(_models(config, "pivot").get("name", ""))
    ]
    seeds = {
        role: _models(config, role).get("seed")
        for role in ("pivot", "judge")
        if _models(config, role).get("seed") is not None
    }
    rule = (config.get("options") or {}).get("seeds")
    if rule:
        seeds["rule"] = rule
    validity, share, who = _validity(case_set, root)
    return Provenance(
        generator_versions=[v for v, _ in versions.most_common()],
        pivots=pivots,
        judge=_judge(case_set),
        commit=_commit(case_set.run_id),
        # A file of the user's is named by its file name: its folder is this machine's.
        source=Path(str(data.get("source", ""))).name,
        split=str(data.get("split", "all")),
        rows=f"offset {data.get('offset', 0)}, limit {data.get('limit')}",
        seeds=seeds,
        validity=validity,
        valid_share=share,
        reviewed_by=who,
        accuracy=accuracy_rows(case_set, root),
    )
