"""One calibrated decision per case: the judge's verdict and the plausibility signals (metrics/plausibility.py)
stacked into an acceptance score, cut where reviewed cases say precision holds.

The score is a logistic regression over standardised features, fitted on the verdicts of reviewed cases of
development rows and measured on reviewed cases of held-out rows (scripts/measure_acceptance.py writes both
and the parameters, experiments/judging/params/acceptance.<task>.json). The threshold is the lowest score at
which cross-validated predictions on the fitting rows reach the target precision, so the held-out figure is an
honest estimate of what the cut keeps.

Signals cost a few hundred scored tokens a case, so they are kept per run in `acceptance_signals.jsonl`,
keyed by the case's text and the scorer: an interrupted pass resumes and a refit needs no model.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from experiments import run_lock, task_registry
from experiments.lm.token_scorer import shared_scorer
from experiments.run_store import RunStore
from metrics.plausibility import VERSION as SIGNALS_VERSION
from metrics.plausibility import passage_signals
from metrics.status import status_counts

logger = logging.getLogger(__name__)

JUDGE_FEATURE = "judge_p"
KIND_FEATURES = ("answer_number", "answer_name")
SIGNALS_FILE = "acceptance_signals.jsonl"
PARAMS_DIR = Path(__file__).parent / "params"
DEFAULT_SCORER = "qwen2.5-0.5b"


def tasks() -> tuple[str, ...]:
    """The generators an acceptance model can decide for: those whose entry names the signals it reads."""
    return task_registry.names(lambda r: bool(r.acceptance_signals))


def signals_read(task: str) -> tuple[str, ...]:
    return task_registry.get(task).acceptance_signals


def params_path(task: str) -> Path:
    return PARAMS_DIR / f"acceptance.{task}.json"


def load_params(task: str) -> dict | None:
    path = params_path(task)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def passed_checks(record: dict) -> bool:
    """The population the decision is about: cases the string checks passed and the judge decided."""
    status = str(record.get("status", ""))
    return (
        record.get("task") in tasks()
        and bool(record.get("judge"))
        and (status in ("accepted", "rejected:acceptance") or status.startswith("rejected:judge"))
    )


def case_inputs(record: dict) -> tuple[str, str, str, str, str | None]:
    """question, original passage, perturbed passage, old answer, new answer (None when the case has none)."""
    old = (record.get("original_answers") or [""])[0]
    # A case whose expected answer is a verdict ("unknown") has no new answer to score.
    new = (record.get("answers") or [""])[0] if task_registry.get(record["task"]).answer == "span" else None
    return record["question"], record["original_context"], record["context"], old, new


def case_key(record: dict, scorer: str) -> str:
    payload = json.dumps([scorer, SIGNALS_VERSION, *case_inputs(record)], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


class SignalCache:
    """`acceptance_signals.jsonl` of one folder: {"key", "signals"} or {"key", "error"} per line."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: dict[str, dict] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self.entries[entry["key"]] = entry

    def put(self, key: str, entry: dict) -> None:
        self.entries[key] = {"key": key, **entry}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(self.entries[key], ensure_ascii=False) + "\n")


def read_signals(
    records: Iterable[dict], score: Callable[[str], Sequence], scorer: str, cache: SignalCache, progress: bool = True
) -> dict[str, dict]:
    """Signals of every record that passed the checks, by record id; read once per distinct text."""
    from tqdm import tqdm

    todo = [r for r in records if passed_checks(r)]
    out = {}
    for record in tqdm(todo, desc="acceptance signals", unit="case", disable=not progress):
        key = case_key(record, scorer)
        if key not in cache.entries:
            try:
                cache.put(key, {"signals": passage_signals(score, *case_inputs(record))})
            except ValueError as exc:  # a passage longer than the scorer reads: no signals, said why
                cache.put(key, {"error": f"{type(exc).__name__}: {exc}"})
        out[record["id"]] = cache.entries[key]
    return out


