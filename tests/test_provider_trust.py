"""Provider runs one can trust, against fake OpenAI-compatible servers (tests/fake_openai.py).

Two servers under one model name never answer from each other's cached replies, and a server that
does not exist is never answered from the cache; a hung server ends as error:timeout; an unparseable
reply is asked again by --retry-errors; the error budget holds for small runs and resumes, and a
budget stop leaves its error kinds in MLflow; calls are counted when the server reports no usage, and
requests apart from them, retries included; a key a server echoes in a reply never reaches the
on-disk call cache.
"""

import socket

import mlflow
import pytest

from experiments import runner
from experiments.errors import ErrorBudgetExceeded
from experiments.run_store import RunStore
from tests.fake_openai import FakeOpenAI
from tests.test_provider_faults import CLIENT_TIMEOUT, pivot_replies, shipped_answer_swap

pytestmark = pytest.mark.timeout(300)  # a hang guard, far above what the tests take

KEY = "sk-fake-server-key"  # what provider_env puts in OPENAI_API_KEY


def statuses(result) -> list[str]:
    return [r["status"] for r in RunStore(result.run_id).records()]


def closed_port() -> int:
    """A port nothing listens on: bound, then released."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_two_servers_under_one_model_name_never_share_cached_replies(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}") as first, FakeOpenAI(reply=lambda prompt: "{}") as second:
        config = shipped_answer_swap(provider_env, first, limit=3)
        first.reply = second.reply = pivot_replies(config)
        ran = runner.run_experiment(config, progress=False)
        assert len(first.seen) > 0 and ran.metrics["lm.pivot.calls"] == len(first.seen)

        # Same model string, same prompts, another server: every call goes to that server.
        config.models.pivot.api_base = second.api_base + "/"  # spelt differently, normalised the same
        again = runner.run_experiment(config, progress=False)
        assert len(second.seen) == len(first.seen)
        assert again.metrics["lm.pivot.calls"] == len(second.seen)

        # The same endpoint spelt another way is the same endpoint: answered from the cache.
        before = len(second.seen)
        config.models.pivot.api_base = f"HTTP://127.0.0.1:{second.port}/v1//"
        cached = runner.run_experiment(config, progress=False)
        assert len(second.seen) == before and cached.metrics["lm.pivot.calls"] == 0

    # A server that does not exist answers nothing, and no case is "ok" from another server's replies.
    config.models.pivot.api_base = f"http://127.0.0.1:{closed_port()}/v1"
    config.models.pivot.num_retries = 0
    config.run.error_budget = 1.0
    gone = runner.run_experiment(config, progress=False)
    assert statuses(gone) == ["error:connection"] * 3
    assert gone.metrics["lm.pivot.calls"] == 0 and gone.metrics["error.connection"] == 3


def test_a_hung_server_ends_as_a_timeout_and_the_mlflow_run_ends(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}", default="timeout", hang=4 * CLIENT_TIMEOUT) as server:
        config = shipped_answer_swap(provider_env, server, limit=1, error_budget=1.0)
        result = runner.run_experiment(config, progress=False)
        assert statuses(result) == ["error:timeout"]
        assert len(server.seen) == 2  # num_retries 1: two attempts of CLIENT_TIMEOUT each, then given up
        assert mlflow.get_run(result.mlflow_run_id).info.status == "FINISHED"
        error = RunStore(result.run_id).records()[0]["error"]
        # The client library's own advice (Timeouts(read=...)) is not reeval's: it is not stored.
        assert "Timeouts(read" not in error and "To fix" not in error


def test_retry_errors_asks_again_for_an_unparseable_reply_and_only_for_it(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}") as server:
        config = shipped_answer_swap(provider_env, server, limit=3, error_budget=1.0)
        server.reply = pivot_replies(config)
        questions = [e.question for e in runner.load_data(config).examples]
        server.faults = {questions[1]: ["unparseable"]}
        first = runner.run_experiment(config, progress=False)
        by_seed = {r["seed_id"]: r["status"] for r in RunStore(first.run_id).records()}
        assert by_seed[runner.load_data(config).examples[1].id] == "error:parse"

        before = len(server.seen)
        retried = runner.run_experiment(config, retry_errors=True, progress=False)
        asked = server.seen[before:]
        assert retried.new_cases == 1
        # The unparseable call is asked again first; after it only the case's calls never made before (the
        # case stopped at the unparseable reply); no call answered before is asked again.
        (unparseable,) = [s for s in server.seen[:before] if s.fault == "unparseable"]
        assert asked[0].body == unparseable.body and asked[0].fault == "ok"
        answered_before = [s.body for s in server.seen[:before] if s.fault == "ok"]
        assert not any(s.body in answered_before for s in asked)
        assert all(questions[1] in s.prompt for s in asked)
        assert "error:parse" not in statuses(retried)


def test_a_small_run_stops_on_its_error_budget_and_mlflow_keeps_the_error_kinds(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}", default="server", max_requests=40) as server:
        # 4 cases, fewer than min_cases_before_budget: the budget judges the whole run.
        config = shipped_answer_swap(provider_env, server, limit=4, error_budget=0.2, min_cases_before_budget=10)
        with pytest.raises(ErrorBudgetExceeded, match=r"4 of 4 records errored .*error:server 4") as stop:
            runner.run_experiment(config, progress=False)
        assert stop.value.kinds == {"error:server": 4}
        run_id = RunStore.new_id(config.name, config.digest())
        (parent,) = [
            r
            for r in mlflow.search_runs(
                search_all_experiments=True, output_format="list", filter_string=f"tags.`reeval.run_id` = '{run_id}'"
            )
            if "mlflow.parentRunId" not in r.data.tags
        ]
        assert parent.info.status == "FAILED" and parent.data.tags["reeval.stopped"] == "error_budget"
        assert parent.data.metrics["error.server"] == 4 and parent.data.metrics["lm.pivot.errors"] == 4


def test_a_resume_obeys_the_error_budget_of_the_whole_run(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}") as server:
        config = shipped_answer_swap(provider_env, server, limit=8, error_budget=0.2, min_cases_before_budget=2)
        server.reply = pivot_replies(config)
        questions = [e.question for e in runner.load_data(config).examples]
        server.faults = {q: ["server", "server"] for q in questions[:2]}  # the first two cases fail
        with pytest.raises(ErrorBudgetExceeded, match="2 of 2"):
            runner.run_experiment(config, progress=False)
        # The server is well again, but the run holds 2 errors: 2 of 8 would still exceed 20%.
        with pytest.raises(ErrorBudgetExceeded, match="2 of 3"):
            runner.run_experiment(config, progress=False)
        healed = runner.run_experiment(config, retry_errors=True, progress=False)
        assert not any(s.startswith("error:") for s in statuses(healed))
        assert any("error budget 20%" in note for note in healed.notes)


def test_calls_are_counted_when_the_server_reports_no_usage(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}", report_usage=False) as server:
        config = shipped_answer_swap(provider_env, server, limit=2)
        server.reply = pivot_replies(config)
        result = runner.run_experiment(config, progress=False)
        assert result.metrics["lm.pivot.calls"] == len(server.seen) > 0
        # Unknown, not zero.
        assert "lm.pivot.prompt_tokens" not in result.metrics
        assert "lm.pivot.completion_tokens" not in result.metrics
        logged = mlflow.get_run(result.mlflow_run_id).data.metrics
        assert logged["lm.pivot.calls"] == len(server.seen) and "lm.pivot.prompt_tokens" not in logged


def test_requests_are_counted_with_their_retries_and_apart_from_the_calls_answered(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}", default="rate_limit", max_requests=40) as server:
        config = shipped_answer_swap(provider_env, server, limit=4, error_budget=1.0)
        config.models.pivot.num_retries = 3
        refused = runner.run_experiment(config, progress=False)
        assert statuses(refused) == ["error:rate_limit"] * 4
        # Four cases, one call each, tried four times: 16 requests, none answered.
        assert len(server.seen) == 16
        assert refused.metrics["lm.pivot.requests"] == 16
        assert refused.metrics["lm.pivot.calls"] == 0 and refused.metrics["lm.pivot.errors"] == 4

        # Half the calls refused once and then answered: each of those is one call and two requests.
        questions = [e.question for e in runner.load_data(config).examples]
        server.default, server.reply = "ok", pivot_replies(config)
        server.faults = {q: ["rate_limit"] for q in questions[:2]}
        before = len(server.seen)
        healed = runner.run_experiment(config, retry_errors=True, progress=False)
        sent = len(server.seen) - before
        answered = sum(s.fault == "ok" for s in server.seen[before:])
        assert sent == answered + 2 and answered > 0
        logged = mlflow.get_run(healed.mlflow_run_id).data.metrics
        assert (logged["lm.pivot.requests"], logged["lm.pivot.calls"]) == (sent, answered)


def test_a_key_echoed_in_a_reply_never_reaches_the_disk_cache(provider_env):
    with FakeOpenAI(reply=lambda prompt: "{}", default="echo_key") as server:
        config = shipped_answer_swap(provider_env, server, limit=1, error_budget=1.0)
        runner.run_experiment(config, progress=False)
        assert server.seen and all(KEY in s.authorization for s in server.seen)  # the key was sent and echoed
    cache = provider_env / "dspy-cache"
    blobs = b"".join(p.read_bytes() for p in cache.rglob("*") if p.is_file())
    assert b"the key you sent is Bearer [redacted]" in blobs  # the reply was cached, redacted
    assert KEY.encode() not in blobs


def test_sigterm_while_a_call_hangs_ends_the_mlflow_run(provider_env):
    """`timeout 150 reeval run …` sends SIGTERM: the run used to be left RUNNING in MLflow."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import yaml

    with FakeOpenAI(reply=lambda prompt: "{}", default="timeout", hang=120) as server:
        config = shipped_answer_swap(provider_env, server, limit=1)
        path = provider_env / "faults.yaml"
        raw = yaml.safe_load(path.read_text())
        raw["models"]["pivot"]["timeout"] = 60  # far longer than the test waits
        path.write_text(yaml.safe_dump(raw))
        env = {**os.environ, "DSPY_CACHEDIR": str(provider_env / "cli-dspy-cache")}
        process = subprocess.Popen(
            [sys.executable, "-m", "experiments", "run", str(path), "--log-level", "WARNING"],
            cwd=Path(__file__).resolve().parents[1],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            while not server.seen and process.poll() is None:  # bounded by the module's timeout mark
                time.sleep(0.1)
            assert server.seen, process.communicate()
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 128 + signal.SIGTERM and "stopped by SIGTERM" in stderr
    from experiments.config_loader import load_config

    run_id = RunStore.new_id(config.name, load_config(path).digest())
    runs = mlflow.search_runs(
        search_all_experiments=True, output_format="list", filter_string=f"tags.`reeval.run_id` = '{run_id}'"
    )
    assert runs and {r.info.status for r in runs} == {"FAILED"}
