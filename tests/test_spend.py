"""Dollars, the spend cap and the estimate, against a fake OpenAI-compatible server that reports usage.

The models are `openai/gpt-4o-mini` (a model LiteLLM's offline cost map prices) behind `api_base` on 127.0.0.1
(tests/fake_openai.py), whose usage blocks count the tokens of each request and reply: a longer prompt costs more.
"""

import json

import litellm
import mlflow
import pytest
import yaml

from experiments import runner
from experiments.config_loader import load_config
from experiments.errors import SpendCapReached
from experiments.estimate import estimate, rows
from experiments.launch import run_experiment
from experiments.lm.prices import Price, dollars
from experiments.run_store import RunStore
from tests.fake_openai import FakeOpenAI, replies_from
from tests.shipped import nq_head
from tests.test_tasks_end_to_end import scripted_lm

pytestmark = pytest.mark.timeout(600)

PRICED = "openai/gpt-4o-mini"


def provider_config(folder, server, task, limit, roles=("pivot",), options=None, run=None, name=PRICED, **model):
    """A config of `task` on the first shipped NQ rows, each role's model on the fake server."""
    entry = {"name": name, "api_base": server.api_base, "max_tokens": 64, "num_retries": 0, **model}
    models = {role: ([entry] if role == "targets" else entry) for role in roles}
    raw = {
        "name": f"spend-{task}",
        "task": task,
        "data": {"source": str(nq_head(folder, 5 * limit)), "limit": limit, "max_evidence_words": 300},
        "models": models,
        "validation": {"calibration_controls": 0},
        "options": options or {},
        "run": run or {},
    }
    path = folder / f"{task}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_config(path)


def script(server, config):
    examples = runner.load_data(config).examples
    server.reply = replies_from(scripted_lm(examples, config.task).answers)


def price_map_dollars(model: str, usages: list[dict]) -> float:
    return sum(
        sum(
            litellm.cost_per_token(
                model=model, prompt_tokens=u["prompt_tokens"], completion_tokens=u["completion_tokens"]
            )
        )
        for u in usages
    )


def test_a_runs_dollars_are_the_price_maps_figures_summed_over_its_requests(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}", count_tokens=True) as server:
        config = provider_config(provider_env, server, "answer_swap", limit=4, options={"distance": "proposed"})
        script(server, config)
        result = run_experiment(config, progress=False)
        usages = list(server.usages)
    assert len(usages) == result.metrics["lm.pivot.calls"] > 4
    assert len({u["prompt_tokens"] for u in usages}) > 1  # prompts of several lengths, each priced as it is
    expected = price_map_dollars(PRICED, usages)
    assert result.metrics["lm.pivot.cost_usd"] == pytest.approx(expected, rel=1e-6)
    assert result.metrics["cost_usd"] == pytest.approx(expected, rel=1e-6)  # the run's total: the only model
    assert result.metrics["cpu_seconds"] > 0
    logged = mlflow.get_run(result.mlflow_run_id).data.metrics
    assert logged["cost_usd"] == pytest.approx(expected, rel=1e-6)


def test_a_price_the_config_gives_prices_a_model_the_map_lacks(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}", count_tokens=True) as server:
        config = provider_config(
            provider_env,
            server,
            "answer_swap",
            limit=2,
            options={"distance": "proposed"},
            name="openai/house-model",
            price={"prompt_per_million": 2.0, "completion_per_million": 8.0},
        )
        unpriced = config.model_copy(deep=True)
        unpriced.models.pivot.price = None
        assert config.digest() == unpriced.digest()  # a price is no part of the run's identity
        script(server, config)
        result = run_experiment(config, progress=False)
        usages = list(server.usages)
    expected = sum(u["prompt_tokens"] * 2.0 + u["completion_tokens"] * 8.0 for u in usages) / 1e6
    assert result.metrics["cost_usd"] == pytest.approx(expected, rel=1e-6)
    assert dollars("openai/house-model", 10, 10) is None  # without the config's price: unknown, not free
    assert dollars("qwen2.5-1.5b", 10**6, 10**6) == 0.0  # a local model runs here: no dollars
    assert dollars("openai/house-model", 10**6, 0, Price(prompt_per_million=2, completion_per_million=8)) == 2.0


CASES = {
    "answer_swap": dict(roles=("pivot",), options={"distance": "proposed"}),
    "unanswerable": dict(roles=("pivot",), options={}),
    "evaluate": dict(roles=("targets",), options={"settings": ["closed_book", "open_book"], "decodings": ["greedy"]}),
}


