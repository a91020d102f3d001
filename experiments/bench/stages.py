"""Stages of a bench: each one a nested MLflow run, its items checkpointed in its own run store, and
its completion recorded in the bench's ledger (runs/<bench id>/stages.json).

A stage counts as finished only for the inputs it finished on (a digest of them): a bench resumed
after a kill skips every finished stage without loading or calling anything, and picks an
unfinished one up from its checkpoint. The ledger also keeps what each stage cost (LM calls,
tokens, seconds), so a resumed bench still reports the whole run's cost.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from experiments import run_lock, tracking
from experiments.case_loop import map_cases
from experiments.executors.local import LocalExecutor
from experiments.lm.engine import release_models
from experiments.lm.usage import run_cost
from experiments.review.carry import carry_reviews
from experiments.run_store import RunStore, stage_run_id
from experiments.validity.inputs import metric_key

logger = logging.getLogger(__name__)

LEDGER_FILE = "stages.json"
USAGE_KEYS = ("calls", "prompt_tokens", "completion_tokens", "seconds")
# What the call cache answered, where a model counts it (a provider's meter; local engines never see those calls):
# per model only, so an estimate of a stage sees the calls a pilot's cache answered as its single runs' does.
CACHED_KEYS = ("cached_calls", "cached_prompt_tokens", "cached_completion_tokens")


def digest(items: Iterable[Any]) -> str:
    """What a stage's result depends on, as a short hash."""
    blob = json.dumps(list(items), sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


class Ledger:
    """stages.json: {stage: {inputs, metrics, finished_at}}, replaced atomically on every write."""

    def __init__(self, path: Path):
        self.path = path
        self.stages: dict[str, dict] = json.loads(path.read_text()) if path.exists() else {}

    def finished(self, stage: str, inputs: str) -> dict | None:
        entry = self.stages.get(stage)
        return entry if entry is not None and entry.get("inputs") == inputs else None

    def finish(self, stage: str, inputs: str, metrics: dict[str, float]) -> dict:
        entry = {
            "inputs": inputs,
            "metrics": metrics,
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        self.stages[stage] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(self.stages, indent=1, sort_keys=True))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)
        return entry


def clean_metrics(metrics: dict[str, float]) -> dict[str, float]:
    """MLflow refuses some characters model names carry (":" in "llama3.1:8b")."""

    return {metric_key(k): float(v) for k, v in metrics.items() if v == v}  # v == v: not NaN


def usage_totals(lms: dict[str, Any]) -> dict[str, float]:
    """Real (uncached) LM work so far, per LM label and in total, and per label what the call cache answered
    where the model counts it (local engines count real work only: cached calls never reach them).
    `lm.prompt_tokens_read` are the prompt tokens llama.cpp decoded, `lm.prompt_tokens_counted` the prompt
    tokens sent to the models that count them."""
    out: dict[str, float] = dict.fromkeys((f"lm.{k}" for k in USAGE_KEYS), 0.0)
    out["lm.prompt_tokens_read"] = out["lm.prompt_tokens_counted"] = 0.0
    usages = {label: resolved.usage() for label, resolved in lms.items()}
    for label, usage in usages.items():
        for key in USAGE_KEYS:
            value = float(usage.get(key, 0.0))
            out[f"lm.{label}.{key}"] = value
            out[f"lm.{key}"] += value
        for key in CACHED_KEYS:
            if key in usage:
                out[f"lm.{label}.{key}"] = float(usage[key])
        if "cost_usd" in usage:
            out[f"lm.{label}.cost_usd"] = float(usage["cost_usd"])
        if "prompt_tokens_read" in usage:
            out[f"lm.{label}.prompt_tokens_read"] = float(usage["prompt_tokens_read"])
            out["lm.prompt_tokens_read"] += float(usage["prompt_tokens_read"])
            out["lm.prompt_tokens_counted"] += float(usage.get("prompt_tokens", 0.0))
    # The same rule as a run's cost_usd: a model that answered without a price makes the total unknown.
    out.update({f"lm.{k}": v for k, v in run_cost(usages).items()})
    return out


