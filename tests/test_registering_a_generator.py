"""A generator registered from this file alone goes through every command: run, evaluate and report, the review
page, validity, export, a strength sweep over its ladder, the bench and optimize. Nothing else in the project
names it.

The models are the bench's prompt-reading stand-ins (tests/bench_fakes.py) behind the real LM engine: the pivot
answers a `wrong_answer` request with "Zora Quinn", the judge reads the context, the target follows it."""

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
from tests.bench_fakes import SWAPPED, write_data

GUIDANCE = "Valid if the decoy answers the question, and nothing else does."


class ProposeDecoy(dspy.Signature):
    """Name another answer of the same kind as the given one, which the context will be made to support."""

    question: str = dspy.InputField()
    answer: str = dspy.InputField(desc="the answer the context supports now")
    wrong_answer: str = dspy.OutputField(desc="a different answer of the same kind")


class DecoySwap(dspy.Module):
    """Asks the pivot for a decoy and puts it in place of every mention of the answer, in code; its one dial,
    `shout`, writes the decoy in capitals (a reader matching the name it knows no longer finds it)."""

    def __init__(self, shout: bool = False):
        super().__init__()
        self.shout = shout
        self.propose = dspy.Predict(ProposeDecoy)

    def forward(self, question: str, context: str, answers: list[str]) -> dspy.Prediction:
        decoy = self.propose(question=question, answer=answers[0]).wrong_answer.strip()
        decoy = decoy.upper() if self.shout else decoy
        found = bool(decoy) and answers[0] in context
        return dspy.Prediction(
            context=context.replace(answers[0], decoy) if found else context,
            new_answer=decoy,
            checks={"answer_replaced": found},
            rejection=None if found else "answer_not_found",
        )


def _decoy_case(example, out) -> dict:
    return {
        "task": "decoy_swap",
        "context": out.context,
        "answers": [out.new_answer],
        "new_answer": out.new_answer,
        "checks": out.checks,
        "status": case_status(out),
    }


class DecoySwapTask(JudgedTask):
    class Options(DialledOptions):
        model_config = ConfigDict(extra="forbid")
        generator: ClassVar[str] = "decoy_swap"
        shout: bool = Field(False, description="the decoy in capitals")
        seeds: str = Field("open_correct", description="which seed-table cells to perturb")
        max_attempts: int = Field(1, ge=1, description="unused: the toy asks once")

    def __init__(self, lms, options=None):
        super().__init__(lms, options or self.Options())
        self.seeds = SeedSelection()
        self.program = DecoySwap(self.options.shout)

    def programs(self):
        return {"seed_selection": self.seeds, "decoy_swap": self.program, "judge": self.judge}

    def process(self, example):
        started = time.perf_counter()
        seed = select_seed(self.pivot, self.seeds, example)
        record = {**seed, "id": f"{example.id}:decoy", "task": self.name, "pivot": self.pivot.config.label}
        if not SEED_RULES[self.options.seeds](seed["open_correct"], seed["closed_correct"]):
            return {**record, "status": "rejected:seed_not_selected"}
        with dspy.context(lm=self.pivot.lm, adapter=self.pivot.adapter()):
            out = self.program(question=example.question, context=example.context, answers=list(example.answers))
        [record] = self._validate([{**record, **_decoy_case(example, out)}])
        return {**record, "seconds": round(time.perf_counter() - started, 3)}


@pytest.fixture
def decoy_swap():
    """The one registration the toy generator needs (removed again, so other tests see the shipped tasks)."""
    task_registry.task(
        "decoy_swap",
        label="decoy swap",
        version="decoy_swap/1",
        generator=True,
        seeded=True,
        judged=True,
        rejudgeable=True,
        guidance=GUIDANCE,
        review_fields=(("decoy", "new_answer"),),
        bench_settings=("open_book",),
        attack=task_registry.Attack(
            build=lambda max_attempts, shout=False, **dials: DecoySwap(shout), to_case=_decoy_case
        ),
        sweep_settings=("open_book",),
        ladder=((0.0, {"shout": False}), (1.0, {"shout": True})),
        release="Decoy-swap-v1",
        card_text="Decoy swaps: the passage's answer replaced by a decoy the pivot names",
        paper="A toy of this test",
    )(DecoySwapTask)
    yield
    task_registry.unregister("decoy_swap")


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