def judge_p(record: dict) -> float:
    judge = record.get("judge") or {}
    p = judge.get("p_valid")
    if p is None:
        p = 1.0 if judge.get("if") and judge.get("only_if") is not False else 0.0
    return float(p)


def answer_kind(answer: str) -> tuple[float, float]:
    """(a number or date, a name) for the removed answer. The kind decides how much of a passage depends on the
    answer: a year can change while the rest reads on, a person or a place comes with everything the passage
    says about them (read blind on development rows: 82% of accepted number and date swaps valid, 46% of names)."""
    number = bool(re.search(r"\d", answer))
    name = not number and any(w[:1].isupper() for w in answer.split())
    return float(number), float(name)


def feature_vector(task: str, record: dict, signals: dict) -> list[float]:
    kind = answer_kind((record.get("original_answers") or [""])[0])
    return [float(signals[name]) for name in signals_read(task)] + [judge_p(record), *kind]


def feature_names(task: str) -> list[str]:
    return [*signals_read(task), JUDGE_FEATURE, *KIND_FEATURES]


def score(params: dict, features: Sequence[float]) -> float:
    z = params["intercept"] + sum(
        w * (x - m) / s for w, x, m, s in zip(params["coef"], features, params["mean"], params["scale"], strict=True)
    )
    return 1.0 / (1.0 + math.exp(-z))


def fit(features: list[list[float]], labels: list[bool], regularisation: float = 0.5) -> dict[str, Any]:
    """Standardised L2 logistic regression; the weights are plain lists so the decision needs no library."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    x = np.asarray(features, dtype=float)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=regularisation, max_iter=1000).fit((x - mean) / scale, np.asarray(labels))
    return {
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "coef": model.coef_[0].tolist(),
        "intercept": float(model.intercept_[0]),
    }


def cross_validated(features: list[list[float]], labels: list[bool], folds: int = 5, seed: int = 0) -> list[float]:
    """Each row's score from a model fitted without it (folds drawn at random, seeded)."""
    import random

    order = list(range(len(labels)))
    random.Random(seed).shuffle(order)
    out = [0.0] * len(labels)
    for k in range(folds):
        held = set(order[k::folds])
        train = [i for i in order if i not in held]
        params = fit([features[i] for i in train], [labels[i] for i in train])
        for i in held:
            out[i] = score(params, features[i])
    return out


def threshold_for(scores: Sequence[float], labels: Sequence[bool], precision: float, min_kept: int = 10) -> float:
    """The lowest cut whose kept cases reach `precision`, among cuts that keep at least `min_kept` cases (a
    cut above a handful of cases measures nothing); 1.0 (keep nothing) when none does."""
    pairs = sorted(zip(scores, labels, strict=True), reverse=True)
    best, valid = 1.0, 0
    for n, (s, label) in enumerate(pairs, start=1):
        valid += label
        if n >= min(min_kept, len(pairs)) and valid / n >= precision:
            best = s
    return best


def best_cut(scores: Sequence[float], labels: Sequence[bool], min_share: float = 0.2) -> float:
    """The cut with the highest precision among cuts that keep at least `min_share` of the cases (ties: the
    lower cut, which keeps more)."""
    pairs = sorted(zip(scores, labels, strict=True), reverse=True)
    least = max(1, math.ceil(min_share * len(pairs)))
    best, best_precision, valid = 1.0, -1.0, 0
    for n, (s, label) in enumerate(pairs, start=1):
        valid += label
        if n >= least and valid / n >= best_precision:
            best, best_precision = s, valid / n
    return best


def decide(params: dict, record: dict, signals_entry: dict) -> dict:
    """The record's `acceptance` field: its score, the cut and the signals it rests on."""
    if "signals" not in signals_entry:
        return {"score": None, "accepted": False, "error": signals_entry.get("error", "no signals")}
    features = feature_vector(record["task"], record, signals_entry["signals"])
    p = score(params, features)
    return {
        "score": round(p, 4),
        "threshold": params["threshold"],
        "accepted": p >= params["threshold"],
        "signals": signals_entry["signals"],
        "model": params["name"],
    }


