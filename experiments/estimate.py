"""What a config will take before it runs: calls, prompt and completion tokens, dollars and time per stage and model.

No table of calls per case could be honest here: how many calls a case takes depends on what the pivot answers
(a seed it gets wrong closed-book is not attacked; a rewrite that fails its checks is asked again), and tokens
depend on the rows. So the estimate runs a short pilot, the config's first few cases as the run would take them,
measures each model's calls and tokens per case, and scales them to the data's number of cases.

The pilot runs in a scratch run store and MLflow store, with the real call cache: a call the cache answers costs
nothing and counts the tokens its reply took when made; a call the pilot sends is cached, so the run that follows
does not pay for it again. The estimate says which figures came from which. Time is measured on the calls a
model really answered (a cached call takes none); a provider's model time is divided by `run.threads`.
A task that runs in stages (the bench) is measured per stage from its ledger; otherwise a model's stage is its
role (pivot: generate, judge: validate, targets: evaluate). The judge's calibration is a stage of its own in
either: its controls are the same calls whatever the data's size, so they are counted as the pilot made them, not
scaled. Wall time adds up what each stage spent outside LM calls in the pilot (loading models and indexes,
tracking), taken as a fixed cost, to the scaled LM time, local models' divided by the llama.cpp contexts they
decode on (the controls are judged one after another: their time is not divided).

A run that is part done (its folder holds finished cases) is estimated for the cases left only. The pilot's
first cases are then mostly the finished ones: the call cache answers them with the tokens they really took, at
no cost, and the figures per case are scaled to the cases left. Cached calls take no time: where the pilot
answered none, the time is unknown rather than zero. A bench that is part done is estimated per stage: a stage its
ledger records finished costs nothing (the resume reuses it), and one that began is scaled to the items it has
left.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from experiments.bench.progress import Progress, progress, stage_items
from experiments.config import ExperimentConfig
from experiments.launch import run_experiment
from experiments.lm.prices import dollars, is_local
from experiments.run_store import RunStore
from experiments.runner import load_data

DEFAULT_PILOT = 5
STAGE_OF_ROLE = {"pivot": "generate", "pivots": "generate", "judge": "validate", "targets": "evaluate"}
CALIBRATION = "calibration"
CALIBRATION_USAGE = "judge_calibration.usage."  # experiments/judging/calibration.py


@dataclass
class Line:
    """One stage and model: the pilot's figures and the run's, scaled from them."""

    stage: str
    label: str
    model: str
    pilot_calls: int = 0  # answered by the model
    pilot_cached: int = 0  # answered by the call cache
    pilot_prompt: int = 0
    pilot_completion: int = 0
    pilot_seconds: float = 0.0
    calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    dollars: float | None = None
    seconds: float | None = None
    fixed: bool = False  # the same calls whatever the data's size, one after another (the judge's calibration)


@dataclass
class Estimate:
    config: str
    cases: int  # the cases the estimate is for: those left, for a run that is part done
    pilot_cases: int
    threads: int
    lines: list[Line] = field(default_factory=list)
    contexts: int = 1  # llama.cpp contexts a local model decodes on at once
    fixed_seconds: float = 0.0  # the pilot's time outside LM calls, not scaled
    finished: int = 0  # cases the run's folder already holds
    run_id: str | None = None
    stages_finished: list[str] = field(default_factory=list)  # a bench's, reused on resuming
    stages_part_done: dict[str, int] = field(default_factory=dict)  # a bench's begun stages: the items each holds

    @property
    def dollars(self) -> float | None:
        costs = [line.dollars for line in self.lines]
        return None if any(c is None for c in costs) else sum(costs)

    @property
    def wall_seconds(self) -> float | None:
        """Local models decode one call at a time per context; provider calls run `threads` at once."""
        if any(line.seconds is None for line in self.lines):
            return None
        if not self.lines:
            return 0.0  # nothing left to run
        lm = sum(
            line.seconds if line.fixed else line.seconds / (self.contexts if is_local(line.model) else self.threads)
            for line in self.lines
        )
        return self.fixed_seconds + lm

    def source(self) -> str:
        """Where the figures come from, in one sentence."""
        real = sum(line.pilot_calls for line in self.lines)
        cached = sum(line.pilot_cached for line in self.lines)
        if self.finished and not self.cases:
            return f"run {self.run_id}: all {self.finished} cases finished; nothing left to run"
        staged = len(self.stages_finished), len(self.stages_part_done)
        if staged[0] and not staged[1] and not self.lines:
            return f"run {self.run_id}: every stage that calls a model finished ({staged[0]}); nothing left to run"
        of = (
            f"{self.pilot_cases} cases to {self.cases} cases left ({self.finished} finished in {self.run_id})"
            if self.finished
            else f"{self.pilot_cases} of {self.cases} cases"
        )
        if any(staged):
            of += f", the stages left only ({staged[0]} finished, {staged[1]} part done in {self.run_id})"
        return (
            f"scaled from a pilot of {of}: {real} calls answered by the models, "
            f"{cached} by the call cache (tokens as when made; the run replays them free)"
            + ("; time from answered calls only" if cached else "")
        )

    def as_dict(self) -> dict:
        return {
            "config": self.config,
            "cases": self.cases,
            "pilot_cases": self.pilot_cases,
            "finished": self.finished,
            "run_id": self.run_id,
            "stages_finished": self.stages_finished,
            "stages_part_done": self.stages_part_done,
            "source": self.source(),
            "dollars": self.dollars,
            "wall_seconds": self.wall_seconds,
            "fixed_seconds": self.fixed_seconds,
            "lines": [vars(line) for line in self.lines],
        }


@contextmanager
def _scratch_stores() -> Iterator[Path]:
    """A run store and an MLflow store of the pilot's own, gone afterwards; the call cache stays the user's."""
    keys = ("REEVAL_RUNS_DIR", "MLFLOW_TRACKING_URI")
    saved = {key: os.environ.get(key) for key in keys}
    with tempfile.TemporaryDirectory(prefix="reeval-pilot-") as tmp:
        os.environ["REEVAL_RUNS_DIR"] = str(Path(tmp) / "runs")
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{Path(tmp) / 'mlflow.db'}"
        try:
            yield Path(tmp)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def _models(config: ExperimentConfig, staged: bool = False) -> dict[str, tuple[str, object]]:
    """By the label a run's metrics use (`lm.<label>.…`; a staged task's ledger: `pivot/<label>`, `judge`,
    `target/<label>`): the role, and the model's config."""
    out = {}
    for where, entry in config.models.entries().items():
        role = where.split(".")[1]
        if role == "judge" or (role == "pivot" and not staged):
            label = role
        else:
            label = f"{role.removesuffix('s')}/{entry.label}"
        out[label] = (role, entry)
    return out


