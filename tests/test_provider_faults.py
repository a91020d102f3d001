"""A shipped config run against a fake OpenAI-compatible server that misbehaves on purpose.

The pivot is `openai/<name>` with `api_base` on 127.0.0.1 (tests/fake_openai.py): DSPy's own
retries absorb what they should (429 with Retry-After, 5xx, timeouts), what is left is recorded on
the case as `error:<kind>`, the run finishes within its error budget, and a resume with
--retry-errors redoes the errored cases only. Every request is counted: no test waits on a fault.
"""

import mlflow
import pytest
import yaml

from experiments import runner
from experiments.config import CONFIG_DIR
from experiments.config_loader import load_config
from experiments.errors import ErrorBudgetExceeded
from experiments.run_store import RunStore
from tests.fake_openai import USAGE, FakeOpenAI, replies_from
from tests.shipped import nq_head
from tests.test_tasks_end_to_end import scripted_lm

pytestmark = pytest.mark.timeout(300)  # a hang guard, far above what the tests take

CLIENT_TIMEOUT = 1.0  # seconds; the server holds a "timeout" reply for 4x that. Ordinary replies take ms.


def shipped_answer_swap(tmp_path, server, limit, **run):
    """nq_answer_swap.yaml as shipped, on the first shipped NQ rows (copied out: loading all 8,500
    rows would cost more than the whole test), with its pivot on the fake server and no judge."""
    raw = yaml.safe_load((CONFIG_DIR / "nq_answer_swap.yaml").read_text())
    raw["data"].update(source=str(nq_head(tmp_path, 5 * limit)), limit=limit)
    raw["models"] = {
        "pivot": {
            **raw["models"]["pivot"],
            "name": "openai/fake-pivot",
            "api_base": server.api_base,
            "num_retries": 1,
            "timeout": CLIENT_TIMEOUT,
        }
    }
    raw["run"] = {"error_budget": 0.5, "min_cases_before_budget": 2, **run}
    path = tmp_path / "faults.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_config(path)


def pivot_replies(config):
    return replies_from(scripted_lm(runner.load_data(config).examples, "answer_swap").answers)


def test_faults_are_retried_or_recorded_and_a_resume_redoes_only_errored_cases(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}", hang=4 * CLIENT_TIMEOUT, max_requests=120) as server:
        config = shipped_answer_swap(provider_env, server, limit=8)
        server.reply = pivot_replies(config)
        questions = [e.question for e in runner.load_data(config).examples]
        # Every call of a case carries its question: the first calls of six cases meet these faults,
        # every other case errs at most (the budget is checked after each case: 4 errors in 8 = 50%).
        server.faults = {
            questions[0]: ["rate_limit"],  # retried after Retry-After: 0, then answered
            questions[1]: ["rate_limit", "rate_limit"],  # both attempts refused: error:rate_limit
            questions[2]: ["server"],  # retried after DSPy's 1 s backoff, then answered
            questions[3]: ["server", "server"],  # error:server
            questions[5]: ["timeout", "timeout"],  # no reply within 1 s, twice: error:timeout
            questions[7]: ["truncated"],  # a reply that is no completion: not retried
        }
        result = runner.run_experiment(config, progress=False)

        by_seed = {r["seed_id"]: r for r in RunStore(result.run_id).records()}
        status = [by_seed[e.id]["status"] for e in runner.load_data(config).examples]
        errored = {1: "error:rate_limit", 3: "error:server", 5: "error:timeout", 7: "error:bad_response"}
        assert {i: s for i, s in enumerate(status) if s.startswith("error:")} == errored
        assert "is not JSON" in by_seed[runner.load_data(config).examples[7].id]["error"]
        assert result.metrics["error.rate_limit"] == 1 and result.metrics["error.timeout"] == 1
        assert result.metrics["error.server"] == 1 and result.metrics["error.bad_response"] == 1
        # One retry per call at most: two requests for each fault that was retried.
        assert [s.fault for s in server.requests_with(questions[1])] == ["rate_limit", "rate_limit"]
        assert [s.fault for s in server.requests_with(questions[5])] == ["timeout", "timeout"]
        assert [s.fault for s in server.requests_with(questions[7])] == ["truncated"]  # not retried

        # The pivot's usage is the fake server's usage block times the answered calls.
        answered = sum(s.fault == "ok" for s in server.seen)
        assert result.metrics["lm.pivot.calls"] == answered
        assert result.metrics["lm.pivot.prompt_tokens"] == USAGE["prompt_tokens"] * answered
        assert result.metrics["lm.pivot.completion_tokens"] == USAGE["completion_tokens"] * answered
        assert result.metrics["lm.pivot.errors"] == 4  # the calls DSPy gave up on, one per errored case
        # Every request the server saw, retried and refused ones included; calls count the answered ones only.
        assert result.metrics["lm.pivot.requests"] == len(server.seen) > answered
        # Time in the pivot's calls, waits included: three 1 s backoffs and two 1 s timeouts.
        assert 3.5 < result.metrics["lm.pivot.seconds"] < 30
        assert "lm.pivot.cost_usd" not in result.metrics  # "fake-pivot" has no price: unknown, not zero
        assert mlflow.get_run(result.mlflow_run_id).data.metrics["lm.pivot.calls"] == answered

        # A plain resume leaves errored cases alone and asks nothing.
        before = len(server.seen)
        again = runner.run_experiment(config, progress=False)
        assert again.new_cases == 0 and len(server.seen) == before

        # --retry-errors redoes the four errored cases, now answered; the others are not asked again.
        retried = runner.run_experiment(config, retry_errors=True, progress=False)
        assert retried.new_cases == 4
        asked = {q for q in questions if any(q in s.prompt for s in server.seen[before:])}
        assert asked == {questions[i] for i in errored}
        records = RunStore(result.run_id).records()
        assert len(records) == 8 and not any(r["status"].startswith("error:") for r in records)
        assert not any(k.startswith("error.") for k in retried.metrics)
        assert len(server.seen) <= server.max_requests