class AcceptanceDecision:
    """The decision a run applies after its judge: signals read with the scorer its parameters were fitted
    with, the stacked score, the cut. A case below the cut is `rejected:acceptance`; a case the judge alone
    rejected but the score keeps is accepted (the judge's verdict is one of the score's inputs)."""

    def __init__(self, task: str, params: dict, score_text: Callable[[str], Sequence] | None = None):
        self.task = task
        self.params = params
        self._score_text = score_text

    @classmethod
    def shipped(cls, task: str) -> AcceptanceDecision | None:
        params = load_params(task)
        return cls(task, params) if params is not None else None

    def _scorer(self) -> Callable[[str], Sequence]:
        if self._score_text is None:
            self._score_text = shared_scorer(self.params["scorer"])
        return self._score_text

    def apply(self, record: dict) -> dict:
        if not passed_checks(record):
            return record
        try:
            entry = {"signals": passage_signals(self._scorer(), *case_inputs(record))}
        except ValueError as exc:
            entry = {"error": f"{type(exc).__name__}: {exc}"}
        decision = decide(self.params, record, entry)
        status = "accepted" if decision["accepted"] else "rejected:acceptance"
        return {**record, "acceptance": decision, "status": status}


def accept_run(run_id: str, progress: bool = True) -> dict[str, dict[str, int]]:
    """Apply the shipped decision to a finished run: every case that passed the checks gets its `acceptance`
    and the status it gives, appended as the seed's next attempt (the first status stays in
    `status_before_acceptance`). Signals are kept in the run's acceptance_signals.jsonl, so an interrupted
    pass resumes. Statuses before and after, counted."""
    with run_lock.hold(RunStore(run_id).dir):  # it appends to the run's checkpoint: one writer at a time
        return _accept_run(run_id, progress)


def _accept_run(run_id: str, progress: bool) -> dict[str, dict[str, int]]:
    store = RunStore(run_id)
    records = store.records()
    tasks = {r.get("task") for r in records if passed_checks(r)}
    decisions = {}
    for task in sorted(t for t in tasks if t):
        params = load_params(task)
        if params is None:
            raise ValueError(f"run {run_id}: no acceptance parameters ship for {task!r} (only {', '.join(tasks())})")
        decisions[task] = AcceptanceDecision(task, params)
    if not decisions:
        raise ValueError(f"run {run_id}: no judged case of {' or '.join(tasks())} to decide")
    before = {**status_counts(records, "rejected"), "accepted": sum(r["status"] == "accepted" for r in records)}
    cache = SignalCache(store.dir / SIGNALS_FILE)
    todo = [r for r in records if passed_checks(r) and "acceptance" not in r]
    first = next(iter(decisions.values()))
    signals = read_signals(todo, first._scorer(), first.params["scorer"], cache, progress=progress)
    updated = {}
    for r in todo:
        decision = decide(decisions[r["task"]].params, r, signals[r["id"]])
        status = "accepted" if decision["accepted"] else "rejected:acceptance"
        updated[r["id"]] = {**r, "acceptance": decision, "status": status, "status_before_acceptance": r["status"]}
    seeds: dict[str, list[dict]] = {}
    for r in records:
        seeds.setdefault(r.get("seed_id", r["id"]), []).append(updated.get(r["id"], r))
    for group in seeds.values():  # a seed's records go back whole: the store keeps each seed's latest attempt
        if any(r["id"] in updated for r in group):
            store.append([{k: v for k, v in r.items() if k not in ("attempt", "batch_size")} for r in group])
    store.close()
    final = store.records()
    after = {**status_counts(final, "rejected"), "accepted": sum(r["status"] == "accepted" for r in final)}
    return {"before": before, "after": after}
