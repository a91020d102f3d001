"""The estimate's time, and its figures for a run that is part done.

Time: the scaled LM seconds of each model (local models' over the llama.cpp contexts they decode on, providers'
over the run's threads) plus what the pilot spent outside LM calls, taken as fixed. Checked on its arithmetic and
against a scripted bench whose stand-in models take a fixed time per call, cold, so LM time dominates as it does
on a real machine (docs/results/speed.md has a real bench measured against its estimate).

Part done: the estimate covers the cases left only, from the finished cases' real usage (the call cache answers
them as they were made, at no cost), against a fake OpenAI-compatible server: it agrees with what the resume then
spends, and the command line says so from the run's id or folder, as the resume's own pre-run print does. A
bench part done is estimated per stage: its finished stages cost nothing, a stage begun only its items left.
"""

import json
import shutil
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


def test_a_calibration_stage_is_one_unscaled_line_whose_controls_are_timed_one_after_another():
    from experiments.config import LMConfig
    from experiments.estimate import _lines, _outside_lm

    usage = {"calls": 12, "prompt_tokens": 1200, "completion_tokens": 60, "seconds": 6.0}
    metrics = {f"lm.judge.{k}": v for k, v in usage.items()} | {
        f"judge_calibration.usage.{k}": v for k, v in usage.items()
    }
    models = {"judge": ("judge", LMConfig(name="openai/gpt-4o-mini"))}
    (line,) = _lines(metrics | {"wall_seconds": 8.0}, models, scale=10.0, stage="calibration")
    assert line.fixed and (line.stage, line.calls, line.prompt_tokens, line.seconds) == ("calibration", 12, 1200, 6.0)
    # Judged one after another: neither the line's time nor the stage's own is divided by the run's threads.
    assert _outside_lm(metrics | {"wall_seconds": 8.0}, models, contexts=1, threads=4) == pytest.approx(2.0)
    est = Estimate("c", cases=100, pilot_cases=10, threads=4, fixed_seconds=2.0, lines=[line])
    assert est.wall_seconds == pytest.approx(8.0)


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


def test_a_part_done_bench_is_estimated_per_stage_for_what_it_has_left(world, isolated, monkeypatch):
    """A bench stopped in its first target's evaluation: the stages its ledger records finished cost nothing, the
    stage begun is scaled to the asks it has left, the stages after it whole; against what the resume then spends."""
    from dspy.clients import configure_cache

    from experiments.bench.stages import LEDGER_FILE
    from experiments.run_store import stage_run_id
    from tests.test_bench import bench_config

    monkeypatch.setenv("REEVAL_THREADS", "1")
    config = bench_config(isolated, tasks=["answer_swap", "unanswerable"])
    configure_cache(disk_cache_dir=str(isolated / "run-cache"))
    bench = RunStore(run_experiment(config, progress=False).run_id)
    ledger = json.loads((bench.dir / LEDGER_FILE).read_text())
    evaluate = sorted(s for s in ledger if s.startswith("evaluate."))
    assert len(evaluate) == 2
    stopped = RunStore(stage_run_id(bench.run_id, evaluate[0]), root=bench.dir.parent)
    rows = stopped.cases_path.read_text().splitlines()
    asks = list(dict.fromkeys(json.loads(row)["seed_id"] for row in rows))
    kept = set(asks[: len(asks) // 2])
    stopped.cases_path.write_text("".join(row + "\n" for row in rows if json.loads(row)["seed_id"] in kept))
    shutil.rmtree(RunStore(stage_run_id(bench.run_id, evaluate[1]), root=bench.dir.parent).dir)
    finished = {s: entry for s, entry in ledger.items() if s not in evaluate}
    (bench.dir / LEDGER_FILE).write_text(json.dumps(finished))

    # Cold caches: local models count no call the cache answers, so the pilot and the resume each answer their own.
    configure_cache(disk_cache_dir=str(isolated / "pilot-cache"))
    est = estimate(config, pilot=3)  # every case: a scale of 1, so the stage begun is scaled by its asks left only
    assert sorted(est.stages_finished) == sorted(finished) and est.stages_part_done == {evaluate[0]: len(kept)}
    assert est.run_id == bench.run_id and f"{len(finished)} finished, 1 part done in {bench.run_id}" in est.source()
    assert {line.stage for line in est.lines} == set(evaluate)
    configure_cache(disk_cache_dir=str(isolated / "resume-cache"))
    run_experiment(config, progress=False)
    resumed = json.loads((bench.dir / LEDGER_FILE).read_text())
    for stage in evaluate:
        real = resumed[stage]["metrics"]["lm.calls"]
        estimated = sum(line.calls for line in est.lines if line.stage == stage)
        assert real > 0 and 0.75 * real <= estimated <= 1.25 * real, (stage, estimated, real)
    first = sum(line.calls for line in est.lines if line.stage == evaluate[0])
    assert first < 0.75 * ledger[evaluate[0]]["metrics"]["lm.calls"]  # not the whole stage

    configure_cache(disk_cache_dir=str(isolated / "fresh-cache"))
    whole = estimate(config, pilot=3, fresh=True)  # a new run: every stage
    assert not whole.stages_finished and {line.stage for line in whole.lines} >= set(ledger) - {"calibration"}