def test_a_server_that_always_fails_stops_at_the_error_budget(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}", default="server", max_requests=40) as server:
        config = shipped_answer_swap(provider_env, server, limit=8, error_budget=0.2, min_cases_before_budget=2)
        with pytest.raises(ErrorBudgetExceeded):
            runner.run_experiment(config, progress=False)
        records = RunStore(RunStore.new_id(config.name, config.digest())).records()
        assert [r["status"] for r in records] == ["error:server", "error:server"]
        assert len(server.seen) == 4  # two cases, one call each, tried twice: then the run stopped


def test_provider_usage_with_a_price(provider_env):
    """A model LiteLLM's cost map knows gets a cost; calls answered from the cache cost nothing."""
    with FakeOpenAI(reply=lambda prompt: "{}") as server:
        config = shipped_answer_swap(provider_env, server, limit=2)
        config.models.pivot.name = "openai/gpt-4o-mini"
        server.reply = pivot_replies(config)
        result = runner.run_experiment(config, progress=False)
        usage = {k: v for k, v in result.metrics.items() if k.startswith("lm.pivot.")}
        calls = len(server.seen)
        assert usage["lm.pivot.calls"] == calls > 0 and usage["lm.pivot.errors"] == 0
        assert usage["lm.pivot.seconds"] > 0
        assert 0 < usage["lm.pivot.cost_usd"] < 0.001  # 16 tokens per call at gpt-4o-mini's price
        assert usage["lm.pivot.truncated"] == 0
        children = mlflow.search_runs(
            filter_string=f"tags.mlflow.parentRunId = '{result.mlflow_run_id}'",
            search_all_experiments=True,
            output_format="list",
        )
        assert children[0].data.params["model_string"] == "openai/gpt-4o-mini"

        rerun = runner.run_experiment(config, fresh=True, progress=False)  # same prompts: all cached
        assert len(server.seen) == calls
        assert rerun.metrics["lm.pivot.calls"] == 0 and "lm.pivot.cost_usd" not in rerun.metrics


def test_the_guard_keeps_tests_off_the_network(provider_env):
    import socket

    with pytest.raises(OSError, match="test guard"):
        socket.create_connection(("api.openai.com", 443), timeout=1)
    with pytest.raises(OSError, match="test guard"):
        socket.create_connection(("93.184.216.34", 80), timeout=1)


def test_usage_a_ray_worker_reports_is_merged_into_the_provider_meter(monkeypatch):
    from experiments.config import LMConfig
    from experiments.executors import merge_usage
    from experiments.lm.registry import build_lm

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a provider model is built only with its key
    target = build_lm(LMConfig(name="openai/gpt-4o-mini"), "target")
    worker = {
        "calls": 3,
        "requests": 5,
        "prompt_tokens": 33,
        "completion_tokens": 15,
        "seconds": 1.5,
        "truncated": 0,
        "errors": 1,
        "cost_usd": 0.00002,
    }
    merge_usage({"targets": [target]}, {"target/openai/gpt-4o-mini": worker, "target/other": worker})
    assert target.usage() == {**worker, "cost_usd": 0.00002}
    unpriced = build_lm(LMConfig(name="openai/fake-model"), "pivot")
    merge_usage({"pivot": unpriced}, {"pivot": {k: v for k, v in worker.items() if k != "cost_usd"}})
    assert unpriced.usage()["calls"] == 3 and "cost_usd" not in unpriced.usage()