@pytest.mark.parametrize("task", list(CASES))
def test_the_estimate_is_within_a_quarter_of_the_runs_calls_and_tokens(provider_env, task):
    with FakeOpenAI(reply=lambda prompt: "{}", count_tokens=True, max_requests=400) as server:
        config = provider_config(provider_env, server, task, limit=20, **CASES[task])
        script(server, config)
        est = estimate(config)  # a pilot of the first five cases
        piloted = len(server.seen)
        result = run_experiment(config, progress=False)
    assert est.cases == 20 and est.pilot_cases == 5 and piloted > 0
    assert "pilot of 5 of 20 cases" in est.source()
    (line,) = est.lines
    label = line.label
    m = result.metrics
    # The run's calls: those it sent and those the cache answered (the pilot's, replayed at no cost).
    calls = m[f"lm.{label}.calls"] + m.get(f"lm.{label}.cached_calls", 0)
    prompt = m[f"lm.{label}.prompt_tokens"] + m.get(f"lm.{label}.cached_prompt_tokens", 0)
    completion = m[f"lm.{label}.completion_tokens"] + m.get(f"lm.{label}.cached_completion_tokens", 0)
    assert m.get(f"lm.{label}.cached_calls", 0) > 0  # the pilot's calls were not paid for twice
    for estimated, real in ((line.calls, calls), (line.prompt_tokens, prompt), (line.completion_tokens, completion)):
        assert 0.75 * real <= estimated <= 1.25 * real, (task, estimated, real)
    assert line.dollars == pytest.approx(
        dollars(PRICED, round(line.prompt_tokens), round(line.completion_tokens)), rel=1e-9
    )


def test_a_cap_stops_the_run_at_the_cap_and_a_resume_with_a_higher_cap_finishes_every_case_once(provider_env):
    limit = 8
    with FakeOpenAI(reply=lambda prompt: "{}", count_tokens=True, max_requests=400) as server:
        # A case here costs about $0.0001-0.0003 at gpt-4o-mini's price (the pivot writes every kind, retries
        # included): this cap stops the run midway.
        cap = 8e-4
        config = provider_config(
            provider_env, server, "answer_swap", limit=limit, options={"distance": "proposed"}, run={"max_cost": cap}
        )
        script(server, config)
        with pytest.raises(SpendCapReached) as stopped:
            run_experiment(config, progress=False)
        message = str(stopped.value)
        run_id = RunStore.new_id(config.name, config.digest())
        assert "\n" not in message and f"${cap:.4f}" in message and "run.max_cost" in message
        assert f"reeval resume {run_id} --max-cost" in message
        spent = price_map_dollars(PRICED, server.usages)
        assert 0 < spent <= cap  # never past the cap, and every request priced as the map prices it
        store = RunStore(run_id)
        done = [r["seed_id"] for r in store.records()]
        assert 0 < len(done) < limit
        charged = json.loads((store.dir / "spend.json").read_text())["charged_usd"]
        assert charged == pytest.approx(spent, rel=1e-6)

        higher = config.model_copy(update={"run": config.run.model_copy(update={"max_cost": 1.0})})
        assert higher.digest() == config.digest()  # the same run: a cap is how it runs, not what it computes
        finished = run_experiment(higher, progress=False)
        total = price_map_dollars(PRICED, server.usages)
    seeds = [r["seed_id"] for r in RunStore(run_id).records()]
    assert sorted(seeds) == sorted({e.id for e in runner.load_data(config).examples})  # every case exactly once
    assert len(seeds) == len(set(seeds)) == limit
    assert finished.new_cases == limit - len(done)
    assert json.loads((RunStore(run_id).dir / "spend.json").read_text())["charged_usd"] == pytest.approx(total)


def test_a_cap_needs_a_price_for_every_provider_model(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}") as server:
        config = provider_config(
            provider_env, server, "answer_swap", limit=2, name="openai/house-model", run={"max_cost": 1.0}
        )
        with pytest.raises(Exception, match="run.max_cost: no price for models.pivot"):
            run_experiment(config, progress=False)
        assert not server.seen


