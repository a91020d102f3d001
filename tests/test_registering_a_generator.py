"""A generator registered from this file alone goes through every command: run, evaluate and report, the review
page, validity, export, a strength sweep over its ladder, the bench and optimize. Nothing else in the project
names it.

The toy takes the answer out of the passage: its cases expect the verdict "unknown", not a span of the context,
and its one dial has a strength ladder. The models are the bench's prompt-reading stand-ins (tests/bench_fakes.py)
behind the real LM engine: the pivot rewrites a sentence to say nothing of who did it, the judge reads the
context, the target follows it."""

import re
import time
from typing import ClassVar

import dspy
import pytest
import yaml
from pydantic import ConfigDict, Field
from starlette.testclient import TestClient

from experiments import launch, task_registry
from experiments.attack import case_status
from experiments.config_loader import load_config
from experiments.export import export_run
from experiments.report import write_report
from experiments.review.server import ReviewSession, create_app
from experiments.run_store import RunStore
from experiments.tasks.dialled import DialledOptions
from experiments.tasks.seed_selection import SEED_RULES, select_seed
from experiments.tasks.seeded import JudgedTask
from experiments.validity import run_validity
from programs.seed_selection import SeedSelection
from tests.bench_fakes import SEEDS, write_data

GUIDANCE = "Valid if the context no longer lets a reader answer the question (expected: unknown)."


class RewriteWithout(dspy.Signature):
    """Rewrite the sentence so that it no longer gives the answer; keep everything else it says."""

    question: str = dspy.InputField()
    sentence: str = dspy.InputField(desc="a sentence of the context that gives the answer")
    answer: str = dspy.InputField(desc="the answer the sentence gives")
    justification: str = dspy.OutputField(desc="what the rewrite leaves out")
    rewritten_sentence: str = dspy.OutputField(desc="the sentence without the answer")


class HideAnswer(dspy.Module):
    """Takes the answer out of the context, so the question has none there. Its one dial, `rewrite`: the pivot
    rewrites each sentence that gives the answer; off (the stronger rung, a passage closer to the original), code
    puts "someone" in the answer's place."""

    def __init__(self, rewrite: bool = True):
        super().__init__()
        self.rewrite = rewrite
        self.rewrite_sentence = dspy.Predict(RewriteWithout)

    def forward(self, question: str, context: str, answers: list[str]) -> dspy.Prediction:
        answer, sentences = answers[0], re.split(r"(?<=\.)\s+", context)
        rewritten = [
            self.rewrite_sentence(question=question, sentence=s, answer=answer).rewritten_sentence.strip()
            if self.rewrite and answer in s
            else s.replace(answer, "someone")
            for s in sentences
        ]
        hidden = answer in context and answer not in " ".join(rewritten)
        return dspy.Prediction(
            context=" ".join(rewritten),
            rewrites=[new for old, new in zip(sentences, rewritten, strict=True) if new != old],
            checks={"answer_hidden": hidden},
            rejection=None if hidden else "answer_not_found",
        )


def _hidden_case(example, out) -> dict:
    return {
        "task": "hide_answer",
        "context": out.context,
        # Not a span of the context: the verdict a faithful reader gives, scored by keyword.
        "answers": ["unknown"],
        "judge_kind": "unanswerable",
        "rewrites": out.rewrites,
        "checks": out.checks,
        "status": case_status(out),
    }


class HideAnswerTask(JudgedTask):
    class Options(DialledOptions):
        model_config = ConfigDict(extra="forbid")
        generator: ClassVar[str] = "hide_answer"
        rewrite: bool = Field(True, description="the pivot rewrites each sentence that gives the answer")
        seeds: str = Field("open_correct", description="which seed-table cells to perturb")
        max_attempts: int = Field(1, ge=1, description="unused: the toy asks once")

    def __init__(self, lms, options=None):
        super().__init__(lms, options or self.Options())
        self.seeds = SeedSelection()
        self.program = HideAnswer(self.options.rewrite)

    def programs(self):
        return {"seed_selection": self.seeds, "hide_answer": self.program, "judge": self.judge}

    def process(self, example):
        started = time.perf_counter()
        seed = select_seed(self.pivot, self.seeds, example)
        record = {**seed, "id": f"{example.id}:hidden", "task": self.name, "pivot": self.pivot.config.label}
        if not SEED_RULES[self.options.seeds](seed["open_correct"], seed["closed_correct"]):
            return {**record, "status": "rejected:seed_not_selected"}
        with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
            out = self.program(question=example.question, context=example.context, answers=list(example.answers))
        [record] = self._validate([{**record, **_hidden_case(example, out)}])
        return {**record, "seconds": round(time.perf_counter() - started, 3)}


