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
role (pivot: generate, judge: validate, targets: evaluate).
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

from experiments.config import ExperimentConfig
from experiments.launch import run_experiment
from experiments.lm.prices import dollars, is_local
from experiments.run_store import RunStore
from experiments.runner import load_data

DEFAULT_PILOT = 5
STAGE_OF_ROLE = {"pivot": "generate", "pivots": "generate", "judge": "validate", "targets": "evaluate"}


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


@dataclass
class Estimate:
    config: str
    cases: int
    pilot_cases: int
    threads: int
    lines: list[Line] = field(default_factory=list)

    @property
    def dollars(self) -> float | None:
        costs = [line.dollars for line in self.lines]
        return None if any(c is None for c in costs) else sum(costs)

    @property
    def wall_seconds(self) -> float | None:
        """Local models decode one call at a time per context; provider calls run `threads` at once."""
        if any(line.seconds is None for line in self.lines):
            return None
        return sum(line.seconds / (1 if is_local(line.model) else self.threads) for line in self.lines)

    def source(self) -> str:
        """Where the figures come from, in one sentence."""
        real = sum(line.pilot_calls for line in self.lines)
        cached = sum(line.pilot_cached for line in self.lines)
        return (
            f"scaled from a pilot of {self.pilot_cases} of {self.cases} cases: {real} calls answered by the models, "
            f"{cached} by the call cache (tokens as when made; the run replays them free)"
            + ("; time from answered calls only" if cached else "")
        )

    def as_dict(self) -> dict:
        return {
            "config": self.config,
            "cases": self.cases,
            "pilot_cases": self.pilot_cases,
            "source": self.source(),
            "dollars": self.dollars,
            "wall_seconds": self.wall_seconds,
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


def estimate(config: ExperimentConfig, pilot: int = DEFAULT_PILOT) -> Estimate:
    """Run the config's first `pilot` cases in scratch stores and scale what each model spent to the data."""
    cases = len(load_data(config).examples)
    pilot_cases = max(1, min(pilot, cases))
    data = config.data.model_copy(update={"limit": pilot_cases})
    # No cap on the pilot: it is a few cases, and the cap is the run's (a pilot stopped by it measures nothing).
    run = config.run.model_copy(update={"max_cost": None})
    pilot_config = config.model_copy(update={"data": data, "run": run})
    result = Estimate(str(config.name), cases, pilot_cases, config.run.threads)
    scale = cases / pilot_cases
    with _scratch_stores():
        outcome = run_experiment(pilot_config, fresh=True, progress=False)
        ledger = RunStore(outcome.run_id).dir / "stages.json"
        stages = json.loads(ledger.read_text()) if ledger.exists() else {}
    if stages:  # a staged task: each stage's own usage, from its ledger
        for stage, entry in stages.items():
            for label, (_, model) in _models(config, staged=True).items():
                usage = _usage(entry.get("metrics", {}), label)
                if usage.get("calls"):
                    result.lines.append(_line(stage, label, model, usage, scale))
        return result
    for label, (role, entry) in _models(config).items():
        usage = _usage(outcome.metrics, label)
        if usage.get("calls") or usage.get("cached_calls"):
            result.lines.append(_line(STAGE_OF_ROLE.get(role, role), label, entry, usage, scale))
    return result


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
            f"{line.calls / est.cases:.1f}" if est.cases else "0",
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
