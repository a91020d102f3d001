"""What validity is computed from, read from the run store.

- the judged population: runs/<run-id>/cases.jsonl (cases the judge decided, or every accepted
  case of an unjudged run), each in its stratum "<task>/judge_accepted|judge_rejected" or
  "<task>/accepted", the same names the review sample uses;
- the review sample: runs/<run-id>/review/sample.json (stratum population sizes, sampled ids);
- the reviewers' decisions: runs/<run-id>/review/*.jsonl through `load_verdicts` + `majority_vote`;
- who the reviewers are: runs/<run-id>/review/reviewers.json (optional), reviewer id -> their kind
  ("maintainer, blind"), so a figure says whose reading it rests on;
- target outcomes: the records of every evaluate run whose data source is `run:<run-id>`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.case_sets import RUN_PREFIX
from experiments.review import load_verdicts, majority_vote
from experiments.review.verdicts import REVIEWERS_FILE
from experiments.run_store import RunStore, is_case
from metrics.validity import JudgedCase

logger = logging.getLogger(__name__)

REVIEW_DIR = "review"
SAMPLE_FILE = "sample.json"
DECISIONS = ("valid", "invalid")


@dataclass
class RunInputs:
    run_id: str
    population: list[JudgedCase]
    judged: bool
    human: dict[str, bool | None]  # sampled (or, without a sample, any) reviewed id -> decision
    stratum_population: dict[str, int] | None  # from sample.json; None: counted from the cases
    annotators: list[str] = field(default_factory=list)
    failures: dict[str, dict[str, bool]] = field(default_factory=dict)
    evaluate_runs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reviewer_kinds: dict[str, str] = field(default_factory=dict)  # reviewer id -> "maintainer, blind", …
    # Every case the judge read, by its status now: besides its own verdicts (accepted, rejected:judge_*), the
    # cases a later step dropped (rejected:acceptance), which the judged population leaves out.
    judge_read: dict[str, int] = field(default_factory=dict)


def _judge_decided(record: dict[str, Any]) -> bool:
    status = str(record.get("status", ""))
    return bool(record.get("judge")) and (status == "accepted" or status.startswith("rejected:judge"))


def judged_population(records: list[dict[str, Any]], strata_from: str = "status") -> tuple[list[JudgedCase], bool]:
    """(population, judged): the cases the judge decided, or every accepted case if no judge ran.

    Cases rejected by the string checks or ending in an error are outside: the judge never
    decided them, and the review sample does not draw from them either. A case's stratum is the
    sampling design's: the verdict the sample was drawn on, which after `reeval rejudge` is the
    first one (`strata_from="judge_before"`), while `accepted` is always today's verdict.
    """
    judged = any(r.get("judge") for r in records)
    population = []
    for r in records:
        task = r.get("task") or "?"
        if judged:
            if not _judge_decided(r):
                continue
            accepted = r["status"] == "accepted"
            design = (
                (r.get("judge_before") or {}).get("status", r["status"])
                if strata_from == "judge_before"
                else r["status"]
            )
            stratum = f"{task}/judge_{'accepted' if design == 'accepted' else 'rejected'}"
            p_valid = r["judge"].get("p_valid")
            population.append(JudgedCase(str(r["id"]), stratum, accepted, None if p_valid is None else float(p_valid)))
        elif r.get("status") == "accepted" and is_case(r):
            # The review sample's population: a seed's scores or a closed-book twin is accepted but no case.
            population.append(JudgedCase(str(r["id"]), f"{task}/accepted", True))
    return population, judged


def read_sample(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / REVIEW_DIR / SAMPLE_FILE
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def human_decisions(run_dir: Path) -> tuple[dict[str, bool | None], list[str]]:
    """Case id -> True/False by the reviewers' majority, None when reviewed without one; and the annotators."""

    files = sorted((run_dir / REVIEW_DIR).glob("*.jsonl"))
    if not files:
        return {}, []
    verdicts = load_verdicts(files)
    votes = majority_vote(verdicts)
    annotators = sorted({a for vote in votes.values() for a in vote.annotators})
    decisions = {
        case_id: (vote.decision == "valid" if vote.decision in DECISIONS else None) for case_id, vote in votes.items()
    }
    return decisions, annotators


