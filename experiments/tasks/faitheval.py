"""FaithEval tasks as experiments: unanswerable, inconsistent (NQ seeds), counterfactual (ARC)."""

from __future__ import annotations

import random
import time
from typing import ClassVar, Literal

import dspy
from pydantic import BaseModel, ConfigDict, Field

from experiments import corpus, task_registry
from experiments.attack import case_status
from experiments.compiled import load_compiled
from experiments.tasks.dialled import DialledOptions
from experiments.tasks.seed_selection import SEED_RULES, select_seed
from experiments.tasks.seeded import JudgedTask
from programs.faitheval import (
    CONFLICT,
    MAX_BACKGROUND,
    UNKNOWN,
    VERSION,
    Counterfactual,
    Inconsistent,
    Unanswerable,
)
from programs.multiple_choice import lettered
from programs.seed_selection import SeedSelection

PAPER = "FaithEval (Ming et al., 2024, arXiv:2410.03727)"
ARXIV = "2410.03727"

# More passages retrieved on the question's topic around what is left give a reader unwilling to abstain more
# to answer from. Off the ladder: `lures: keep`, whose cases read less often valid; `removal: window`, which on
# NQ's one-paragraph passages left less than the rest_kept share for most seeds; `removal: rewrite`, which
# moved no target's abstention (docs/results/strength.md).
UNANSWERABLE_LADDER = tuple(
    (strength, {"removal": "drop", "lures": "remove", "background": background})
    for strength, background in ((0.0, 0), (0.25, 1), (0.5, 2), (0.75, 4), (1.0, 8))
)


class _JudgedTask(JudgedTask):
    def _base(self, example) -> dict:
        return {"task": self.name, "program_version": VERSION, "pivot": self.pivot.config.label}


class SeededOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seeds: Literal["open_correct", "open_correct_closed_wrong", "all"] = Field(
        "open_correct",
        description="which seed-table cells to perturb: read right open-book, and wrong closed-book too, or every seed",
    )
    max_attempts: int = Field(3, ge=1, description="conflicting-answer proposals tried per seed (inconsistent)")
    seed: int = Field(0, description="orders the two documents of an inconsistent case")


class UnanswerableOptions(SeededOptions, DialledOptions):
    generator: ClassVar[str] = "unanswerable"
    program: str | None = Field(
        None,
        description="compiled generator state: run:<optimisation run id>, a path to a saved program JSON, "
        "or an MLflow model URI (models:/<name>/<version>)",
    )
    removal: Literal["window", "drop", "rewrite", "mask"] = Field(
        "drop",
        description="what goes with the answer: its sentences and their neighbours, its sentences, its "
        "sentences rewritten by the pivot to say the rest without it, or (mask) a name replaced in every "
        "sentence by what it is ('a person', 'the band'), other answers dropped",
    )
    lures: Literal["remove", "keep"] = Field(
        "remove",
        description="sentences offering another candidate of the answer's type (any date or number for a date "
        "or number answer; another name about the subject, or any name beside the answer's sentence, for a name)",
    )
    background: int = Field(
        0,
        ge=0,
        le=MAX_BACKGROUND,
        description="passages retrieved from the Wikipedia pool by the question and set around the rest, which "
        "stands in the middle; a passage naming the answer, offering another candidate or, for a date answer, "
        "holding any date is skipped, and a seed without enough clean ones is rejected:level_unreachable",
    )


def _pool(background: int):
    """The pool's retriever, loaded only for a background dial that reads it."""
    return corpus.default_retriever(corpus.DEFAULT_EMBEDDER) if background else None


def _unanswerable_case(example, out) -> dict:
    return {
        "task": "unanswerable",
        "context": out.context,
        "background": out.get("background") or [],
        "answers": [UNKNOWN],
        "judge_kind": "unanswerable",
        "edits": out.edits,
        "checks": out.checks,
        "status": case_status(out),
    }


def _no_dropped_rewrite(case: dict) -> bool:
    # A sentence the dials drop in code (`removal: drop`, `lures: remove`; its edit says `why`) threw no
    # reply of the pivot away.
    return all(e.get("to") is not None for e in case.get("edits") or [] if "why" not in e)


