"""ReEval Category 1 as an experiment: seeds the pivot answers open-book correctly, answer swapped."""

from __future__ import annotations

import time
from typing import ClassVar, Literal

import dspy
from pydantic import ConfigDict, Field, model_validator

from experiments import task_registry
from experiments.attack import case_status
from experiments.compiled import load_compiled
from experiments.cues import cues as pool_cues
from experiments.known_names import known_in_pool
from experiments.lm.registry import ResolvedLM
from experiments.name_bank import bank_names
from experiments.tasks.dialled import DialledOptions
from experiments.tasks.seed_selection import SEED_RULES, select_seed
from experiments.tasks.seeded import JudgedTask
from experiments.title_bank import bank_titles
from programs.answer_kinds import KINDS
from programs.answer_swap import PIVOT_KINDS, VERSION, AnswerSwap
from programs.seed_selection import SeedSelection


def _case(example, out) -> dict:
    return {
        "task": "answer_swap",
        "context": out.context,
        "answers": [out.new_answer] if out.new_answer else [],
        "proposals": out.proposals,
        "checks": out.checks,
        "answer_kind": out.get("kind"),
        "cues": out.get("cues") or [],
        "status": case_status(out),
    }


def _no_refused_proposal(case: dict) -> bool:
    return all(p.get("problem") is None for p in case.get("proposals") or [])