def reviewer_kinds(run_dir: Path) -> dict[str, str]:
    """Reviewer id -> their kind, from review/reviewers.json; empty when the file is absent."""
    path = run_dir / REVIEW_DIR / REVIEWERS_FILE
    if not path.exists():
        return {}
    return {str(k): str(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def evaluation_runs(run_id: str, runs_root: Path) -> list[str]:
    """Evaluate runs whose case set is this run's (`data.source: run:<run-id>`), oldest first."""
    found = []
    for config_path in runs_root.glob("*/config.json"):
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if config.get("task") == "evaluate" and (config.get("data") or {}).get("source") == RUN_PREFIX + run_id:
            found.append((config_path.stat().st_mtime, config_path.parent.name))
    return [name for _, name in sorted(found)]


def metric_key(*parts: str) -> str:
    """A name part MLflow accepts (provider model names carry characters it refuses)."""
    return ".".join(re.sub(r"[^\w\-./ ]", "_", str(p)) for p in parts)


def target_failures(eval_run_ids: list[str], runs_root: Path) -> dict[str, dict[str, bool]]:
    """ "<target>.<setting>.<decoding>" -> case id -> the target answered the perturbed case wrongly.

    Errored records are left out (an error is not a wrong answer). A later evaluate run replaces
    an earlier one's outcome for the same case, target, setting and decoding.
    """
    failures: dict[str, dict[str, bool]] = {}
    for eval_id in eval_run_ids:
        for r in RunStore(eval_id, root=runs_root).records():
            if r.get("variant") != "perturbed" or str(r.get("status", "")).startswith("error:"):
                continue
            if r.get("task_correct") is None:
                continue
            key = metric_key(r["target"], r["setting"], r["decoding"])
            failures.setdefault(key, {})[str(r["case_id"])] = not bool(r["task_correct"])
    return failures


def load_inputs(run_id: str, runs_root: Path | None = None) -> RunInputs:
    store = RunStore(run_id, root=runs_root)
    store.require_cases()
    sample = read_sample(store.dir)
    records = store.records()
    population, judged = judged_population(records, (sample or {}).get("strata_from", "status"))
    judge_read: dict[str, int] = {}
    for r in records:
        if r.get("judge"):
            judge_read[str(r.get("status", ""))] = judge_read.get(str(r.get("status", "")), 0) + 1
    notes: list[str] = []
    human, annotators = human_decisions(store.dir)
    stratum_population = None
    if sample is not None:
        stratum_population = {s: int(v["population"]) for s, v in (sample.get("strata") or {}).items()}
        sampled = {str(c["id"]) for c in sample.get("cases") or []}
        copies = 0
        for c in sample.get("cases") or []:  # cases that read the same as a sampled one share its verdict
            sampled.update(str(i) for i in c.get("same", ()))
            if str(c["id"]) in human:
                human.update({str(i): human[str(c["id"])] for i in c.get("same", ())})
                copies += len(c.get("same", ()))
        if copies:
            notes.append(
                f"{copies} reviewed case(s) read the same as another and share its verdict (variants of a "
                "compiled-program comparison): the intervals count them as cases of their own and are too narrow "
                "for the stage as a whole; the comparison report's figures per variant have no such copies"
            )
        extra = sorted(set(human) - sampled)
        if extra:
            # Outside the drawn sample a case's weight is unknown: counting it would skew its stratum.
            notes.append(f"{len(extra)} reviewed case(s) are not in review/sample.json; left out")
            human = {i: v for i, v in human.items() if i in sampled}
        counted: dict[str, int] = {}
        for c in population:
            counted[c.stratum] = counted.get(c.stratum, 0) + 1
        changed = sorted(
            s for s in set(counted) | set(stratum_population) if counted.get(s, 0) != stratum_population.get(s, 0)
        )
        if changed:
            logger.warning(
                "run %s: stratum sizes in sample.json differ from the cases now in the run store (%s); "
                "weighting by sample.json",
                run_id,
                ", ".join(changed),
            )
            notes.append("stratum sizes differ between sample.json and the run store: " + ", ".join(changed))
    elif human:
        notes.append("no review/sample.json: strata and their sizes are taken from the cases' statuses")
    eval_ids = evaluation_runs(run_id, store.dir.parent)
    failures = target_failures(eval_ids, store.dir.parent)
    return RunInputs(
        run_id,
        population,
        judged,
        human,
        stratum_population,
        annotators,
        failures,
        eval_ids,
        notes,
        reviewer_kinds(store.dir),
        dict(sorted(judge_read.items())),
    )