def test_the_command_line_estimates_asks_and_stops_at_the_cap_in_one_line(provider_env, monkeypatch):
    from typer.testing import CliRunner

    from experiments.cli import app

    monkeypatch.delenv("CI", raising=False)  # no terminal is what refuses here, not CI
    with FakeOpenAI(reply=lambda prompt: "{}", count_tokens=True, max_requests=400) as server:
        config = provider_config(provider_env, server, "answer_swap", limit=8, options={"distance": "proposed"})
        script(server, config)
        path = str(provider_env / "answer_swap.yaml")
        run_id = RunStore.new_id(config.name, config.digest())

        estimated = CliRunner().invoke(app, ["estimate", path, "--json"])
        assert estimated.exit_code == 0, estimated.output
        figures = json.loads(estimated.stdout)
        assert figures["cases"] == 8 and figures["pilot_cases"] == 5 and figures["dollars"] > 0
        assert [line["stage"] for line in figures["lines"]] == ["generate"]
        assert not RunStore(run_id).dir.exists()  # the pilot ran in scratch stores

        # Without a terminal nobody can answer: above the threshold the run is refused unless --yes.
        refused = CliRunner().invoke(app, ["run", path, "--confirm-above", "0", "--log-level", "WARNING"])
        assert refused.exit_code == 2, refused.output
        assert "above $0.00 (--confirm-above)" in refused.stderr and "--yes" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1 and not RunStore(run_id).cases_path.exists()

        capped = CliRunner().invoke(app, ["run", path, "--yes", "--max-cost", "0.000001", "--log-level", "ERROR"])
        assert capped.exit_code == 2, capped.output
        line = capped.stderr.strip().splitlines()[-1]  # after the progress bar's lines
        assert "spend cap $0.0000 reached (run.max_cost)" in line and "Traceback" not in capped.stderr
        # The pilot's five cases come from the call cache at no cost; the first request past them is refused.
        assert "5 records of the run's 8 rows saved" in line
        assert f"reeval resume {run_id} --max-cost 2e-06" in line

        finished = CliRunner().invoke(app, ["resume", run_id, "--max-cost", "1", "--log-level", "ERROR"])
        assert finished.exit_code == 0, finished.output
        shown = CliRunner().invoke(app, ["show", run_id])
        assert "spent: $" in shown.stdout and "cost_usd" in shown.stdout
    seeds = [r["seed_id"] for r in RunStore(run_id).records()]
    assert len(seeds) == len(set(seeds)) == 8


def test_the_judges_calibration_is_estimated_as_the_fixed_count_it_is_and_its_calls_per_case_scaled(provider_env):
    """The controls are the same calls whatever the data's size: a pilot of 5 of 20 cases that scaled them by 4
    would count the calibration four times over."""
    with FakeOpenAI(reply=lambda prompt: "{}", count_tokens=True, max_requests=800) as server:
        config = provider_config(
            provider_env, server, "answer_swap", limit=20, roles=("pivot", "judge"), options={"distance": "proposed"}
        )
        config = config.model_copy(
            update={"validation": config.validation.model_copy(update={"calibration_controls": 3})}
        )
        script(server, config)
        est = estimate(config)
        result = run_experiment(config, progress=False)
        again = estimate(config, fresh=True)  # every call of the pilot now in the cache
    m = result.metrics
    lines = {line.stage: line for line in est.lines if line.label == "judge"}
    assert set(lines) == {"calibration", "validate"}
    calibration, per_case = lines["calibration"], lines["validate"]
    controls = 3 * 4  # per condition, four conditions
    # Every control judged by the pilot (two alike answered by the cache); the run asks the same, the cache answering.
    assert calibration.fixed and calibration.calls == calibration.pilot_calls + calibration.pilot_cached >= controls
    ran = {k: m.get(f"judge_calibration.usage.{k}", 0) for k in ("calls", "cached_calls")}
    assert ran == {"calls": 0, "cached_calls": calibration.calls}
    assert [row[:3] for row in rows(est)[1] if row[0] == "calibration"] == [["calibration", "judge", "fixed"]]
    # What the pilot paid: the controls it sent, not those the cache answered (which the run replays free too).
    assert 0 < calibration.dollars < dollars(PRICED, calibration.pilot_prompt, calibration.pilot_completion)
    (replayed,) = [line for line in again.lines if line.stage == "calibration"]
    assert (replayed.calls, replayed.pilot_calls, replayed.dollars) == (calibration.calls, 0, 0)
    assert replayed.seconds < calibration.seconds  # a lookup in the cache, no model's time
    # The judge's calls per case, its calibration left out, are scaled from 5 cases to 20.
    assert per_case.pilot_calls > 0 and per_case.calls == 4 * (per_case.pilot_calls + per_case.pilot_cached)
    judged = m["lm.judge.calls"] + m.get("lm.judge.cached_calls", 0)
    total = sum(line.calls for line in lines.values())
    assert 0.75 * judged <= total <= 1.25 * judged, (total, judged)