def _usage(metrics: dict[str, float], label: str) -> dict[str, float]:
    prefix = f"lm.{label}."
    return {k[len(prefix) :]: v for k, v in metrics.items() if k.startswith(prefix) and "." not in k[len(prefix) :]}


def _calibration(metrics: dict[str, float]) -> dict[str, float]:
    """What the judge spent on its calibration controls, as `_usage` gives a model's."""
    return {k[len(CALIBRATION_USAGE) :]: v for k, v in metrics.items() if k.startswith(CALIBRATION_USAGE)}


def _asked(usage: dict[str, float]) -> bool:
    return usage.get("calls", 0) + usage.get("cached_calls", 0) >= 1


def _lines(metrics: dict[str, float], models: dict, scale: float, stage: str | None = None) -> list[Line]:
    """Per model of a pilot (or one of its stages), its calls scaled by `scale`; the judge's calibration apart and
    unscaled. `stage`: the stage's name, else a model's role names it."""
    calibration = _calibration(metrics)
    out = []
    for label, (role, entry) in models.items():
        usage = _usage(metrics, label)
        spent = calibration if role == "judge" else {}
        if _asked(spent):
            out.append(_fixed(label, entry, spent))
        per_case = {k: v - spent.get(k, 0.0) for k, v in usage.items()}
        if _asked(per_case):
            out.append(_line(stage or STAGE_OF_ROLE.get(role, role), label, entry, per_case, scale))
    return out


