"""The estimate's time, and its figures for a run that is part done.

Time: the scaled LM seconds of each model (local models' over the llama.cpp contexts they decode on, providers'
over the run's threads) plus what the pilot spent outside LM calls, taken as fixed. Checked on its arithmetic and
against a scripted bench whose stand-in models take a fixed time per call, cold, so LM time dominates as it does
on a real machine (docs/results/speed.md has a real bench measured against its estimate).

Part done: the estimate covers the cases left only, from the finished cases' real usage (the call cache answers
them as they were made, at no cost), against a fake OpenAI-compatible server: it agrees with what the resume then
spends, and the command line says so from the run's id or folder, as the resume's own pre-run print does.
"""

import json
import time

import pytest

from experiments.errors import SpendCapReached
from experiments.estimate import Estimate, Line, estimate
from experiments.launch import run_experiment
from experiments.run_store import RunStore
from tests.fake_openai import FakeOpenAI
from tests.test_spend import provider_config, script

pytestmark = pytest.mark.timeout(900)


def test_wall_time_is_the_fixed_part_and_the_lm_seconds_over_contexts_and_threads():
    est = Estimate("c", cases=10, pilot_cases=2, threads=4, contexts=2, fixed_seconds=30.0)
    est.lines = [
        Line("evaluate", "target/qwen2.5-0.5b", "qwen2.5-0.5b", seconds=100.0),  # local: over 2 contexts
        Line("generate", "pivot", "openai/gpt-4o-mini", seconds=40.0),  # provider: over 4 threads
    ]
    assert est.wall_seconds == pytest.approx(30.0 + 50.0 + 10.0)
    est.lines.append(Line("validate", "judge", "openai/gpt-4o-mini", seconds=None))  # no answered call to time
    assert est.wall_seconds is None
    assert Estimate("c", cases=0, pilot_cases=1, threads=1).wall_seconds == 0.0


SECONDS_PER_CALL = 0.08


@pytest.fixture
def slow_world(world, monkeypatch):
    """The bench's stand-in models, each call taking a fixed time as a real model's would."""
    from tests.bench_fakes import PromptReadingLlama

    answer = PromptReadingLlama.create_chat_completion

    def slow(self, messages, **kwargs):
        time.sleep(SECONDS_PER_CALL)
        return answer(self, messages, **kwargs)

    monkeypatch.setattr(PromptReadingLlama, "create_chat_completion", slow)
    return world


def test_a_scripted_benchs_time_is_estimated_within_a_quarter_of_a_cold_run(slow_world, isolated, monkeypatch):
    from dspy.clients import configure_cache

    from experiments.bench.stages import LEDGER_FILE
    from tests.test_bench import bench_config

    monkeypatch.setenv("REEVAL_THREADS", "1")
    config = bench_config(isolated, tasks=["answer_swap", "unanswerable", "counterfactual"])
    # The process's first bench pays for imports and loads once; a run in a process of its own pays them too, so
    # both the pilot and the run are measured after a warm-up.
    configure_cache(disk_cache_dir=str(isolated / "warm-up-cache"))
    estimate(config, pilot=1)
    configure_cache(disk_cache_dir=str(isolated / "pilot-cache"))
    est = estimate(config, pilot=2)
    assert est.cases == 3 and est.pilot_cases == 2 and est.contexts == 1
    assert {line.stage.split(".")[0] for line in est.lines} >= {"seeds", "generate", "evaluate"}
    configure_cache(disk_cache_dir=str(isolated / "cold-cache"))  # the run answers every call itself
    started = time.perf_counter()
    result = run_experiment(config, progress=False)
    wall = time.perf_counter() - started
    stages = json.loads((RunStore(result.run_id).dir / LEDGER_FILE).read_text())
    staged = sum(entry["metrics"]["wall_seconds"] for entry in stages.values())
    calls = sum(entry["metrics"].get("lm.calls", 0) for entry in stages.values())
    assert calls * SECONDS_PER_CALL > 0.5 * staged  # LM time dominates, as on a real machine
    assert 0.75 * staged <= est.wall_seconds <= 1.25 * staged, (est.wall_seconds, staged, wall)
    estimated_calls = sum(line.calls for line in est.lines)
    assert 0.75 * calls <= estimated_calls <= 1.25 * calls, (estimated_calls, calls)