@task_registry.task(
    "unanswerable",
    generator=True,
    version=VERSION,
    seeded=True,
    judged=True,
    rejudgeable=True,
    guidance="Valid if the context no longer lets a reader answer the question (expected: unknown).",
    bench_settings=("open_book", "task_instruction", "cot"),
    bench_sampled=("open_book", "task_instruction"),
    attack=task_registry.Attack(
        # The task's own defaults: benches and comparisons study the cases the tool makes by default.
        build=lambda max_attempts, removal="drop", lures="remove", background=0: Unanswerable(
            removal=removal,
            lures=lures,
            background=background,
            retriever=_pool(background),
        ),
        to_case=_unanswerable_case,
        setting="task_instruction",
        every_reply_used=_no_dropped_rewrite,
    ),
    sweep_settings=("open_book", "task_instruction"),
    ladder=UNANSWERABLE_LADDER,
    acceptance_signals=("old_pmi", "old_drop", "rest_top", "rest_sum", "fluency", "old_closed"),
    answer="unknown",
    rules=lambda options: {**options, "removal": "drop", "seeds": "all"},
    release="FaithEval-unanswerable-v1.0",
    expectation=(
        "ORIGINAL answer (removed): {original}",
        "EXPECTED: the perturbed context should not answer the question (expected answer: unknown); "
        "the removed answer above, or an equivalent, should not be derivable from it.",
    ),
    card_text="FaithEval unanswerable passages: the sentences that give the answer are removed or rewritten, so a "
    "faithful reader says 'unknown'",
    paper=PAPER,
    arxiv=ARXIV,
)
class UnanswerableTask(_JudgedTask):
    Options = UnanswerableOptions

    def __init__(self, lms, options=None):
        super().__init__(lms, options or self.Options())
        self.seeds = SeedSelection()
        self.program = Unanswerable(
            removal=self.options.removal,
            lures=self.options.lures,
            background=self.options.background,
            retriever=_pool(self.options.background),
        )
        if self.options.program:
            load_compiled(self.program, self.options.program, "unanswerable")

    def programs(self):
        return {"seed_selection": self.seeds, "unanswerable": self.program, "judge": self.judge}

    def process(self, example: dspy.Example) -> list[dict]:
        started = time.perf_counter()
        seed = select_seed(self.pivot, self.seeds, example)
        record = {
            **seed,
            **self._base(example),
            "id": f"{example.id}:unanswerable",
            "answers": [UNKNOWN],
            "judge_kind": "unanswerable",
        }
        if not SEED_RULES[self.options.seeds](seed["open_correct"], seed["closed_correct"]):
            return [{**record, "status": "rejected:seed_not_selected"}]
        with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
            out = self.program(question=example.question, context=example.context, answers=list(example.answers))
        record.update(
            context=out.context,
            background=out.get("background") or [],
            edits=out.edits,
            checks=out.checks,
            status=case_status(out),
        )
        return [{**r, "seconds": round(time.perf_counter() - started, 3)} for r in self._validate([record])]


# Not rejudgeable: the judge validates the modified document alone and copies that verdict onto the
# two-document case; judging the copy again would judge the wrong text.
@task_registry.task(
    "inconsistent",
    generator=True,
    version=VERSION,
    seeded=True,
    judged=True,
    guidance="Valid if the documents give conflicting answers to the question (expected: conflict).",
    review_fields=(("answer the modified document gives", "new_answer"),),
    bench_settings=("open_book", "task_instruction", "cot"),
    bench_sampled=("open_book", "task_instruction"),
    answer="conflict",
    release="FaithEval-inconsistent-v1.0",
    # The modified document alone: what the judge read for the two-document case.
    helper_suffixes=(":inconsistent-modified",),
    expectation=(
        "ORIGINAL answer: {original}",
        "Answer the modified document gives: {new_answer}",
        "EXPECTED: the documents give conflicting answers to the question.",
    ),
    card_text="FaithEval inconsistent passages: two documents, one of them with the answer swapped, so a faithful "
    "reader says 'conflict'",
    paper=PAPER,
    arxiv=ARXIV,
)
class InconsistentTask(_JudgedTask):
    Options = SeededOptions

    def __init__(self, lms, options=None):
        super().__init__(lms, options or self.Options())
        self.seeds = SeedSelection()
        self.program = Inconsistent(self.options.max_attempts, self.options.seed)

    def programs(self):
        return {"seed_selection": self.seeds, "inconsistent": self.program, "judge": self.judge}

    def process(self, example: dspy.Example) -> list[dict]:
        started = time.perf_counter()
        seed = select_seed(self.pivot, self.seeds, example)
        base = {**seed, **self._base(example)}
        if not SEED_RULES[self.options.seeds](seed["open_correct"], seed["closed_correct"]):
            return [{**base, "id": f"{example.id}:inconsistent", "status": "rejected:seed_not_selected"}]
        with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
            out = self.program(
                question=example.question, context=example.context, answers=list(example.answers), case_id=example.id
            )
        if out.rejection:
            return [
                {
                    **base,
                    "id": f"{example.id}:inconsistent",
                    "proposals": out.proposals,
                    "checks": out.checks,
                    "status": f"rejected:{out.rejection}",
                }
            ]
        # The modified document alone is its own case (expected: the new answer); it is what the judge
        # validates, and the two-document case stands or falls with it.
        alone = {
            **base,
            "id": f"{example.id}:inconsistent-modified",
            "context": out.modified_context,
            "answers": [out.new_answer],
            "proposals": out.proposals,
            "checks": out.checks,
            "status": "accepted",
        }
        [alone] = self._validate([alone])
        combined = {
            **base,
            "id": f"{example.id}:inconsistent",
            "context": out.context,
            "answers": [CONFLICT],
            "new_answer": out.new_answer,
            "document_order": out.order,
            "proposals": out.proposals,
            "checks": out.checks,
            "judge": alone.get("judge"),
            "status": alone["status"],
        }
        seconds = round(time.perf_counter() - started, 3)
        return [{**combined, "seconds": seconds}, {**alone, "seconds": seconds}]


class CounterfactualOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_attempts: int = Field(3, ge=1, description="supporting passages written per question before it is refused")
    seed: int = Field(0, description="picks the wrong option each passage supports")


@task_registry.task(
    "counterfactual",
    generator=True,
    version=VERSION,
    judged=True,
    rejudgeable=True,
    guidance="Valid if the passage supports the expected option, and no other option.",
    bench_settings=("closed_book", "open_book", "cot"),
    bench_sampled=("open_book",),
    answer="choice",
    release="FaithEval-counterfactual-v1.0",
    # The closed-book twin: the question without the passage, the case's baseline.
    helper_suffixes=(":closed-book",),
    original_setting="closed_book",
    card_text="FaithEval counterfactual passages: a passage that supports an option the world does not, so a "
    "faithful reader picks the option the passage supports",
    paper=PAPER,
    arxiv=ARXIV,
)
class CounterfactualTask(_JudgedTask):
    Options = CounterfactualOptions

    def __init__(self, lms, options=None):
        super().__init__(lms, options or self.Options())
        self.program = Counterfactual(self.options.max_attempts, self.options.seed)

    def programs(self):
        return {"counterfactual": self.program, "judge": self.judge}

    def process(self, example: dspy.Example) -> list[dict]:
        started = time.perf_counter()
        options, labels = list(example.options), list(example.choice_labels)
        right = labels.index(example.answer_key)
        wrong = [i for i in range(len(options)) if i != right]
        target = random.Random(f"{self.options.seed}:{example.id}").choice(wrong)
        question = lettered(example.question, labels, options)
        base = {
            "seed_id": example.id,
            "source": example.get("source", "arc_challenge"),
            **self._base(example),
            "question": question,
            "options": options,
            "choice_labels": labels,
            "original_answer_label": example.answer_key,
        }
        # The no-context version: the closed-book baseline for the same question.
        closed = {
            **base,
            "id": f"{example.id}:closed-book",
            "context": "",
            "answers": [options[right]],
            "answer_label": example.answer_key,
            "status": "accepted",
            "variant": "original",
        }
        with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
            out = self.program(question=example.question, options=options, target_index=target)
        case = {
            **base,
            "id": f"{example.id}:counterfactual",
            "context": out.context,
            "answers": [options[target]],
            "answer_label": labels[target],
            "checks": out.checks,
            "attempts": out.attempts,
            "justification": out.justification,
            "support_first": out.support_first,
            "judge_question": question,
            "variant": "perturbed",
            "status": f"rejected:{out.rejection}" if out.rejection else "accepted",
        }
        [case] = self._validate([case])
        seconds = round(time.perf_counter() - started, 3)
        return [{**case, "seconds": seconds}, {**closed, "seconds": seconds}]

    def summarize(self, records):
        return super().summarize([r for r in records if not r["id"].endswith(":closed-book")])