@pytest.fixture
def hide_answer():
    """The one registration the toy generator needs (removed again, so other tests see the shipped tasks)."""
    task_registry.task(
        "hide_answer",
        label="hidden answer",
        version="hide_answer/1",
        generator=True,
        seeded=True,
        judged=True,
        rejudgeable=True,
        guidance=GUIDANCE,
        review_fields=(("rewritten", "rewrites"),),
        bench_settings=("open_book",),
        attack=task_registry.Attack(
            build=lambda max_attempts, rewrite=True, **dials: HideAnswer(rewrite), to_case=_hidden_case
        ),
        sweep_settings=("open_book",),
        ladder=((0.0, {"rewrite": True}), (1.0, {"rewrite": False})),
        answer="unknown",
        release="Hidden-answer-v1",
        card_text="Hidden answers: the passage's answer taken out, so a faithful reader says 'unknown'",
        paper="A toy of this test",
    )(HideAnswerTask)
    yield
    task_registry.unregister("hide_answer")


def _config(folder, name: str, task: str, source: str, models: dict, **options):
    lm = {"temperature": 0.0, "max_tokens": 64, "seed": 0}
    raw = {
        "name": name,
        "task": task,
        "data": {"source": source, "limit": 3, "max_evidence_words": 300},
        "models": {
            role: ([{**m, **lm} for m in v] if isinstance(v, list) else {**v, **lm}) for role, v in models.items()
        },
        "validation": {"calibration_controls": 0, "judge_params": "reasoned"},
        "options": options,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_config(path)


PIVOT = {"name": "qwen2.5-1.5b"}
TARGETS = [{"name": "qwen2.5-0.5b"}]


def test_a_generator_registered_in_one_place_runs_through_every_command(world, isolated, hide_answer):
    nq, _ = write_data(isolated)

    # run: the runner's case loop, the judge on every case that passed the checks
    made = launch.run_experiment(
        _config(isolated, "hidden", "hide_answer", nq, {"pivot": PIVOT, "judge": PIVOT}), progress=False
    )
    cases = RunStore(made.run_id).records()
    accepted = [r for r in cases if r["status"] == "accepted"]
    golds = [answer for _, _, answer, _ in SEEDS]
    assert len(accepted) == 3 and all(r["answers"] == ["unknown"] for r in accepted)
    assert not any(gold in r["context"] for r in accepted for gold in golds)
    assert all(r["judge"]["if"] is True for r in accepted)

    # evaluate the cases, then the report
    evaluated = launch.run_experiment(
        _config(isolated, "hidden-eval", "evaluate", f"run:{made.run_id}", {"targets": TARGETS}), progress=False
    )
    records = [r for r in RunStore(evaluated.run_id).records() if "target" in r]
    assert {r["task"] for r in records} == {"hide_answer"}
    # scored by keyword: the target that says "unknown" to a passage without the answer reads it right
    perturbed = [r for r in records if r["variant"] == "perturbed"]
    assert perturbed and all(r["task_answer"] == "unknown" and r["task_correct"] for r in perturbed)
    report = write_report(records, isolated / "report", title="hidden", run_info={"run_id": evaluated.run_id})
    assert "hide_answer" in report.read_text()

    # the review page: the registration's guidance and review fields
    session = ReviewSession.open(made.run_id, "tester")
    client = TestClient(create_app(session, allowed_hosts=["testserver"]), follow_redirects=False)
    page = client.get("/case/0").text
    assert GUIDANCE in page and "rewritten" in page and "Nothing is said here about who did it." in page

    # validity: the judge's verdicts on the run's cases
    assert run_validity(made.run_id).figures

    # export: the card says what a case is, and FaithEval's layout names the folder after the release
    card = export_run(made.run_id, isolated / "hf").out / "README.md"
    assert "Hidden answers: the passage's answer taken out" in card.read_text()
    faitheval = export_run(made.run_id, isolated / "fe", layout="faitheval")
    assert any("Hidden-answer-v1" in f.as_posix() for f in faitheval.files)

    # a strength sweep over its ladder: on either rung the target finds no answer and says so
    sweep = launch.run_experiment(
        _config(
            isolated,
            "hidden-sweep",
            "strength_sweep",
            nq,
            {"pivot": PIVOT, "judge": PIVOT, "targets": TARGETS},
            generator="hide_answer",
        ),
        progress=False,
    )
    assert sweep.metrics["sweep.0.accepted"] == sweep.metrics["sweep.1.accepted"] == 3
    assert sweep.metrics["sweep.0.qwen2.5-0.5b.open_book.success"] == 0.0
    assert sweep.metrics["sweep.1.qwen2.5-0.5b.open_book.success"] == 0.0

    # the bench: the generator among its tasks, on its paper settings by default
    bench = launch.run_experiment(
        _config(
            isolated,
            "hidden-bench",
            "bench",
            nq,
            {"pivot": PIVOT, "judge": PIVOT, "targets": TARGETS},
            tasks=["hide_answer"],
            sampled={"hide_answer": []},
        ),
        progress=False,
    )
    assert "hidden answer" in bench.task.markdown

    # optimize: the generator compiled against the attack metric
    optimised = launch.run_experiment(
        _config(
            isolated,
            "hidden-optimize",
            "optimize",
            nq,
            {"pivot": PIVOT, "judge": PIVOT, "targets": TARGETS},
            generator="hide_answer",
            optimizers=["bootstrap_fewshot"],
            train=1,
            val=1,
            test=1,
        ),
        progress=False,
    )
    assert {r["generator"] for r in RunStore(optimised.run_id).records() if "generator" in r} == {"hide_answer"}
