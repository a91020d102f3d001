"""The smaller parts of trustworthy provider runs, each on its own: the call-cache key, the default
timeout, stored errors, the budget rule, usage figures, the CLI's limits and help, validity notes,
lenient scoring, and the review page's path."""

import hashlib
import json

import orjson
import pytest
from typer.testing import CliRunner

from experiments.call_cache import call_scope, endpoint_of, normalise_api_base
from experiments.cli import app
from experiments.config import LMConfig
from experiments.errors import ErrorBudgetExceeded, check_budget, error_text
from experiments.lm.usage import CallMeter


@pytest.mark.parametrize(
    "spelling",
    [
        "http://127.0.0.1:8000/v1",
        "HTTP://127.0.0.1:8000/v1/",
        "http://127.0.0.1:8000/v1//",
        " http://127.0.0.1:8000/v1 ",
    ],
)
def test_one_endpoint_has_one_spelling(spelling):
    assert normalise_api_base(spelling) == "http://127.0.0.1:8000/v1"


def test_endpoints_differ_by_port_path_and_host_and_drop_default_ports():
    base = normalise_api_base("http://10.0.0.1:8000/v1")
    assert base != normalise_api_base("http://10.0.0.1:8001/v1")
    assert base != normalise_api_base("http://10.0.0.2:8000/v1")
    assert base != normalise_api_base("http://10.0.0.1:8000/v2")
    assert normalise_api_base("https://api.example.com:443/v1") == "https://api.example.com/v1"


def test_an_endpoint_without_api_base_is_the_address_variable_or_the_provider(monkeypatch):
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert endpoint_of("openai/gpt-4o-mini", None) == "openai:default"
    monkeypatch.setenv("OPENAI_API_BASE", "http://gateway:9000/v1/")
    assert endpoint_of("openai/gpt-4o-mini", None) == "http://gateway:9000/v1"
    assert endpoint_of("openai/gpt-4o-mini", "http://other:1/v1") == "http://other:1/v1"


def _dspy_key(request: dict) -> str:
    """DSPy's own key rule (dspy/clients/cache.py), api_base and friends ignored."""
    params = {k: v for k, v in request.items() if k not in ("api_key", "api_base", "base_url")}
    return hashlib.sha256(orjson.dumps(params, option=orjson.OPT_SORT_KEYS)).hexdigest()


def test_local_model_keys_are_dspys_own_and_provider_keys_hold_the_endpoint():
    import dspy

    from experiments.call_cache import install

    install()
    request = {
        "model": "local/qwen2.5-0.5b@1d9614638d18",
        "messages": [{"role": "user", "content": "q"}],
        "temperature": 0.0,
        "_fn_identifier": "dspy.clients.lm.litellm_completion",
    }
    # A local model's call (no endpoint), or a call outside any reeval call: the key DSPy always made,
    # so cache entries written before the endpoint was keyed keep answering local models.
    assert dspy.cache.cache_key(request) == _dspy_key(request)
    with call_scope(None):
        assert dspy.cache.cache_key(request) == _dspy_key(request)
    provider = {**request, "model": "openai/m", "api_base": "http://a:1/v1", "timeout": 5.0}
    with call_scope("http://a:1/v1"):
        at_a = dspy.cache.cache_key(provider)
    with call_scope("http://b:1/v1"):
        at_b = dspy.cache.cache_key(provider)
    with call_scope("http://a:1/v1"):
        slower = dspy.cache.cache_key({**provider, "timeout": 60.0})  # waiting longer changes no reply
    assert at_a != at_b and at_a == slower and at_a != _dspy_key(provider)


def test_a_provider_lm_gets_the_default_timeout_unless_the_config_sets_one(monkeypatch):
    from experiments.lm.registry import DEFAULT_TIMEOUT, build_lm

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert build_lm(LMConfig(name="openai/m"), "pivot").lm.kwargs["timeout"] == DEFAULT_TIMEOUT
    assert build_lm(LMConfig(name="openai/m", timeout=5), "pivot").lm.kwargs["timeout"] == 5
    assert "120" in LMConfig.model_fields["timeout"].description


def test_stored_provider_errors_leave_out_the_client_librarys_advice():
    from dspy._vendor.lm15.errors import RateLimitError
    from dspy._vendor.lm15.transports._limits import read_timeout_hint

    limited = RateLimitError("slow down")
    assert "never retries" in str(limited)  # what the library appends
    assert error_text(limited) == "RateLimitError: slow down"
    timed_out = TimeoutError(f"request to http://127.0.0.1:1/v1 timed out: {read_timeout_hint(2.0)}")
    text = error_text(timed_out)
    assert "timed out" in text and "Timeouts(read" not in text and "lm15's read timeout" not in text


def test_the_budget_judges_a_run_smaller_than_min_cases_once_it_is_whole():
    bad = [{"status": "error:server"}] * 2 + [{"status": "accepted"}] * 6
    check_budget(bad[:7], budget=0.2, min_cases=10, total=8)  # 7 of 8 done: not yet judged
    with pytest.raises(ErrorBudgetExceeded, match=r"2 of 8 records errored \(25% > budget 20%\): error:server 2"):
        check_budget(bad, budget=0.2, min_cases=10, total=8)
    check_budget(bad, budget=0.25, min_cases=10, total=8)  # exactly the budget is within it