@task_registry.task(
    "answer_swap",
    label="answer swap",
    version=VERSION,
    generator=True,
    seeded=True,
    judged=True,
    rejudgeable=True,
    guidance="Valid if the context supports the expected answer, and no other answer to the question.",
    bench_settings=("closed_book", "open_book", "opinion", "few_shot_clean", "few_shot_adversarial"),
    attack=task_registry.Attack(
        # The pivot writes: benches, optimisers and pivot comparisons study the pivot as a generator, and code-made
        # swaps leave nothing of it to compare or tune. A year or quantity is moved in code as the task does.
        build=lambda max_attempts, distance="near", name_distance="made_up", writer="pivot", cues="keep": AnswerSwap(
            max_attempts,
            distance=distance,
            known_name=known_in_pool,
            name_distance=name_distance,
            name_candidates=bank_names,
            writer=writer,
            cue_finder=pool_cues,
            title_candidates=bank_titles,
            cues=cues,
        ),
        to_case=_case,
        every_reply_used=_no_refused_proposal,
        against_memory=True,
    ),
    sweep_settings=("open_book",),
    # How far the new answer stands from the old (numbers and dates only): the further, the more often a target
    # keeps the answer it knows (ClashEval). `far` and `extreme` are off the ladder: read blind, far swaps were 21
    # of 30 valid (a year moved past the war or the president the passage names beside it), mid 29 of 30.
    ladder=((0.0, {"distance": "near"}), (0.5, {"distance": "mid"})),
    expectation=(
        "ORIGINAL answer: {original}",
        "NEW answer (the perturbed context should give it, and no other): {answers}",
    ),
    card_text="ReEval answer swaps: the passage's answer is replaced by another of the same kind and every trace "
    "of the old one removed, so a faithful reader answers the new one",
    paper="ReEval (Yu et al., 2023, arXiv:2310.12516)",
    arxiv="2310.12516",
    knowledge_conflict=task_registry.ConflictRole("swap", {"max_attempts": 5}),
    # The task's default makes new answers in code (writer: rules), which would leave every pivot's row of a
    # comparison the same but for its seed selection.
    comparison_options={"writer": "pivot"},
    # The pivot proposes at distance 'proposed'; code moves a year or number 'near'.
    rules=lambda options: {
        **options,
        "writer": "rules",
        "seeds": "all",
        **({"distance": "near"} if options.get("distance") == "proposed" else {}),
    },
    acceptance_signals=(
        "old_pmi",
        "old_drop",
        "new_support",
        "new_pmi",
        "new_vs_old",
        "rest_top",
        "rest_sum",
        "fluency",
        "old_closed",
        "new_closed",
    ),
)
class AnswerSwapTask(JudgedTask):
    class Options(DialledOptions):
        model_config = ConfigDict(extra="forbid")
        generator: ClassVar[str] = "answer_swap"
        seeds: Literal["open_correct", "open_correct_closed_wrong", "all"] = Field(
            "open_correct", description="which seed-table cells to perturb"
        )
        max_attempts: int = Field(3, ge=1, description="wrong-answer proposals tried per seed")
        repair_grammar: bool = Field(False, description="let the pivot repair grammar after the swap")
        min_similarity: float = Field(0.9, ge=0, le=1, description="text outside the swapped spans kept")
        program: str | None = Field(
            None,
            description="compiled generator state: run:<optimisation run id>, a path to a saved program JSON, "
            "or an MLflow model URI (models:/<name>/<version>)",
        )
        # `rules` until a fresh blind reading shows the pivot's swaps as valid as the code's: read on fresh rows,
        # `answer_swap/26`'s were 71-75% valid against 92% for code-made ones (docs/results/every_kind.md).
        writer: Literal["pivot", "rules"] = Field(
            "rules",
            description="who makes the new answer: 'pivot' (the pivot proposes every kind of answer, typed from "
            "its passage and checked in code; a date or quantity is moved in code when `distance` is a level) or "
            "'rules' (code alone: dates and quantities at `distance`, people a made-up name; any other seed is "
            "rejected:level_unreachable)",
        )
        cues: Literal["keep", "refuse"] = Field(
            "keep",
            description="a phrase left that the Wikipedia pool ties to the old answer ('Marmon Wasp' beside a "
            "swapped Indianapolis winner): recorded on the case as `cues` ('keep') or the case rejected:cue_left",
        )
        distance: Literal["proposed", "near", "mid", "far", "extreme"] = Field(
            "near",
            description="how far a new year, date or quantity stands from the old, made in code: near ±1 year / "
            "x1.1, mid ±5 / x1.5, far ±25 / x3, extreme ±100 / x10; 'proposed' lets the pivot write those too "
            "(and sets writer: pivot)",
        )
        pivot_kinds: list[Literal[KINDS]] | None = Field(  # type: ignore[valid-type]
            None,
            description="at a code-made distance, the old answers' kinds the pivot writes a new answer for where "
            "code makes none (writer: pivot), each proposal verified in code; a seed of another kind is "
            "rejected:level_unreachable. By default every kind but 'phrase' and 'date', which no check verifies "
            "(unset: " + ", ".join(PIVOT_KINDS) + "). 'distance: proposed' has the pivot write every kind",
        )
        name_distance: Literal["made_up", "near", "far"] = Field(
            "made_up",
            description="at a code-made distance, where a person's new name comes from: 'made_up' (an invented "
            "name of the passage's gender), or a real person of that gender answering another shipped question, "
            "'near' (the most similar question: same domain) or 'far' (the least similar: an unrelated domain)",
        )

        @model_validator(mode="before")
        @classmethod
        def _pivot_proposes(cls, data):
            # `distance: proposed` asks the pivot for every new answer: it means the pivot writes, unless told not.
            if isinstance(data, dict) and data.get("distance") == "proposed":
                return {"writer": "pivot", **data}
            return data

    def __init__(self, lms: dict[str, ResolvedLM], options: Options | None = None):
        super().__init__(lms, options or self.Options())
        self.seeds = SeedSelection()
        self.program = AnswerSwap(
            self.options.max_attempts,
            self.options.repair_grammar,
            self.options.min_similarity,
            distance=self.options.distance,
            known_name=known_in_pool,
            name_distance=self.options.name_distance,
            name_candidates=bank_names,
            writer=self.options.writer,
            cue_finder=pool_cues,
            title_candidates=bank_titles,
            cues=self.options.cues,
            pivot_kinds=self.options.pivot_kinds,
        )
        if self.options.program:
            load_compiled(self.program, self.options.program, "answer_swap")

    def programs(self) -> dict[str, dspy.Module]:
        return {"seed_selection": self.seeds, "answer_swap": self.program, "judge": self.judge}

    def process(self, example: dspy.Example) -> dict:
        started = time.perf_counter()
        seed = select_seed(self.pivot, self.seeds, example)
        record = {
            **seed,
            "id": f"{example.id}:swap",
            "task": self.name,
            "program_version": VERSION,
            "pivot": self.pivot.config.label,
        }
        if not SEED_RULES[self.options.seeds](seed["open_correct"], seed["closed_correct"]):
            return {**record, "status": "rejected:seed_not_selected"}
        with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
            out = self.program(question=example.question, context=example.context, answers=list(example.answers))
        [record] = self._validate(
            [
                {
                    **record,
                    "context": out.context,
                    "answers": [out.new_answer] if out.new_answer else [],
                    "proposals": out.proposals,
                    "checks": out.checks,
                    "edit": out.edit,
                    "answer_kind": out.get("kind"),
                    "cues": out.get("cues") or [],
                    **({"timeline": out.timeline} if out.get("timeline") else {}),
                    "status": case_status(out),
                }
            ]
        )
        return {**record, "seconds": round(time.perf_counter() - started, 3)}
