"""The generator a pivot comparison runs, once per pivot: the generator's own task, built with its own options,
so each pivot makes exactly the cases a single-task run with that pivot would (seed selection, checks, judge).

Besides the pivots, a comparison may run the generator's code-made setting ("rules"): the same task with no
LM behind the pivot role, which perturbs every seed (there is no pivot to select them) and fails loudly, as an
error on the case, if anything still asks for a pivot.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import dspy

from experiments import corpus, task_registry
from experiments.call_cache import replayed_usage
from experiments.lm.usage import total_tokens

RULES = "rules"


def comparable(entry: task_registry.Registered) -> bool:
    """A generator with a pivot step: it makes cases from a pivot's output."""
    return entry.generator and "pivot" in getattr(entry.cls, "roles", ())


def is_attack(record: dict) -> bool:
    return not task_registry.is_helper(record.get("case_key", record.get("id", "")))


def generator_options(generator: str, given: dict[str, Any]) -> dict[str, Any]:
    """The options every pivot's generator runs with: the comparison's defaults under what the config gives."""
    return {**task_registry.get(generator).comparison_options, **given}


def rules_options(generator: str, options: dict[str, Any]) -> dict[str, Any]:
    """The rules row's options, or a ValueError naming the generators that have a code-made setting."""
    rules = task_registry.get(generator).rules
    if rules is None:
        with_rules = task_registry.names(lambda r: r.rules is not None)
        raise ValueError(
            f"rules: {generator} has no code-made setting to compare (generators with one: {', '.join(with_rules)})"
        )
    return rules(options)


@dataclass(frozen=True)
class _RulesConfig:
    label: str = RULES
    name: str = RULES


@dataclass(frozen=True)
class RulesPivot:
    """Stands in the pivot role for the code-made row: no LM (a call to one ends the case as an error)."""

    role: str = "pivot"
    config: _RulesConfig = field(default_factory=_RulesConfig)
    lm: Any = None

    def adapter(self):
        return dspy.JSONAdapter()


class NoSeedSelection(dspy.Module):
    """The rules row's seed selection: no pivot answers, so the generator perturbs every seed (`seeds: all`)."""

    def forward(self, question: str, context: str) -> dspy.Prediction:
        return dspy.Prediction(closed_answer="", open_answer="")


# What the judge spent inside the current case, so a pivot's cost leaves it out.
_judge_spent: contextvars.ContextVar[dict | None] = contextvars.ContextVar("judge_spent", default=None)


def _parts(usage: dict) -> tuple[int, int, int]:
    """(total, prompt, completion) tokens of a usage block."""
    prompt = int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0)
    completion = int(usage.get("completion_tokens") or usage.get("output_tokens") or 0)
    return total_tokens(usage), prompt, completion


class MeteredJudge:
    """The run's judge, called as the generator's task calls it, with what it spends kept apart per case."""

    def __init__(self, judge, model: str | None):
        self.judge, self.model = judge, model

    def __call__(self, **kwargs):
        spent = _judge_spent.get()
        started = time.perf_counter()
        # Its own replay scope: a judge reply the cache answered is not counted as the pivot's.
        with dspy.track_usage() as tracker, replayed_usage():
            out = self.judge(**kwargs)
        if spent is not None:
            # The tracker hands live calls on to the enclosing block's: counted there, taken off after.
            live = _parts(tracker.get_total_tokens().get(self.model or "", {}))
            spent["live"] = [a + b for a, b in zip(spent["live"], live, strict=True)]
            spent["seconds"] += time.perf_counter() - started
        return out


def pivot_cost(pivot_model: str | None, judge_model: str | None, run):
    """Runs `run()` and returns (its result, what the pivot spent): tokens (total, prompt, completion) of the
    pivot's calls and of every reply the cache answered in the block, counted as when it was made, and the
    block's seconds, each less the judge's (whose live calls count in the block only when the judge is the
    pivot's own model). The tokens are None where no call left a count."""
    spent = {"live": [0, 0, 0], "seconds": 0.0}
    token = _judge_spent.set(spent)
    started = time.perf_counter()
    try:
        with dspy.track_usage() as tracker, replayed_usage() as replayed:
            result = run()
    finally:
        _judge_spent.reset(token)
    seconds = time.perf_counter() - started
    usages = [tracker.get_total_tokens().get(pivot_model or "", {}), *replayed.usages]
    tokens = [sum(parts) for parts in zip(*(_parts(u) for u in usages), strict=True)]
    if pivot_model is not None and pivot_model == judge_model:
        tokens = [a - b for a, b in zip(tokens, spent["live"], strict=True)]
    # No LM (the rules row) spends nothing; a pivot whose calls left no usage (none replied, or its server reports
    # none) spent an unknown count, and a 0 would read as a free pivot.
    known = pivot_model is None or any(tokens)
    return result, {
        "tokens": tokens[0] if known else None,
        "prompt_tokens": tokens[1] if known else None,
        "completion_tokens": tokens[2] if known else None,
        "seconds": round(max(seconds - spent["seconds"], 0.0), 3),
        "cached_calls": len(replayed.usages),
    }


def build_generator(generator: str, pivot, judge_lm, options: dict[str, Any]):
    """The generator's task for one pivot (or for the rules row, `pivot` a RulesPivot)."""
    entry = task_registry.get(generator)
    lms = {"pivot": pivot, **({"judge": judge_lm} if judge_lm is not None else {})}
    task = entry.cls(lms, entry.Options.model_validate(options))
    if isinstance(pivot, RulesPivot) and hasattr(task, "seeds"):
        task.seeds = NoSeedSelection()
    return task


@contextmanager
def shared_retrievers() -> Iterator[None]:
    """While the rows are built, a retrieval pool asked for twice with the same settings is loaded once: each
    row's generator would otherwise hold its own copy of the passages, their index and the embedder."""
    real = corpus.default_retriever
    built: dict = {}

    def shared(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        if key not in built:
            built[key] = real(*args, **kwargs)
        return built[key]

    corpus.default_retriever = shared
    try:
        yield
    finally:
        corpus.default_retriever = real
