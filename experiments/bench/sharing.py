"""Identical target calls made once.

Every evaluation of a case is a *use*: (task, case, target, setting, decoding, variant). Each use
needs the answer to one *ask*: what the target is actually sent (setting, decoding, question,
context, demonstration set). Asks are keyed by exactly that, so a target's answer on an original
context is asked once and shared by every task perturbing that seed (and by a seed's two
context-enriched copies), and a closed-book question once for every task and setting that pairs
with it. The saving is counted: uses minus asks.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import dspy

from experiments import task_registry
from experiments.bench.demos import DemoBook
from experiments.bench.options import FEW_SHOT, BenchOptions


@dataclass(frozen=True)
class Ask:
    target: str
    setting: str
    decoding: str
    question: str
    context: str
    demos: str = ""  # key of the demonstration set, "" for none

    @property
    def id(self) -> str:
        blob = json.dumps([self.target, self.setting, self.decoding, self.question, self.context, self.demos])
        return hashlib.sha256(blob.encode()).hexdigest()[:20]


# Within a passage: open-book first (it lays down the prefix of system message and passage), the settings
# that share no prefix with it next, opinion (which restores it) last. Two cases are asked at a time, so an
# ask's neighbour runs beside it, not after it: placed next to open-book, opinion would read the passage too.
_PASSAGE_RANK = {"open_book": 0, "opinion": 2}


def passage_order(asks: Iterable[Ask]) -> list[Ask]:
    """Asks of one passage next to each other (passages by hash, then the rank above, then ask id), so that
    the prefix the settings share (target_reader/3) is still in the engine's state cache when the next
    setting of the same passage is asked; ordered by ask id alone, a passage's settings lay hundreds of calls
    apart and the cache (512 MiB of states) had long let it go."""
    return sorted(
        asks, key=lambda a: (hashlib.sha256(a.context.encode()).hexdigest(), _PASSAGE_RANK.get(a.setting, 1), a.id)
    )


@dataclass
class Use:
    task: str
    case: dspy.Example
    target: str
    setting: str
    decoding: str
    variant: str  # original | perturbed
    ask_id: str


@dataclass
class Plan:
    uses: list[Use] = field(default_factory=list)
    asks: dict[str, Ask] = field(default_factory=dict)
    skipped: Counter = field(default_factory=Counter)  # few-shot uses without a demonstration set, per task

    def asks_for(self, target: str) -> list[Ask]:
        return passage_order(a for a in self.asks.values() if a.target == target)

    def counts(self) -> dict[str, float]:
        """Uses, distinct asks and the calls sharing saved, overall and for originals alone."""
        original = [u for u in self.uses if u.variant == "original"]
        original_asks = {u.ask_id for u in original}
        return {
            "uses": len(self.uses),
            "asks": len(self.asks),
            "saved": len(self.uses) - len(self.asks),
            "original_uses": len(original),
            "original_asks": len(original_asks),
            "original_saved": len(original) - len(original_asks),
        }


def _original_ask(task: str, case, target: str, setting: str, decoding: str, demos: str) -> Ask:
    if task_registry.get(task).original_setting == "closed_book" or setting == "closed_book":
        return Ask(target, "closed_book", decoding, case.question, "")
    return Ask(target, setting, decoding, case.question, case.original_context, demos)


def plan(
    cases_by_task: dict[str, list[dspy.Example]], options: BenchOptions, targets: list[str], book: DemoBook
) -> Plan:
    out = Plan()

    def use(task, case, target, setting, decoding, variant, ask: Ask) -> None:
        out.asks.setdefault(ask.id, ask)
        out.uses.append(Use(task, case, target, setting, decoding, variant, ask.id))

    for task, setting, decoding in options.plan():
        for case in cases_by_task.get(task, []):
            demos = ""
            if setting in FEW_SHOT:
                demos = book.key(task, case.seed_id, setting) or ""
                if not demos:
                    out.skipped[task] += len(targets)
                    continue
            for target in targets:
                use(
                    task,
                    case,
                    target,
                    setting,
                    decoding,
                    "original",
                    _original_ask(task, case, target, setting, decoding, demos),
                )
                if setting != "closed_book":
                    use(
                        task,
                        case,
                        target,
                        setting,
                        decoding,
                        "perturbed",
                        Ask(target, setting, decoding, case.question, case.context, demos),
                    )
    return out