def _stopped_midway(provider_env, server, limit=8):
    # About $0.0001-0.0003 a case at gpt-4o-mini's price: this cap stops the run midway (tests/test_spend.py).
    config = provider_config(
        provider_env, server, "answer_swap", limit=limit, options={"distance": "proposed"}, run={"max_cost": 8e-4}
    )
    script(server, config)
    with pytest.raises(SpendCapReached):
        run_experiment(config, progress=False)
    run_id = RunStore.new_id(config.name, config.digest())
    done = len({r["seed_id"] for r in RunStore(run_id).records()})
    assert 0 < done < limit
    return config, run_id, done


def test_a_part_done_run_is_estimated_for_its_cases_left_from_its_finished_cases(provider_env):
    limit = 8
    with FakeOpenAI(reply=lambda prompt: "{}", count_tokens=True, max_requests=400) as server:
        config, run_id, done = _stopped_midway(provider_env, server, limit)
        sent = len(server.seen)
        est = estimate(config, pilot=done)  # the pilot: the finished cases, every call answered by the cache
        assert sent == len(server.seen)  # nothing was sent for it
        assert est.cases == limit - done and est.finished == done and est.run_id == run_id
        assert f"{limit - done} cases left ({done} finished in {run_id})" in est.source()
        (line,) = est.lines
        assert line.pilot_calls == 0 and line.pilot_cached > 0 and line.seconds is None  # cached: no time
        higher = config.model_copy(update={"run": config.run.model_copy(update={"max_cost": 1.0})})
        finished = run_experiment(higher, progress=False)
        whole = estimate(higher, fresh=True, pilot=done)  # the same pilot, scaled to every case
    assert finished.new_cases == limit - done
    m = finished.metrics
    calls = m["lm.pivot.calls"] + m.get("lm.pivot.cached_calls", 0)  # the resume's: the cases left only
    prompt = m["lm.pivot.prompt_tokens"] + m.get("lm.pivot.cached_prompt_tokens", 0)
    for estimated, real in ((line.calls, calls), (line.prompt_tokens, prompt)):
        assert 0.75 * real <= estimated <= 1.25 * real, (estimated, real)
    assert whole.cases == limit and whole.finished == 0
    assert whole.lines[0].calls == pytest.approx(line.calls * limit / (limit - done))

    done_now = estimate(higher, pilot=done)  # every case finished: nothing left, no pilot
    assert done_now.cases == 0 and not done_now.lines and done_now.dollars == 0
    assert "nothing left to run" in done_now.source()


def test_the_command_line_estimates_a_part_done_run_by_its_id_or_folder_and_resume_prints_it(provider_env, monkeypatch):
    from typer.testing import CliRunner

    from experiments.cli import app

    monkeypatch.delenv("CI", raising=False)
    with FakeOpenAI(reply=lambda prompt: "{}", count_tokens=True, max_requests=400) as server:
        config, run_id, done = _stopped_midway(provider_env, server)
        by_id = CliRunner().invoke(app, ["estimate", run_id, "--json"])
        assert by_id.exit_code == 0, by_id.output
        figures = json.loads(by_id.stdout)
        assert figures["cases"] == 8 - done and figures["finished"] == done and figures["run_id"] == run_id
        folder = RunStore(run_id).dir
        by_folder = CliRunner().invoke(app, ["estimate", str(folder), "--json"])
        assert by_folder.exit_code == 0, by_folder.output
        assert json.loads(by_folder.stdout)["cases"] == 8 - done
        outside = provider_env / "elsewhere" / run_id
        outside.mkdir(parents=True)
        (outside / "config.json").write_text((folder / "config.json").read_text())
        refused = CliRunner().invoke(app, ["estimate", str(outside)])
        assert refused.exit_code == 2 and "outside" in refused.stderr

        # Without a terminal, a remainder above the threshold is refused unless --yes; below it, shown and run.
        asked = CliRunner().invoke(
            app, ["resume", run_id, "--max-cost", "1", "--confirm-above", "0", "--log-level", "ERROR"]
        )
        assert asked.exit_code == 2 and "--yes" in asked.stderr
        assert f"{8 - done} cases left ({done} finished in {run_id})" in " ".join(asked.stdout.split())
        resumed = CliRunner().invoke(app, ["resume", run_id, "--max-cost", "1", "--log-level", "ERROR"])
        assert resumed.exit_code == 0, resumed.output
        assert f"{8 - done} cases left" in " ".join(resumed.stdout.split())
    seeds = [r["seed_id"] for r in RunStore(run_id).records()]
    assert len(seeds) == len(set(seeds)) == 8
