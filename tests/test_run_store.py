from experiments.errors import ErrorBudgetExceeded, check_budget, error_kind, error_record
from experiments.run_store import RunStore


def test_append_and_resume_ids(tmp_path):
    store = RunStore("r1", root=tmp_path)
    store.append({"id": "a", "status": "accepted"})
    store.append({"id": "b", "status": "error:parse"})
    store.close()
    reopened = RunStore("r1", root=tmp_path)
    assert reopened.finished_ids() == {"a", "b"}
    assert reopened.finished_ids(retry_errors=True) == {"a"}


def test_torn_last_line_is_dropped_and_appends_stay_valid(tmp_path):
    store = RunStore("r2", root=tmp_path)
    store.append({"id": "a", "status": "accepted"})
    store.close()
    with open(store.cases_path, "a") as handle:
        handle.write('{"id": "b", "sta')  # killed mid-write
    reopened = RunStore("r2", root=tmp_path)
    assert [r["id"] for r in reopened.records()] == ["a"]
    reopened.append({"id": "b", "status": "accepted"})
    reopened.close()
    assert [r["id"] for r in RunStore("r2", root=tmp_path).records()] == ["a", "b"]


def test_retried_case_replaces_its_error(tmp_path):
    store = RunStore("r3", root=tmp_path)
    store.append({"id": "a", "status": "error:parse"})
    store.append({"id": "a", "status": "accepted"})
    assert [(r["id"], r["status"], r["attempt"]) for r in store.records()] == [("a", "accepted", 2)]


def test_seed_with_several_cases_is_done_only_when_all_lines_landed(tmp_path):
    store = RunStore("r4", root=tmp_path)
    store.append(
        [{"id": "s1:q", "seed_id": "s1", "status": "accepted"}, {"id": "s1:e", "seed_id": "s1", "status": "rejected:x"}]
    )
    store.close()
    lines = store.cases_path.read_text().splitlines(keepends=True)
    store.cases_path.write_text(lines[0])  # killed after the first of two lines
    reopened = RunStore("r4", root=tmp_path)
    assert reopened.finished_ids() == set() and reopened.records() == []
    reopened.append(
        [{"id": "s1:q", "seed_id": "s1", "status": "accepted"}, {"id": "s1:e", "seed_id": "s1", "status": "accepted"}]
    )
    assert {r["id"] for r in reopened.records()} == {"s1:q", "s1:e"}
    assert reopened.finished_ids() == {"s1"}


def test_error_kinds():
    class AdapterParseError(Exception):
        pass

    assert error_kind(AdapterParseError("x")) == "parse"
    assert error_kind(ValueError("Requested tokens (5000) exceed context window of 4096")) == "context_overflow"
    assert error_record("c", RuntimeError("boom"))["status"] == "error:exception"


def test_provider_error_kinds_come_from_dspy_error_codes():
    from dspy.utils import exceptions as lm

    assert error_kind(lm.LMRateLimitError("slow down", status=429)) == "rate_limit"
    assert error_kind(lm.LMServerError("upstream failed", status=503)) == "server"
    assert error_kind(lm.LMTimeoutError("gateway timeout", status=504)) == "timeout"
    assert error_kind(lm.LMTransportError("read timed out waiting for headers")) == "timeout"
    assert error_kind(lm.LMTransportError("connection refused")) == "connection"
    assert error_kind(lm.LMProviderError("the reply (HTTP 200) is not JSON", status=200)) == "bad_response"
    assert error_kind(lm.LMInvalidRequestError("bad field", status=400)) == "bad_request"
    assert error_kind(lm.LMProviderError("no such path", status=404)) == "bad_request"
    assert error_kind(lm.LMUnsupportedFeatureError("no logprobs here")) == "unsupported"
    assert error_kind(lm.LMUnexpectedError("the client broke")) == "lm"
    assert error_kind(lm.LMNotConfiguredError("no API key found")) == "auth"
    assert error_kind(lm.ContextWindowExceededError(model="m")) == "context_overflow"


def test_error_text_and_the_store_keep_no_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a-secret-of-some-length")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to be told apart from ordinary words: kept
    record = error_record("c", RuntimeError('401: key "sk-a-secret-of-some-length" rejected; abc'))
    assert record["error"] == 'RuntimeError: 401: key "[redacted]" rejected; abc'
    store = RunStore("r", root=tmp_path)
    store.append({"id": "c", "status": "error:auth", "note": 'said "sk-a-secret-of-some-length"\n'})
    store.close()
    assert "sk-a-secret" not in store.cases_path.read_text() and store.records()[0]["note"] == 'said "[redacted]"\n'


def test_error_budget():
    records = [{"status": "accepted"}] * 7 + [{"status": "error:parse"}] * 3
    check_budget(records, budget=0.3, min_cases=10)
    try:
        check_budget(records, budget=0.2, min_cases=10)
    except ErrorBudgetExceeded as exc:
        assert "3 of 10" in str(exc)
    else:
        raise AssertionError("budget should have been exceeded")
    check_budget(records[:5] + records[-3:], budget=0.2, min_cases=10)  # too few cases to judge