def stage_spend(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """A stage's dollars, per model label and in total (`lm.cost_usd`), from `usage_totals` before and after it.
    Zero is a figure here (a local model's stage costs nothing), and an unknown one is left out: a model that
    answered the stage's calls unpriced has no `cost_usd` after it, and the total then has none either."""
    out = {}
    for key, value in after.items():
        if key.endswith("cost_usd"):
            out[key] = round(max(0.0, value - before.get(key, 0.0)), 8)
    if "lm.cost_usd" not in after:
        out.pop("lm.cost_usd", None)
    return out


def read_shares(diffs: dict[str, float]) -> dict[str, float]:
    """Prompt tokens read ÷ sent over a stage, in total and per model label, from its usage differences
    (`usage_totals` after − before): only the models that count their reads, only where prompts were sent."""
    out = {}
    if diffs.get("lm.prompt_tokens_counted"):
        out["lm.prompt_read_share"] = round(diffs["lm.prompt_tokens_read"] / diffs["lm.prompt_tokens_counted"], 4)
    for key, read in diffs.items():
        label = key[len("lm.") : -len(".prompt_tokens_read")]
        if key.endswith(".prompt_tokens_read") and label and diffs.get(f"lm.{label}.prompt_tokens"):
            out[f"lm.{label}.prompt_read_share"] = round(read / diffs[f"lm.{label}.prompt_tokens"], 4)
    return out


class StageRunner:
    """Runs stages in order under the bench's parent MLflow run."""

    def __init__(self, bench: RunStore, lms: dict[str, Any], run_id: str, retry_errors: bool = False):
        self.bench = bench
        self.ledger = Ledger(bench.dir / LEDGER_FILE)
        self.lms = lms
        self.run_id = run_id
        self.retry_errors = retry_errors
        self.ran: dict[str, bool] = {}  # stage -> ran in this invocation (False: reused from the ledger)

    def store(self, stage: str) -> RunStore:
        return RunStore(stage_run_id(self.bench.run_id, stage), root=self.bench.dir.parent)

    def run(
        self, stage: str, inputs: str, work: Callable[[RunStore], dict[str, float]], uses: Iterable[Any] = ()
    ) -> dict[str, float]:
        """`work(store)` does what is left (its store holds the checkpoint) and returns the stage's metrics.
        `uses`: the models (ResolvedLMs) the stage calls; a stage that runs starts with every other local
        model of this process released, so the process holds one stage's models at a time."""
        import mlflow

        store = self.store(stage)
        done = self.ledger.finished(stage, inputs)
        earlier = self.ledger.stages.get(stage)
        superseded = None
        if done is None and earlier is not None:
            store, superseded = self._supersede(stage, store, earlier["inputs"])
        if done is not None and not (self.retry_errors and done["metrics"].get("errors", 0)):
            with tracking.nested_run(
                stage, {tracking.RUN_ID_TAG: self.run_id, "reeval.stage": stage, "reeval.stage.reused": "true"}
            ):
                mlflow.log_metrics(clean_metrics(done["metrics"]))
            self.ran[stage] = False
            logger.info("stage %s: finished earlier, reused", stage)
            return done["metrics"]
        released = release_models(keep={lm.config.name for lm in uses})
        if released:
            logger.info("stage %s: released %s (no model of this stage)", stage, ", ".join(released))
        before = usage_totals(self.lms)
        started, cpu_started = time.perf_counter(), time.process_time()
        with tracking.nested_run(
            stage, {tracking.RUN_ID_TAG: self.run_id, "reeval.stage": stage, "reeval.stage.reused": "false"}
        ):
            try:
                # A stage's folder is a run of its own too (`reeval rejudge <bench>/<stage>`).
                with run_lock.hold(store.dir):
                    metrics = dict(work(store))
            finally:
                store.close()
            if superseded is not None:
                carry_reviews(superseded, store.dir)
            after = usage_totals(self.lms)
            diffs = {k: after[k] - before.get(k, 0.0) for k in after if not k.endswith("cost_usd")}
            metrics.update({k: round(v, 3) for k, v in diffs.items() if v})
            metrics.update(read_shares(diffs))
            metrics.update(stage_spend(before, after))
            metrics.setdefault("lm.calls", 0.0)
            metrics["wall_seconds"] = round(time.perf_counter() - started, 3)
            # This process's CPU, every thread: local models decode in it (a stage on Ray actors spends theirs).
            metrics["cpu_seconds"] = round(time.process_time() - cpu_started, 3)
            mlflow.log_metrics(clean_metrics(metrics))
        self.ledger.finish(stage, inputs, metrics)
        self.ran[stage] = True
        return metrics

    def _supersede(self, stage: str, store: RunStore, old_inputs: str) -> tuple[RunStore, Path]:
        """A stage finished on other inputs (other seeds, options, program or reader version): its cases
        would be stale, so its directory is kept aside and the stage runs again; unchanged calls come
        from the call cache."""
        aside = store.dir.with_name(f"{store.dir.name}.superseded-{old_inputs}")
        store.close()
        if store.dir.exists():
            if aside.exists():
                shutil.rmtree(aside)
            os.replace(store.dir, aside)
        logger.warning(
            "stage %s: its inputs changed since it finished; the old cases are kept in %s and the "
            "stage runs again (unchanged calls come from the cache)",
            stage,
            aside,
        )
        return self.store(stage), aside


def run_cases(
    unit, examples: list, store: RunStore, config, retry_errors: bool, progress: bool, executor=None
) -> tuple[list[dict], int]:
    """Map `unit.process` over the examples not yet checkpointed (on `executor`, else in this process); the
    store's records of all of them in the order of `examples`, and how many were done now."""

    done = store.finished_ids(retry_errors=retry_errors)
    todo = [e for e in examples if e.id not in done]
    ids, todo_ids = {e.id for e in examples}, {e.id for e in todo}
    earlier = [r for r in store.records() if r["seed_id"] in ids and r["seed_id"] not in todo_ids]
    if executor is None:
        with LocalExecutor(unit, config.run.threads) as local:
            map_cases(local, todo, store, config, progress, earlier, len(examples))
    else:
        map_cases(executor, todo, store, config, progress, earlier, len(examples))
    return in_order([r for r in store.records() if r["seed_id"] in ids], examples), len(todo)


def in_order(records: list[dict], examples: list) -> list[dict]:
    """Records in the order of their seeds in `examples` (a seed's own records keep theirs): a Ray stage
    checkpoints its items as they finish, a local one in order, and what follows must not tell them apart."""
    position = {str(e.id): i for i, e in enumerate(examples)}
    return sorted(records, key=lambda r: position.get(str(r.get("seed_id", r["id"])), len(position)))