def _fixed(label: str, entry, usage: dict[str, float]) -> Line:
    """The judge's calibration as the pilot judged it. The run asks the very same controls, and the pilot's answered
    calls are cached for it: what the pilot paid is all they cost (a control the cache answered costs nothing, in
    the pilot as in the run), and their time is the pilot's answered calls'."""
    line = _line(CALIBRATION, label, entry, usage, 1.0)
    line.fixed = True
    paid = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
    line.dollars = dollars(entry.name, *paid, entry.price)
    line.seconds = line.pilot_seconds
    return line


def _line(stage: str, label: str, entry, usage: dict[str, float], scale: float) -> Line:
    line = Line(stage, label, entry.name)
    line.pilot_calls = int(usage.get("calls", 0))
    line.pilot_cached = int(usage.get("cached_calls", 0))
    line.pilot_prompt = int(usage.get("prompt_tokens", 0) + usage.get("cached_prompt_tokens", 0))
    line.pilot_completion = int(usage.get("completion_tokens", 0) + usage.get("cached_completion_tokens", 0))
    line.pilot_seconds = float(usage.get("seconds", 0.0))
    line.calls = (line.pilot_calls + line.pilot_cached) * scale
    line.prompt_tokens = line.pilot_prompt * scale
    line.completion_tokens = line.pilot_completion * scale
    line.dollars = dollars(entry.name, round(line.prompt_tokens), round(line.completion_tokens), entry.price)
    if line.pilot_calls:
        line.seconds = line.pilot_seconds / line.pilot_calls * line.calls
    elif not line.calls:
        line.seconds = 0.0
    return line


def _stage_scale(stage: str, scale: float, pilot_items: dict[str, int], done: Progress) -> float:
    """A stage's scale: to the items it has left where the run began it (its items, as the pilot's, scaled)."""
    began, piloted = done.items.get(stage, 0), pilot_items.get(stage, 0)
    if not began or not piloted:
        return scale
    return max(0.0, piloted * scale - began) / piloted


def finished_cases(config: ExperimentConfig, examples: list, run_id: str | None = None) -> tuple[str, int]:
    """The run a config would resume (or `run_id`), and how many of `examples` its folder holds finished. A staged
    task's folder keeps its stages' cases, not the run's: none counted there."""
    run_id = run_id or RunStore.new_id(str(config.name), config.digest())
    store = RunStore(run_id)
    if not store.cases_path.exists():
        return run_id, 0
    done = store.finished_ids()
    return run_id, sum(1 for e in examples if e.id in done)


def _pilot_data(config: ExperimentConfig, pilot_cases: int, cases: int) -> dict:
    """The pilot's data: the first `pilot_cases` rows, and the same share of a second data set the task reads (the
    bench's counterfactual questions), so every stage is scaled by about the same factor."""
    update = {"data": config.data.model_copy(update={"limit": pilot_cases})}
    options = config.options if isinstance(config.options, dict) else None
    second = (options or {}).get("counterfactual_data")
    if isinstance(second, dict) and cases:
        limit = second.get("limit")
        if limit:
            share = max(1, round(limit * pilot_cases / cases))
            update["options"] = {**options, "counterfactual_data": {**second, "limit": min(limit, share)}}
    return update


