"""Dollars and CPU seconds in the bench's Cost table, per stage and in total, from the figures a run's cost_usd
is made of (each model's `usage()`): a local model's stage costs $0 and reports CPU seconds, a priced provider's
the dollars its meter charged during that stage, an unpriced one none."""

import contextlib
from types import SimpleNamespace

import pytest

from experiments.bench.render import sections
from experiments.bench.stages import StageRunner
from experiments.bench.summary import stage_rows
from experiments.report_page import to_markdown
from experiments.run_store import RunStore


class _Usage:
    """A ResolvedLM as far as a stage's accounting goes: what `usage()` says so far."""

    def __init__(self, name, **usage):
        self.config, self.figures = SimpleNamespace(name=name), {"calls": 0, **usage}

    def usage(self):
        return dict(self.figures)


@pytest.fixture
def stage_runner(tmp_path, monkeypatch):
    import mlflow

    monkeypatch.setattr(mlflow, "log_metrics", lambda *a, **k: None)
    monkeypatch.setattr("experiments.tracking.nested_run", lambda *a, **k: contextlib.nullcontext())

    def make(lms):
        return StageRunner(RunStore("bench-x", root=tmp_path), lms, "bench-x")

    return make


def _burn_cpu(seconds: float) -> None:
    import time

    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_stage_records_the_dollars_its_models_spent_in_it_and_its_cpu_seconds(stage_runner):
    local = _Usage("qwen2.5-0.5b", cost_usd=0.0)
    priced = _Usage("openai/gpt-4o-mini", calls=2, cost_usd=0.0015)  # spent before the stage: not the stage's
    runner = stage_runner({"target/qwen2.5-0.5b": local, "target/openai/gpt-4o-mini": priced})

    def work(store):
        local.figures.update(calls=4, seconds=2.0)
        priced.figures.update(calls=5, cost_usd=0.0040)
        _burn_cpu(0.2)
        return {"items": 2}

    metrics = runner.run("evaluate.x", "inputs", work)
    assert metrics["lm.cost_usd"] == pytest.approx(0.0025)
    assert metrics["lm.target/openai/gpt-4o-mini.cost_usd"] == pytest.approx(0.0025)
    assert metrics["lm.target/qwen2.5-0.5b.cost_usd"] == 0.0  # a figure, not left out
    assert metrics["cpu_seconds"] >= 0.2

    free = stage_runner({"judge": local}).run("validate.x", "inputs", lambda store: {"items": 1})
    assert free["lm.cost_usd"] == 0.0


def test_a_model_that_answers_without_a_price_leaves_the_stages_dollars_unknown(stage_runner):
    unpriced = _Usage("openai/house-model")
    local = _Usage("qwen2.5-0.5b", cost_usd=0.0)
    runner = stage_runner({"pivot/house": unpriced, "judge": local})

    def work(store):
        unpriced.figures.update(calls=3)  # answered, and its meter had no price for it: no cost_usd
        return {"items": 1}

    metrics = runner.run("generate.x", "inputs", work)
    assert "lm.cost_usd" not in metrics and "lm.pivot/house.cost_usd" not in metrics
    assert metrics["lm.judge.cost_usd"] == 0.0
    [row] = stage_rows({"generate.x": metrics}, {"generate.x": True})
    assert row["dollars"] is None


def _cost_section(stages):
    tables = {
        "tasks": [],
        "targets": [],
        "headline": "open_book",
        "main": {},
        "answers": {},
        "effects": [],
        "keywords": {"keyword_strict": [], "keyword_nonstrict": []},
        "drops": [],
        "accuracy": [],
        "transfer": {},
        "ranks": [],
    }
    (cost,) = [s for s in sections(tables, [], stages, {}) if s.title == "Cost"]
    return cost


def test_the_cost_table_shows_each_stages_dollars_and_cpu_seconds_and_their_total():
    ledger = {
        "seeds.p": {
            "items": 8,
            "lm.calls": 16,
            "lm.seconds": 50.0,
            "wall_seconds": 55,
            "cpu_seconds": 104.0,
            "lm.cost_usd": 0.0,
        },
        "evaluate.t": {
            "items": 8,
            "lm.calls": 8,
            "lm.seconds": 3.0,
            "wall_seconds": 4,
            "cpu_seconds": 1.0,
            "lm.cost_usd": 0.01234,
        },
    }
    cost = _cost_section(stage_rows(ledger, {"seeds.p": True, "evaluate.t": False}))
    column = {name: i for i, name in enumerate(cost.header)}
    seeds, evaluate, total = cost.rows
    assert seeds[column["dollars"]] == "$0.0000" and seeds[column["CPU seconds"]] == "104"
    assert evaluate[column["dollars"]] == "$0.0123"
    assert total[0] == "total" and total[column["dollars"]] == "$0.0123"
    assert total[column["CPU seconds"]] == "105" and total[column["LM calls"]] == "24"
    markdown = to_markdown("t", "", [cost])
    assert "| CPU seconds | dollars |" in markdown and "| $0.0123 |" in markdown

    # A stage without a figure (an unpriced model, or a ledger written before dollars were): no total either.
    old = {"seeds.p": {"items": 8, "lm.calls": 16}}
    rows = _cost_section(stage_rows({**ledger, **old}, {})).rows
    assert rows[0][column["dollars"]] == "—" and rows[0][column["CPU seconds"]] == "—"
    assert rows[-1][column["dollars"]] == "—" and rows[-1][column["CPU seconds"]] == "—"


def test_a_bench_of_local_models_reports_zero_dollars_and_its_cpu_seconds(world, isolated):
    from experiments import launch
    from tests.test_bench import bench_config

    config = bench_config(isolated, tasks=["unanswerable"])
    result = launch.run_experiment(config, progress=False)
    assert result.metrics["cost_usd"] == 0.0 and result.metrics["cost_usd_all_stages"] == 0.0
    assert result.metrics["cpu_seconds"] > 0
    ledger = RunStore(result.run_id).dir / "stages.json"
    import json

    stages = json.loads(ledger.read_text())
    assert all(entry["metrics"]["lm.cost_usd"] == 0.0 for entry in stages.values())
    markdown = (RunStore(result.run_id).dir / "report" / "bench.md").read_text()
    cost = markdown.split("## Cost", 1)[1]
    assert "| CPU seconds | dollars |" in cost
    total = next(line for line in cost.splitlines() if line.startswith("| total |"))
    assert total.rstrip().endswith("| $0.0000 |")

    again = launch.run_experiment(config, progress=False)  # every stage reused: nothing spent now
    assert again.metrics["cost_usd"] == 0.0 and again.metrics["cpu_seconds"] == 0.0
