"""The knowledge-conflict experiment of a bench: answer swaps on seeds each target already knows (and, as
the comparison, on seeds it reads right but does not know), context enriching on known seeds as the
control that should not move it; every target asked on its own seeds, every answer classified as the
evidence's, its memory's, or neither (metrics.conflict).

Seeds come from each target's knowledge scan (experiments.bench.knowledge), not from the pivot's seed
table: the generator runs with `seeds: all` on the union of the targets' seeds, so a seed two targets
know is perturbed once. Its seed-selection record says so (`seed_source: knowledge_scan`) instead of
holding pivot answers that were never asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import dspy

from experiments import task_registry
from experiments.bench.demos import DemoBook
from experiments.bench.knowledge import is_known, is_unknown
from experiments.bench.options import FEW_SHOT, KnowledgeConflict
from experiments.bench.sharing import Ask
from metrics.conflict import classify, conflict_table, matches, memory_agrees, memory_answers


def conflict_roles() -> dict[str, str]:
    """The generators the experiment runs, each with its role ("swap" or "control"), in registration order."""
    return {n: e.knowledge_conflict.role for n, e in task_registry.entries().items() if e.knowledge_conflict}


def conflict_tasks() -> tuple[str, ...]:
    return tuple(conflict_roles())


def swap_tasks() -> tuple[str, ...]:
    """The generators that put another answer in the evidence (role "swap"): the conflict proper."""
    return tuple(t for t, role in conflict_roles().items() if role == "swap")


@dataclass
class TargetSeeds:
    """One target's scan outcome: the seeds it knows and its comparison seeds, with its closed-book answers."""

    known: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    closed: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_scan(cls, records: list[dict], order: list[str], options: KnowledgeConflict) -> TargetSeeds:
        by_id = {r["seed_id"]: r for r in records}
        scanned = [by_id[i] for i in order if i in by_id]
        return cls(
            known=[r["seed_id"] for r in scanned if is_known(r)][: options.known_per_target],
            unknown=[r["seed_id"] for r in scanned if is_unknown(r)][: options.unknown_per_target],
            closed={r["seed_id"]: r.get("closed_answer", "") for r in scanned},
        )


def seeds_to_generate(seeds: dict[str, TargetSeeds], order: list[str], control_seeds: int) -> dict[str, list[str]]:
    """Per task, the union of the targets' seeds in scan order: the swap on known and unknown seeds, the
    control on the first known seeds of each target."""
    wanted = {
        "swap": {s for t in seeds.values() for s in (*t.known, *t.unknown)},
        "control": {s for t in seeds.values() for s in t.known[:control_seeds]},
    }
    return {task: [s for s in order if s in wanted[role]] for task, role in conflict_roles().items()}


def replay_records(examples: list[dspy.Example]) -> list[dict]:
    """Seed-selection records for generators that take every seed: no pivot answer was asked."""
    return [
        {
            "question": e.question,
            "original_context": e.context,
            "pivot_closed_answer": "",
            "pivot_open_answer": "",
            "status": "accepted",
        }
        for e in examples
    ]


def conflict_asks(
    cases: dict[str, list[dspy.Example]],
    seeds: dict[str, TargetSeeds],
    settings: list[str],
    book: DemoBook,
    answer_kinds: dict[str, str] | None = None,
) -> tuple[dict[str, Ask], list[dict]]:
    """Every target asked on the perturbed cases of its own seeds: the distinct asks and one use per
    (target, seed kind, task, setting, case). `answer_kinds`: case id -> the old answer's kind, where the
    generator read one (answer swaps), carried on the use for the table by kind."""
    answer_kinds = answer_kinds or {}
    asks: dict[str, Ask] = {}
    uses: list[dict] = []
    roles = conflict_roles()
    for target, own in seeds.items():
        kinds = {**{s: "unknown" for s in own.unknown}, **{s: "known" for s in own.known}}
        for task, task_cases in cases.items():
            for case in task_cases:
                kind = kinds.get(str(case.seed_id))
                if kind is None or (roles[task] == "control" and kind != "known"):
                    continue
                for setting in settings:
                    demos = (book.key(f"conflict.{task}", case.seed_id, setting) or "") if setting in FEW_SHOT else ""
                    if setting in FEW_SHOT and not demos:
                        continue
                    ask = Ask(target, setting, "greedy", case.question, case.context, demos)
                    asks.setdefault(ask.id, ask)
                    uses.append(
                        {
                            "target": target,
                            "seeds": kind,
                            "task": task,
                            "setting": setting,
                            "case_id": str(case.id),
                            "seed_id": str(case.seed_id),
                            "ask_id": ask.id,
                            "question": case.question,
                            "evidence_answers": list(case.answers),
                            "original_answers": list(case.original_answers),
                            "closed_answer": own.closed.get(str(case.seed_id), ""),
                            **({"answer_kind": answer_kinds[str(case.id)]} if answer_kinds.get(str(case.id)) else {}),
                        }
                    )
    return asks, uses


def classified(uses: list[dict], answers: dict[str, dict]) -> list[dict]:
    """Each use with the target's answer and its class; `label` is `no_conflict` where the target's memory
    already says what the evidence says, and absent where the answer errored."""
    out = []
    roles = conflict_roles()
    for use in uses:
        answer = answers.get(use["ask_id"], {})
        record = {**use, "prediction": answer.get("prediction"), "status": answer.get("status", "error:missing")}
        if record["status"] == "ok":
            memory = memory_answers(use["closed_answer"], use["original_answers"], use["seeds"] == "known")
            if roles[use["task"]] == "control":
                # The control's evidence still states the original answer, which a known seed's memory holds
                # too: it asks only whether the answer survives the change.
                record["label"] = "evidence" if matches(record["prediction"], use["evidence_answers"]) else "other"
            elif memory_agrees(use["evidence_answers"], memory):
                record["label"] = "no_conflict"
            else:
                record["label"] = classify(
                    record["prediction"], use["evidence_answers"], memory, question=use["question"]
                )
        out.append(record)
    return out


def table(records: list[dict]) -> list[dict]:
    return conflict_table(records, by=("target", "task", "seeds", "setting"))