def estimate(
    config: ExperimentConfig, pilot: int = DEFAULT_PILOT, run_id: str | None = None, fresh: bool = False
) -> Estimate:
    """Run the config's first `pilot` cases in scratch stores and scale what each model spent to the data, or to
    the cases left where the config's run (or `run_id`) is part done; `fresh`: a new run, every case."""
    examples = load_data(config).examples
    run_id, finished = (None, 0) if fresh else finished_cases(config, examples, run_id)
    total = len(examples)
    cases = total - finished
    pilot_cases = max(1, min(pilot, total))
    # No cap on the pilot: it is a few cases, and the cap is the run's (a pilot stopped by it measures nothing).
    run = config.run.model_copy(update={"max_cost": None})
    pilot_config = config.model_copy(update={**_pilot_data(config, pilot_cases, total), "run": run})
    result = Estimate(str(config.name), cases, pilot_cases, config.run.threads)
    result.contexts = config.run.core_split().contexts
    if finished:
        result.finished, result.run_id = finished, run_id
    if not cases:
        return result
    scale = cases / pilot_cases
    with _scratch_stores():
        outcome = run_experiment(pilot_config, fresh=True, progress=False)
        ledger = RunStore(outcome.run_id).dir / "stages.json"
        stages = json.loads(ledger.read_text()) if ledger.exists() else {}
        pilot_items = {stage: stage_items(outcome.run_id, stage) for stage in stages}
    if stages:  # a staged task: each stage's own usage, from its ledger
        done = progress(run_id, stages) if run_id else Progress()
        if done:
            result.run_id, result.stages_finished, result.stages_part_done = run_id, done.finished, done.items
        staged = _models(config, staged=True)
        for stage, entry in stages.items():
            if stage in done.finished:
                continue  # reused on resuming: no call, no model loaded
            metrics = entry.get("metrics", {})
            result.lines += _lines(metrics, staged, _stage_scale(stage, scale, pilot_items, done), stage)
            result.fixed_seconds += _outside_lm(metrics, staged, result.contexts, config.run.threads)
        return result
    models = _models(config)
    result.lines = _lines(outcome.metrics, models, scale)
    result.fixed_seconds = _outside_lm(outcome.metrics, models, result.contexts, config.run.threads)
    return result


def _outside_lm(metrics: dict[str, float], models: dict, contexts: int, threads: int) -> float:
    """The wall seconds of a pilot (or one of its stages) not spent in LM calls. Local calls overlap on their
    contexts and provider calls on the run's threads, so their summed seconds are divided as the wall time is; the
    calibration controls are judged one after another."""
    serial = float(metrics.get(f"{CALIBRATION_USAGE}seconds", 0.0))
    lm = serial
    for label, (role, entry) in models.items():
        seconds = float(metrics.get(f"lm.{label}.seconds", 0.0)) - (serial if role == "judge" else 0.0)
        lm += max(0.0, seconds) / (contexts if is_local(entry.name) else threads)
    return max(0.0, float(metrics.get("wall_seconds", 0.0)) - lm)


def rows(est: Estimate) -> tuple[list[str], list[list[str]]]:
    """The estimate as a table: a row per stage and model, and the total."""
    # Within 80 columns: "prompt" and "completion" count tokens.
    header = ["stage", "model", "calls/case", "calls", "prompt", "completion", "dollars", "time"]

    def money(value: float | None) -> str:
        return "no price" if value is None else f"${value:.4f}"

    def clock(value: float | None) -> str:
        if value is None:
            return "unknown"
        return (
            f"{value / 3600:.1f} h" if value >= 3600 else f"{value / 60:.1f} min" if value >= 60 else f"{value:.0f} s"
        )

    table = [
        [
            line.stage,
            line.label,
            "fixed" if line.fixed else f"{line.calls / est.cases:.1f}" if est.cases else "0",
            f"{math.ceil(line.calls):,}",
            f"{round(line.prompt_tokens):,}",
            f"{round(line.completion_tokens):,}",
            money(line.dollars),
            clock(line.seconds),
        ]
        for line in est.lines
    ]
    total_calls = sum(line.calls for line in est.lines)
    table.append(
        [
            "total",
            f"{est.cases} cases",
            f"{total_calls / est.cases:.1f}" if est.cases else "0",
            f"{math.ceil(total_calls):,}",
            f"{round(sum(line.prompt_tokens for line in est.lines)):,}",
            f"{round(sum(line.completion_tokens for line in est.lines)):,}",
            money(est.dollars),
            clock(est.wall_seconds) + " wall",
        ]
    )
    return header, table
