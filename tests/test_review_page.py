"""The review page without a browser: verdict rules, the sample, the diff view, the verdict log,
the HTTP endpoints (Starlette's TestClient), Label Studio round trip and the CLI."""

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from experiments.cli import app as cli_app
from experiments.review import ReviewFormatError, Verdict, VoteResult, agreement, load_verdicts, majority_vote
from experiments.review import verdict_log as verdict_log_module
from experiments.review.label_studio import (
    config_path_for,
    export_label_studio,
    from_label_studio,
    import_label_studio,
)
from experiments.review.sample import SampleError, allocate, draw_sample, open_sample, stratum_of
from experiments.review.server import CSP, ReviewSession, RunNotFound, create_app
from experiments.review.verdict_log import VerdictLog, check_annotator
from experiments.review.view import case_view, split_documents, word_diff
from experiments.run_store import RunStore
from tests.review_cases import IMG, JS_URL, POPULATION_IDS, SCRIPT, SVG, review_records, write_run

FIXTURES = Path(__file__).parent / "fixtures"
RUN = "review-fixture"


def _lines(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


# --------------------------------------------------------------------------------------------
# Verdict rules: unsure, later line wins


def test_unsure_is_read_but_is_not_a_vote(tmp_path):
    path = tmp_path / "alice.jsonl"
    rows = [{"id": "c1", "verdict": "unsure", "note": "can't tell"}, {"id": "c2", "verdict": "valid"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    verdicts = load_verdicts(path)
    assert [(v.id, v.verdict, v.note) for v in verdicts] == [("c1", "unsure", "can't tell"), ("c2", "valid", "")]

    bob = [Verdict("c1", "bob", "invalid"), Verdict("c2", "bob", "unsure")]
    votes = majority_vote(verdicts + bob)
    assert votes["c1"] == VoteResult("invalid", 0, 1, ("bob",))
    assert votes["c2"] == VoteResult("valid", 1, 0, ("alice",))
    only_unsure = majority_vote([Verdict("c3", "alice", "unsure")])
    assert only_unsure["c3"] == VoteResult("insufficient", 0, 0, ())
    assert agreement(verdicts + bob)["n_shared"] == {("alice", "bob"): 0}


def test_later_line_in_the_same_file_replaces_the_earlier(tmp_path):
    path = tmp_path / "alice.jsonl"
    rows = [
        {"id": "c1", "annotator": "alice", "verdict": "valid", "at": "2026-01-01T10:00:00Z"},
        {"id": "c2", "annotator": "alice", "verdict": "invalid"},
        {"id": "c1", "annotator": "alice", "verdict": "unsure", "note": "second look", "at": "2026-01-01T10:05:00Z"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    verdicts = load_verdicts(path)
    assert [(v.id, v.verdict) for v in verdicts] == [("c1", "unsure"), ("c2", "invalid")]
    assert verdicts[0].note == "second look" and verdicts[0].at == "2026-01-01T10:05:00Z"
    assert verdicts[0].source == f"{path}:3"
    assert majority_vote(verdicts)["c1"].decision == "insufficient"


def test_same_case_and_annotator_in_two_files_is_still_an_error(tmp_path):
    line = json.dumps({"id": "c1", "annotator": "alice", "verdict": "valid"}) + "\n"
    (tmp_path / "a.jsonl").write_text(line)
    (tmp_path / "b.jsonl").write_text(line)
    with pytest.raises(ReviewFormatError, match=r"b\.jsonl:1: .*'c1'.*first at .*a\.jsonl:1"):
        load_verdicts([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])


# --------------------------------------------------------------------------------------------
# The sample


def test_strata_are_the_cases_the_judge_decided_per_task():
    judged = {r["id"]: stratum_of(r, judged=True) for r in review_records()}
    assert judged == {
        "-1012780730954675617:swap": "answer_swap/judge_accepted",
        "-1004168810822878148:swap": "answer_swap/judge_accepted",
        "xss-1:swap": "answer_swap/judge_rejected",
        "Mercury_7175875:counterfactual": "counterfactual/judge_accepted",
        "Mercury_7175875:closed-book": None,  # the closed-book baseline: nothing generated
        "-77:inconsistent": "inconsistent/judge_rejected",
        "-88:unanswerable": "unanswerable/judge_accepted",
        "-99:swap": None,  # rejected by a string check
        "-98:swap": None,  # the judge could not be parsed
    }
    unjudged = [{**r, "judge": None} for r in review_records()]
    sample = draw_sample(unjudged, "r", size=40)
    assert set(sample["strata"]) == {"answer_swap/accepted", "counterfactual/accepted", "unanswerable/accepted"}


def test_allocation_is_proportional_with_a_minimum_per_stratum():
    assert allocate({"a": 1000, "b": 30}, 40) == {"a": 30, "b": 10}
    assert allocate({"a": 100, "b": 3}, 40) == {"a": 37, "b": 3}
    assert allocate({"a": 300, "b": 100, "c": 0}, 100) == {"a": 75, "b": 25}
    assert allocate({"a": 300, "b": 20}, 40) == {"a": 30, "b": 10}  # b: 2.5 by share, 10 by the minimum
    assert allocate({"a": 5, "b": 2}, 40) == {"a": 5, "b": 2}
    assert allocate({"a": 50, "b": 50, "c": 50, "d": 50}, 6) == {"a": 2, "b": 2, "c": 1, "d": 1}
    big = allocate({"x/judge_accepted": 20, "x/judge_rejected": 180}, 40)
    assert big == {"x/judge_accepted": 10, "x/judge_rejected": 30} and sum(big.values()) == 40
    with pytest.raises(SampleError, match="cannot cover the run's 3 strata"):
        allocate({"a": 5, "b": 5, "c": 5}, 2)


def test_draw_is_seeded_stratified_and_shuffled():
    records = [
        {"id": f"a{i}", "task": "t", "status": "accepted", "context": f"a{i}", "judge": {"if": True}} for i in range(60)
    ]
    records += [
        {"id": f"r{i}", "task": "t", "status": "rejected:judge_if", "context": f"r{i}", "judge": {"if": False}}
        for i in range(140)
    ]
    first, again, other = (draw_sample(records, "run", 40, seed) for seed in (3, 3, 4))
    assert first == again and first["cases"] != other["cases"]
    assert first["strata"] == {
        "t/judge_accepted": {"population": 60, "sampled": 12},
        "t/judge_rejected": {"population": 140, "sampled": 28},
    }
    strata = [c["stratum"] for c in first["cases"]]
    assert strata.count("t/judge_accepted") == 12 and len({c["id"] for c in first["cases"]}) == 40
    assert strata != sorted(strata)  # the order does not give the judge's verdict away
    assert {k: first[k] for k in ("run_id", "seed", "size")} == {"run_id": "run", "seed": 3, "size": 40}


def test_cases_that_read_the_same_are_drawn_as_one():
    # Two variants of a compiled-program comparison wrote the same case for seeds 0-4, different ones for 5-9.
    records = [
        {"id": f"{seed}:{variant}", "task": "t", "status": "accepted", "judge": {"if": True},
         "question": f"q{seed}", "context": f"c{seed}" + (f" by {variant}" if seed >= 5 else "")}
        for seed in range(10)
        for variant in ("uncompiled", "compiled")
    ]  # fmt: skip
    sample = draw_sample(records, "run", 40, 0)
    assert sample["strata"] == {"t/judge_accepted": {"population": 20, "sampled": 15, "distinct": 15}}
    grouped = {c["id"]: c.get("same") for c in sample["cases"]}
    assert {i for i, same in grouped.items() if same} == {f"{seed}:uncompiled" for seed in range(5)}
    assert all(grouped[f"{seed}:uncompiled"] == [f"{seed}:compiled"] for seed in range(5))
    assert len(grouped) == 15  # every distinct reading once


def test_sample_is_written_once_and_reused_never_redrawn(tmp_path):
    review = tmp_path / "review"
    sample, created = open_sample(review, review_records(), RUN, size=5, seed=1)
    assert created and json.loads((review / "sample.json").read_text()) == sample
    assert {c["id"] for c in sample["cases"]} <= POPULATION_IDS and len(sample["cases"]) == 5  # one per stratum
    again, created = open_sample(review, review_records()[:2], RUN)  # another population: still the file
    assert not created and again == sample
    assert open_sample(review, review_records(), RUN, size=5, seed=1)[0] == sample
    with pytest.raises(SampleError, match="already holds the review sample drawn with size 5"):
        open_sample(review, review_records(), RUN, size=10)
    with pytest.raises(SampleError, match="drawn with seed 1"):
        open_sample(review, review_records(), RUN, seed=2)


def test_a_run_without_reviewable_cases_says_so(tmp_path):
    with pytest.raises(SampleError, match="no cases the judge accepted or rejected"):
        open_sample(tmp_path, [review_records()[-1]], RUN)


# --------------------------------------------------------------------------------------------
# What the page shows


def test_word_diff_marks_the_swapped_words_and_keeps_the_rest():
    segments = word_diff("In July 2005 , Google acquired Android .", "In January 2005 , Google acquired Android .")
    assert [(s.kind, s.text) for s in segments] == [
        ("same", "In"),
        ("del", "July"),
        ("ins", "January"),
        ("same", "2005 , Google acquired Android ."),
    ]
    assert (
        "".join(s.text + s.trailing for s in segments if s.kind != "del").strip()
        == "In January 2005 , Google acquired Android ."
    )
    removed = word_diff("painted by Leonardo da Vinci. It hangs", "painted. It hangs")
    assert [(s.kind, s.text) for s in removed] == [
        ("same", "painted"),
        ("del", "by Leonardo da Vinci"),
        ("same", ". It hangs"),
    ]
    assert word_diff(None, "no original") == [word_diff(None, "no original")[0]]
    assert word_diff(None, "no original")[0].kind == "same"


def test_context_is_reproduced_exactly_paragraphs_included():
    text = "First paragraph, with   spacing.\n\nSecond one — ends here."
    segments = word_diff("First paragraph.", text)
    assert "".join(s.text + s.trailing for s in segments if s.kind != "del") == text


def test_inconsistent_context_splits_into_documents_diffed_against_the_original():
    [record] = [r for r in review_records() if r["task"] == "inconsistent"]
    assert split_documents(record["context"]) == [
        ("Document 1", "The Eiffel Tower opened in 1889 for the World's Fair."),
        ("Document 2", "The Eiffel Tower opened in 1925 for the World's Fair."),
    ]
    view = case_view(record)
    assert [(d.title, d.changed) for d in view.documents] == [("Document 1", False), ("Document 2", True)]
    assert ("ins", "1925") in [(s.kind, s.text) for s in view.documents[1].segments]
    assert split_documents("Plain text mentioning Document 1: in passing.") == [
        ("", "Plain text mentioning Document 1: in passing.")
    ]


def test_counterfactual_options_mark_the_expected_one():
    [record] = [r for r in review_records() if r["id"].endswith(":counterfactual")]
    view = case_view(record)
    assert [(o.label, o.expected) for o in view.options] == [("A", False), ("B", True), ("C", False), ("D", False)]
    assert view.original_context is None and view.documents[0].segments[0].kind == "same"
    assert view.question == "Which property of a mineral can be determined just by looking at it?"


# --------------------------------------------------------------------------------------------
# The verdict log


@pytest.mark.parametrize("name", ["../evil", "a/b", "a\\b", ".hidden", "..", "", "x" * 65, "two words", "é"])
def test_annotator_names_that_could_leave_the_review_folder_are_refused(name):
    with pytest.raises(ValueError, match="not allowed"):
        check_annotator(name)


def test_every_append_is_fsynced_and_a_torn_line_is_dropped(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(verdict_log_module.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    log = VerdictLog(tmp_path / "review", "alice.b-1")
    log.append("c1", "valid", "  fine  ")
    log.append("c1", "invalid")
    assert len(synced) == 3  # two lines, plus the folder once when the file was created
    lines = _lines(log.path)
    assert [(x["id"], x["annotator"], x["verdict"], x["note"]) for x in lines] == [
        ("c1", "alice.b-1", "valid", "fine"),
        ("c1", "alice.b-1", "invalid", ""),
    ]
    assert lines[0]["at"].endswith("Z")
    with open(log.path, "a") as f:
        f.write('{"id": "c2", "annot')  # killed mid-write
    assert {k: v.verdict for k, v in log.read().items()} == {"c1": "invalid"}
    assert log.path.read_text().endswith("\n")
    with pytest.raises(ValueError, match="verdict must be one of"):
        log.append("c1", "maybe")


# --------------------------------------------------------------------------------------------
# HTTP endpoints


@pytest.fixture
def run_root(tmp_path):
    write_run(tmp_path / "runs", RUN)
    return tmp_path / "runs"


def _client(run_root, annotator="alice"):
    session = ReviewSession.open(RUN, annotator, runs_root=run_root)
    return session, TestClient(create_app(session, allowed_hosts=["testserver"]), follow_redirects=False)


def _post(client, case_id, verdict, note="", **headers):
    return client.post("/api/verdict", json={"id": case_id, "verdict": verdict, "note": note}, headers=headers)


def test_answering_appends_and_reopening_resumes_at_the_first_unanswered(run_root):
    session, client = _client(run_root)
    ids = [str(c["id"]) for c in session.cases]
    assert set(ids) == POPULATION_IDS
    assert client.get("/").headers["location"] == "/case/0"
    response = _post(client, ids[0], "valid", "reads fine")
    assert response.status_code == 200
    assert response.json() == {
        **response.json(),
        "saved": "valid",
        "answered": 1,
        "total": 6,
        "next_unanswered": "/case/1",
    }
    assert _post(client, ids[1], "unsure").status_code == 200
    assert _post(client, ids[0], "invalid", "second look").status_code == 200  # changed: appended

    verdict_file = run_root / RUN / "review" / "alice.jsonl"
    assert [(x["id"], x["verdict"], x["note"]) for x in _lines(verdict_file)] == [
        (ids[0], "valid", "reads fine"),
        (ids[1], "unsure", ""),
        (ids[0], "invalid", "second look"),
    ]
    assert {v.id: v.verdict for v in load_verdicts(verdict_file)} == {ids[0]: "invalid", ids[1]: "unsure"}

    # A restarted server (new session, same files) resumes past every answered case, unsure included.
    _, reopened = _client(run_root)
    assert reopened.get("/").headers["location"] == "/case/2"
    # Another annotator's file is theirs alone.
    _, bob = _client(run_root, "bob")
    assert bob.get("/").headers["location"] == "/case/0"
    assert _post(bob, ids[2], "valid").status_code == 200
    assert len(_lines(verdict_file)) == 3 and len(_lines(run_root / RUN / "review" / "bob.jsonl")) == 1


def test_judge_and_status_are_hidden_until_the_case_is_answered(run_root):
    session, client = _client(run_root)
    index = next(i for i, c in enumerate(session.cases) if c["id"] == "xss-1:swap")
    before = client.get(f"/case/{index}").text
    assert 'id="judge-hidden"' in before
    for secret in ("JUDGE-SECRET-REASON", "rejected:judge_only_if", "judge_only_if", 'id="judge"', "rest_unchanged"):
        assert secret not in before
    assert _post(client, "xss-1:swap", "invalid").status_code == 200
    after = client.get(f"/case/{index}").text
    assert "JUDGE-SECRET-REASON" in after and "rejected:judge_only_if" in after and 'id="judge-hidden"' not in after


def test_every_page_escapes_generated_text_and_sends_a_strict_csp(run_root):
    session, client = _client(run_root)
    for i, case in enumerate(session.cases):
        _post(client, str(case["id"]), "invalid", '</textarea><img src=x onerror="window.__xss_note=1">')
        response = client.get(f"/case/{i}")
        html = response.text
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "<script" not in html.replace('<script src="/static/review.js"></script>', "")
        for raw in (SCRIPT, IMG, SVG, "</textarea><img", 'onerror="', 'href="javascript:'):
            assert raw not in html
    html = client.get(f"/case/{[c['id'] for c in session.cases].index('xss-1:swap')}").text
    assert "&lt;script&gt;window.__xss_script=1;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;window.__xss_img=1;alert(2)&#34;&gt;" in html
    assert JS_URL in html  # shown as text, never as a link
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP and "default-src 'none'" in CSP
    static = client.get("/static/review.js")
    assert static.status_code == 200 and static.headers["content-security-policy"] == CSP
    assert "innerHTML" not in static.text.replace("(no innerHTML)", "")


def test_bad_requests_are_refused_and_write_nothing(run_root):
    session, client = _client(run_root)
    case_id = str(session.cases[0]["id"])
    assert _post(client, "not-in-sample", "valid").status_code == 400
    assert _post(client, case_id, "maybe").status_code == 400
    assert client.post("/api/verdict", json={"id": case_id, "verdict": "valid", "note": 3}).status_code == 400
    assert (
        client.post(
            "/api/verdict",
            content=json.dumps({"id": case_id, "verdict": "valid"}),
            headers={"content-type": "text/plain"},
        ).status_code
        == 415
    )
    assert client.post("/api/verdict", content="{", headers={"content-type": "application/json"}).status_code == 400
    assert _post(client, case_id, "valid", origin="http://evil.example").status_code == 403
    assert _post(client, case_id, "valid", **{"sec-fetch-site": "cross-site"}).status_code == 403
    assert _post(client, case_id, "valid", host="evil.example").status_code == 400  # DNS rebinding
    assert client.get("/case/99").status_code == 404
    assert client.get("/case/-1").status_code == 404
    assert client.get("/static/../server.py").status_code == 404
    assert client.get("/static/%2e%2e/server.py").status_code == 404
    assert not (run_root / RUN / "review" / "alice.jsonl").exists()
    assert _post(client, case_id, "valid", origin="http://testserver").status_code == 200


def test_bad_annotator_name_and_unknown_run_are_refused_before_anything_is_written(run_root):
    with pytest.raises(ValueError, match="not allowed"):
        ReviewSession.open(RUN, "../../etc/passwd", runs_root=run_root)
    assert not (run_root / RUN / "review").exists()
    with pytest.raises(RunNotFound, match="no run 'nope'"):
        ReviewSession.open("nope", "alice", runs_root=run_root)


# --------------------------------------------------------------------------------------------
# Label Studio


def test_label_studio_export_has_tasks_and_a_config_but_no_judge(tmp_path):
    records = [r for r in review_records() if r["id"] in POPULATION_IDS]
    tasks_path, config_path = export_label_studio(records, tmp_path / "ls" / "tasks.json")
    assert config_path == config_path_for(tasks_path) == tmp_path / "ls" / "tasks.labeling_config.xml"
    tasks = json.loads(tasks_path.read_text())
    assert [t["data"]["case_id"] for t in tasks] == [r["id"] for r in records]
    text = tasks_path.read_text()
    for secret in ("JUDGE-SECRET-REASON", "judge_only_if", "rest_unchanged", "p_valid"):
        assert secret not in text
    counterfactual = next(t["data"] for t in tasks if t["data"]["task"] == "counterfactual")
    assert "B. mass   <- expected" in counterfactual["options"]
    config = ET.parse(config_path).getroot()
    names = {el.get("name") for el in config.iter("Text")}
    assert all(name in tasks[0]["data"] for name in names)  # every $variable exists in every task
    choices = config.find("Choices")
    assert choices.get("name") == "verdict" and choices.get("toName") == "context"
    assert [c.get("value") for c in choices] == ["valid", "invalid", "unsure"]
    assert config.find("TextArea").get("name") == "note"
    assert not list(config.iter("HyperText"))  # generated text is never rendered as markup


def test_from_label_studio_reads_the_json_export(tmp_path):
    verdicts = from_label_studio(FIXTURES / "label_studio_export.json", "team")
    got = sorted((v.id, v.annotator, v.verdict, v.note, v.at) for v in verdicts)
    assert got == [
        ("-1004168810822878148:swap", "team-user1", "valid", "on second reading, fine", "2026-01-05T09:31:00Z"),
        ("-1012780730954675617:swap", "team-user1", "valid", "swap reads fine", "2026-01-05T09:10:00Z"),
        (
            "-1012780730954675617:swap",
            "team-user2",
            "invalid",
            "the symbol line still implies sixth",
            "2026-01-05T09:20:00Z",
        ),
        ("Mercury_7175875:counterfactual", "team-user2", "unsure", "", "2026-01-05T09:22:00Z"),
    ]
    single = from_label_studio(FIXTURES / "label_studio_export_min.json", "carol")
    assert sorted((v.id, v.annotator, v.verdict, v.note) for v in single) == [
        ("-1012780730954675617:swap", "carol", "valid", "fine"),
        ("Mercury_7175875:counterfactual", "carol", "invalid", ""),
    ]


def test_from_label_studio_refuses_foreign_tasks_and_unknown_choices(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": 7, "data": {"text": "x"}, "annotations": []}]))
    with pytest.raises(ReviewFormatError, match=r"task 1 \(Label Studio id 7\): field 'data.case_id'"):
        from_label_studio(bad, "team")
    odd = json.loads((FIXTURES / "label_studio_export.json").read_text())
    odd[0]["annotations"][0]["result"][0]["value"]["choices"] = ["Positive"]
    bad.write_text(json.dumps(odd))
    with pytest.raises(ReviewFormatError, match="'Positive' is not one of valid, invalid, unsure"):
        from_label_studio(bad, "team")


def test_import_writes_the_agreed_verdict_files(tmp_path):
    counts = import_label_studio(FIXTURES / "label_studio_export.json", tmp_path, "team")
    assert counts == {"team-user1": 2, "team-user2": 2}
    verdicts = load_verdicts(sorted(tmp_path.glob("*.jsonl")))
    assert majority_vote(verdicts)["-1012780730954675617:swap"].decision == "tie"
    assert set(_lines(tmp_path / "team-user1.jsonl")[0]) == {"id", "annotator", "verdict", "note", "at"}
    import_label_studio(FIXTURES / "label_studio_export.json", tmp_path, "team")  # again: same verdicts
    assert len(load_verdicts(sorted(tmp_path.glob("*.jsonl")))) == 4


# --------------------------------------------------------------------------------------------
# CLI


@pytest.fixture
def cli_run(isolated):
    write_run(isolated / "runs", RUN)
    return isolated / "runs" / RUN


def _invoke(*args):
    return CliRunner().invoke(cli_app, ["review", *args])


def test_cli_unknown_run_and_bad_input_exit_2_with_one_line(cli_run):
    result = _invoke("no-such-run", "--annotator", "alice")
    assert result.exit_code == 2 and "no run 'no-such-run'" in result.output
    assert len(result.output.strip().splitlines()) == 1
    result = _invoke(RUN, "--annotator", "../x")
    assert result.exit_code == 2 and "not allowed" in result.output
    result = _invoke(RUN)
    assert result.exit_code == 2 and "--annotator NAME is required" in result.output


def test_cli_serves_the_sample_and_refuses_another_size(cli_run, monkeypatch):
    served = {}
    monkeypatch.setattr(
        "experiments.review.server.serve",
        lambda session, host, port: served.update(session=session, host=host, port=port),
    )
    result = _invoke(RUN, "--annotator", "alice", "--sample", "5", "--port", "8999")
    assert result.exit_code == 0, result.output
    assert served["host"] == "127.0.0.1" and served["port"] == 8999 and served["session"].total == 5
    assert json.loads((cli_run / "review" / "sample.json").read_text())["size"] == 5
    result = _invoke(RUN, "--annotator", "alice", "--sample", "6")
    assert result.exit_code == 2 and "already holds the review sample drawn with size 5" in result.output
    assert _invoke(RUN, "--annotator", "bob").exit_code == 0 and served["session"].total == 5


def test_cli_label_studio_export_and_import(cli_run, tmp_path):
    out = tmp_path / "ls" / "tasks.json"
    result = _invoke(RUN, "--export-label-studio", str(out))
    assert result.exit_code == 0, result.output
    assert {t["data"]["case_id"] for t in json.loads(out.read_text())} == POPULATION_IDS
    assert config_path_for(out).exists()
    result = _invoke(
        RUN, "--import-label-studio", str(FIXTURES / "label_studio_export_min.json"), "--annotator", "carol"
    )
    assert result.exit_code == 0, result.output
    verdicts = load_verdicts(cli_run / "review" / "carol.jsonl")
    assert {v.id: v.verdict for v in verdicts} == {
        "-1012780730954675617:swap": "valid",
        "Mercury_7175875:counterfactual": "invalid",
    }
    assert RunStore(RUN).cases_path.exists()
