"""What each kind of bench stage maps over, made from the models it needs (by keyword) and picklable
arguments: the form in which a Ray actor builds a stage's unit for itself (experiments.bench.placement).
Each maker is a module-level function, so a `functools.partial` of it pickles by reference."""

from __future__ import annotations

from experiments.bench.answering import TargetAsker
from experiments.bench.demos import DemoBook
from experiments.bench.generate import build_task
from experiments.bench.knowledge import KnowledgeProbe
from experiments.bench.seeds import SeedStage
from experiments.judging.params import judge_from


def seed_unit(pivot) -> SeedStage:
    return SeedStage(pivot)


def generator_unit(
    pivot, judge_lm=None, *, task: str, options: dict, judge_params: dict | None, replay, acceptance: bool = False
):
    """The generator of a generation stage; its judge is the run's, rebuilt from the parameters the driver
    resolved (a `run:<id>` judge's parameters live in the driver's run store)."""
    judge = judge_from(judge_params) if judge_params is not None else None
    return build_task(task, pivot, judge_lm, judge, options, replay, acceptance)


def asker_unit(target, *, book: DemoBook) -> TargetAsker:
    return TargetAsker(target, book)


def probe_unit(target, *, table_ids: set[str]) -> KnowledgeProbe:
    return KnowledgeProbe.for_target(target, table_ids)