def test_tokens_are_unknown_when_a_call_reported_none_and_cache_hits_are_not_calls():
    meter = CallMeter()
    meter.add([{"usage": {"prompt_tokens": 3, "completion_tokens": 2}}], 0.1)
    assert meter.as_dict()["calls"] == 1 and meter.as_dict()["prompt_tokens"] == 3
    meter.add([{"usage": {}}], 0.1, cache_hits=1)  # answered from the cache
    assert meter.as_dict()["calls"] == 1
    meter.add([{"usage": {}}], 0.1)  # a real call whose reply had no usage block
    out = meter.as_dict()
    assert out["calls"] == 2 and "prompt_tokens" not in out and "completion_tokens" not in out


def test_tokens_are_absent_not_zero_when_no_call_was_answered():
    meter = CallMeter()
    meter.failed(0.2, requests=4)  # refused four times: no reply, so no token was counted
    out = meter.as_dict()
    assert out["calls"] == 0 and out["errors"] == 1 and out["requests"] == 4
    assert "prompt_tokens" not in out and "completion_tokens" not in out
    meter.merge({"calls": 0, "requests": 1, "errors": 1})  # a worker that got no reply either
    assert "prompt_tokens" not in meter.as_dict()
    meter.add([{"usage": {"prompt_tokens": 5, "completion_tokens": 1}}], 0.1)
    assert meter.as_dict()["prompt_tokens"] == 5 and meter.as_dict()["completion_tokens"] == 1


def _invoke(*args):
    return CliRunner().invoke(app, list(args))


def test_help_shows_no_bool_type_beside_flags():
    for command in ("run", "resume", "show", "validity"):
        result = _invoke(command, "--help")
        assert result.exit_code == 0 and "--help" in result.output
        assert "<bool>" not in result.output, command


def test_a_negative_limit_is_refused_and_limit_zero_says_so(isolated, tmp_path):
    from tests.shipped import nq_head

    source = nq_head(tmp_path, 20)
    path = tmp_path / "limit.yaml"
    path.write_text(
        f"name: limit\ntask: seed_selection\ndata: {{source: '{source}'}}\n"
        "models: {pivot: {name: openai/m, api_base: 'http://127.0.0.1:9/v1'}}\n"
    )
    negative = _invoke("run", str(path), "--limit", "-1", "--log-level", "WARNING")
    assert negative.exit_code == 2 and "--limit" in negative.output and "greater than or equal to 0" in negative.output
    path.write_text(path.read_text().replace("}\nmodels", ", limit: -3}\nmodels"))
    in_config = _invoke("run", str(path), "--log-level", "WARNING")
    assert in_config.exit_code == 2 and "data.limit" in in_config.stderr
    assert "greater than or equal to 0" in in_config.stderr
    path.write_text(path.read_text().replace("limit: -3", "limit: 0"))
    zero = _invoke("run", str(path), "--log-level", "WARNING")
    assert zero.exit_code == 2 and "data.limit is 0" in zero.stderr and "filters" not in zero.stderr


def test_an_unjudged_runs_validity_note_does_not_name_a_judge():
    from metrics.validity import CHECKS_ALONE, JUDGE_ALONE, JudgedCase, validity_figures

    cases = [JudgedCase(f"a{i}", "t/accepted", True) for i in range(4)]
    unjudged = validity_figures(cases, {}, judged=False)
    assert unjudged.notes == [CHECKS_ALONE] and JUDGE_ALONE not in unjudged.notes
    assert validity_figures(cases, {}, judged=True).notes == [JUDGE_ALONE]


def test_scoring_asks_a_terse_answer_to_be_half_of_a_longer_gold():
    from metrics import is_correct
    from metrics.scores import score_record

    gold = "the capital city of France is Paris on the Seine"

    def correct(prediction, golds):
        return score_record({"prediction": prediction, "answers": golds, "status": "ok"})["correct"]

    assert not correct("Paris", [gold])
    assert is_correct("Paris", [gold])  # seed selection keeps its rule: seeds stay the same
    assert correct("1990", ["May 1990"]) and correct("Beatles", ["The Beatles"])
    assert correct("It was Paris, France.", ["Paris"])  # the gold inside a verbose answer still counts


def test_the_review_page_names_the_verdict_file_where_it_is(tmp_path):
    from starlette.testclient import TestClient

    from experiments.review.server import ReviewSession, create_app
    from tests.test_review_page import RUN, write_run

    write_run(tmp_path / "runs", RUN)
    session = ReviewSession.open(RUN, "alice", runs_root=tmp_path / "runs")
    page = TestClient(create_app(session, allowed_hosts=["testserver"])).get("/case/0").text
    assert str((tmp_path / "runs" / RUN / "review" / "alice.jsonl").resolve()) in page


def test_a_budget_stop_message_lists_kinds_in_order():
    records = [{"status": s} for s in ["error:timeout", "error:server", "error:server", "accepted"]]
    with pytest.raises(ErrorBudgetExceeded) as stop:
        check_budget(records, budget=0.5, min_cases=1)
    assert "error:server 2, error:timeout 1" in str(stop.value)
    assert json.dumps(stop.value.kinds) == '{"error:server": 2, "error:timeout": 1}'