def test_a_generator_registered_in_one_place_runs_through_every_command(world, isolated, decoy_swap):
    nq, _ = write_data(isolated)

    # run: the runner's case loop, the judge on every case that passed the checks
    made = launch.run_experiment(
        _config(isolated, "decoys", "decoy_swap", nq, {"pivot": PIVOT, "judge": PIVOT}), progress=False
    )
    cases = RunStore(made.run_id).records()
    accepted = [r for r in cases if r["status"] == "accepted"]
    assert accepted and all(r["answers"] == [SWAPPED] and SWAPPED in r["context"] for r in accepted)
    assert all(r["judge"]["if"] is True for r in accepted)

    # evaluate the cases, then the report
    evaluated = launch.run_experiment(
        _config(isolated, "decoys-eval", "evaluate", f"run:{made.run_id}", {"targets": TARGETS}), progress=False
    )
    records = [r for r in RunStore(evaluated.run_id).records() if "target" in r]
    assert {r["task"] for r in records} == {"decoy_swap"}
    report = write_report(records, isolated / "report", title="decoys", run_info={"run_id": evaluated.run_id})
    assert "decoy_swap" in report.read_text()

    # the review page: the registration's guidance and review fields
    session = ReviewSession.open(made.run_id, "tester")
    client = TestClient(create_app(session, allowed_hosts=["testserver"]), follow_redirects=False)
    page = client.get("/case/0").text
    assert GUIDANCE in page and "decoy" in page and SWAPPED in page

    # validity: the judge's verdicts on the run's cases
    assert run_validity(made.run_id).figures

    # export: the card says what a case is, and FaithEval's layout names the folder after the release
    card = export_run(made.run_id, isolated / "hf").out / "README.md"
    assert "Decoy swaps: the passage's answer replaced" in card.read_text()
    faitheval = export_run(made.run_id, isolated / "fe", layout="faitheval")
    assert any("Decoy-swap-v1" in f.as_posix() for f in faitheval.files)

    # a strength sweep over its ladder: the target, which reads the name it knows, misses the capitalised decoy
    sweep = launch.run_experiment(
        _config(
            isolated,
            "decoy-sweep",
            "strength_sweep",
            nq,
            {"pivot": PIVOT, "judge": PIVOT, "targets": TARGETS},
            generator="decoy_swap",
        ),
        progress=False,
    )
    assert sweep.metrics["sweep.0.accepted"] == sweep.metrics["sweep.1.accepted"] == 3
    assert sweep.metrics["sweep.0.qwen2.5-0.5b.open_book.success"] == 0.0
    assert sweep.metrics["sweep.1.qwen2.5-0.5b.open_book.success"] == 1.0

    # the bench: the generator among its tasks, on its paper settings by default
    bench = launch.run_experiment(
        _config(
            isolated,
            "decoy-bench",
            "bench",
            nq,
            {"pivot": PIVOT, "judge": PIVOT, "targets": TARGETS},
            tasks=["decoy_swap"],
            sampled={"decoy_swap": []},
        ),
        progress=False,
    )
    assert "decoy swap" in bench.task.markdown

    # optimize: the generator compiled against the attack metric
    optimised = launch.run_experiment(
        _config(
            isolated,
            "decoy-optimize",
            "optimize",
            nq,
            {"pivot": PIVOT, "judge": PIVOT, "targets": TARGETS},
            generator="decoy_swap",
            optimizers=["bootstrap_fewshot"],
            train=1,
            val=1,
            test=1,
        ),
        progress=False,
    )
    assert {r["generator"] for r in RunStore(optimised.run_id).records() if "generator" in r} == {"decoy_swap"}
