"""experiments.validity on a run store in a tmp dir: review sample + verdict files + judge verdicts +
an evaluate run of the cases; `reeval validity` logs to MLflow, `reeval show` and the report show it."""

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from experiments.cli import app
from experiments.report import write_report
from experiments.run_store import RunStore
from experiments.validity import report_section, run_validity, statement, validity_rows

RUN = "answer_swap-test"
EVAL = "evaluate-test"
SCRIPT = "<script>alert('x')</script>"

# 30 judge-accepted cases (a0..a29; every 5th invalid), 20 judge-rejected (r0..r19; every 2nd
# valid), 5 rejected by the string checks, 2 errors. Reviewed: 12 accepted, 10 rejected.
ACCEPTED, REJECTED = 30, 20
REVIEWED_ACC, REVIEWED_REJ = 12, 10


def _truly_valid(case_id: str) -> bool:
    i = int(case_id[1:])
    return i % 5 != 0 if case_id[0] == "a" else i % 2 == 0


def _case(case_id, status, judge=True, p_valid=None):
    record = {
        "id": case_id,
        "seed_id": case_id,
        "task": "answer_swap",
        "status": status,
        "question": f"who wrote play {case_id}",
        "context": "Hamlet is a tragedy by Christopher Marlowe.",
        "answers": ["Christopher Marlowe"],
        "original_answers": ["William Shakespeare"],
    }
    if judge:
        record["judge"] = {
            "if": True,
            "if_reason": "",
            "only_if": status == "accepted",
            "only_if_reason": "",
            "judge": "qwen2.5-1.5b",
            **({"p_valid": p_valid} if p_valid is not None else {}),
        }
    return record


def _write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def make_generation_run(root, *, reviews=True, p_valid=True, judged=True, run=RUN):
    store = RunStore(run, root=root)
    store.write_config({"name": "answer_swap", "task": "answer_swap", "data": {"source": "nq"}})
    for i in range(ACCEPTED):
        p = (0.9 if _truly_valid(f"a{i}") else 0.4) if p_valid else None
        store.append(_case(f"a{i}", "accepted", judge=judged, p_valid=p))
    if judged:
        for i in range(REJECTED):
            p = (0.45 if _truly_valid(f"r{i}") else 0.1) if p_valid else None
            store.append(_case(f"r{i}", "rejected:judge_only_if", p_valid=p))
    for i in range(5):
        store.append(_case(f"c{i}", "rejected:old_answer_kept", judge=False))
    for i in range(2):
        store.append(_case(f"e{i}", "error:timeout", judge=False))
    store.close()
    if not reviews:
        return store
    acc_ids = [f"a{i}" for i in range(REVIEWED_ACC)]
    rej_ids = [f"r{i}" for i in range(REVIEWED_REJ)]
    strata_acc = "answer_swap/judge_accepted" if judged else "answer_swap/accepted"
    strata = {strata_acc: {"population": ACCEPTED, "sampled": REVIEWED_ACC}}
    cases = [{"id": i, "stratum": strata_acc} for i in acc_ids]
    if judged:
        strata["answer_swap/judge_rejected"] = {"population": REJECTED, "sampled": REVIEWED_REJ}
        cases += [{"id": i, "stratum": "answer_swap/judge_rejected"} for i in rej_ids]
    (store.dir / "review").mkdir(parents=True, exist_ok=True)
    (store.dir / "review" / "sample.json").write_text(
        json.dumps({"run_id": run, "seed": 0, "size": len(cases), "strata": strata, "cases": cases})
    )
    reviewed = acc_ids + (rej_ids if judged else [])
    for annotator in ("alice", "bob", "carol"):
        rows = []
        for case_id in reviewed:
            label = _truly_valid(case_id)
            if annotator == "carol" and case_id == "a1":
                label = not label  # outvoted
            rows.append(
                {
                    "id": case_id,
                    "annotator": annotator,
                    "verdict": "valid" if label else "invalid",
                    "note": "",
                    "at": "2026-01-01T00:00:00Z",
                }
            )
        _write_jsonl(store.dir / "review" / f"{annotator}.jsonl", rows)
    return store


def make_evaluate_run(root, run=RUN, eval_run=EVAL):
    store = RunStore(eval_run, root=root)
    store.write_config({"name": "evaluate", "task": "evaluate", "data": {"source": f"run:{run}"}})
    for i in range(ACCEPTED):
        case_id = f"a{i}"
        base = {
            "case_id": case_id,
            "seed_id": case_id,
            "target": "qwen2.5-0.5b",
            "setting": "open_book",
            "decoding": "greedy",
            "task": "answer_swap",
            "status": "ok",
        }
        fails = i % 3 == 0 if _truly_valid(case_id) else True
        store.append(
            [
                {**base, "id": f"{case_id}|o", "variant": "original", "task_correct": True},
                {**base, "id": f"{case_id}|p", "variant": "perturbed", "task_correct": not fails},
            ]
        )
    store.close()


@pytest.fixture
def runs(isolated):
    return isolated / "runs"


@pytest.fixture(scope="module")
def shared_mlflow_uri(tmp_path_factory):
    # Creating an MLflow sqlite store takes ~8 s here: the tests that need one share it, each with
    # its own run ids.
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


@pytest.fixture
def mlflow_ids(runs, shared_mlflow_uri, monkeypatch, request):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", shared_mlflow_uri)
    return f"{RUN}-{request.node.name}", f"{EVAL}-{request.node.name}"


def test_figures_from_the_run_store(runs):
    make_generation_run(runs)
    make_evaluate_run(runs)
    rv = run_validity(RUN)
    f = rv.figures
    assert f.judged and not f.judge_alone
    assert (f.judged_n, f.judge_accepted_n) == (ACCEPTED + REJECTED, ACCEPTED)  # checks and errors are outside
    assert f.reviewed_n == REVIEWED_ACC + REVIEWED_REJ and f.undecided_n == 0
    assert rv.inputs.annotators == ["alice", "bob", "carol"]
    # the majority outvotes carol on a1; reviewed accepted: a0, a5, a10 invalid -> 9/12 valid
    assert f.accepted_valid_classical.estimate == pytest.approx(9 / 12)
    assert f.judge_precision.estimate == pytest.approx(9 / 12)
    # recall weights: accepted 30/12 per case, rejected 20/10: TP = 9*2.5, FN = 5*2
    assert f.judge_recall.estimate == pytest.approx(22.5 / 32.5)
    assert rv.inputs.evaluate_runs == [EVAL]
    pair = f.attack_success["qwen2.5-0.5b.open_book.greedy"]
    assert pair["ppi"].n_population == ACCEPTED and pair["classical"].n_labelled == REVIEWED_ACC
    assert pair["ppi"].width <= pair["classical"].width
    assert "prediction-powered" in statement(rv)
    assert any(r["figure"].startswith("attack success") for r in validity_rows(rv))


def test_without_reviews_validity_is_the_judges_alone(runs):
    make_generation_run(runs, reviews=False)
    rv = run_validity(RUN, calibration={"judge_calibration.accuracy": 0.82, "acc.x": 1.0})
    assert rv.judge_alone
    text = statement(rv)
    assert text.startswith("Validity is the judge's alone")
    assert "accepted 30 of 50 judged cases (60%)" in text and "82%" in text
    assert rv.metrics()["validity.judge_calibration_accuracy"] == pytest.approx(0.82)
    assert "validity.ppi.accepted_valid" not in rv.metrics()


def test_an_unjudged_run_says_so(runs):
    make_generation_run(runs, reviews=False, judged=False)
    assert statement(run_validity(RUN)).startswith("Validity rests on the string checks alone")


def test_reviews_of_an_unjudged_run_give_the_classical_share(runs):
    make_generation_run(runs, judged=False)
    f = run_validity(RUN).figures
    assert f.judge_precision is None
    assert f.accepted_valid_ppi.estimate == f.accepted_valid_classical.estimate == pytest.approx(9 / 12)


def test_reviews_outside_the_sample_are_left_out(runs):
    store = make_generation_run(runs)
    _write_jsonl(
        store.dir / "review" / "dave.jsonl",
        [{"id": "a29", "annotator": "dave", "verdict": "invalid", "note": "", "at": "2026-01-01T00:00:00Z"}],
    )
    rv = run_validity(RUN)
    assert rv.figures.reviewed_n == REVIEWED_ACC + REVIEWED_REJ
    assert any("not in review/sample.json" in n for n in rv.notes)


def _mlflow_parent(run_id, metrics):
    from experiments import tracking

    with tracking.parent_run("reeval/test", run_id, {tracking.RUN_ID_TAG: run_id}) as run:
        import mlflow

        mlflow.log_metrics(metrics)
    return run.info.run_id


def test_validity_command_prints_and_logs_to_the_latest_parent_run(runs, mlflow_ids):
    run, eval_run = mlflow_ids
    make_generation_run(runs, run=run)
    make_evaluate_run(runs, run=run, eval_run=eval_run)
    _mlflow_parent(run, {"judge_calibration.accuracy": 0.8})
    latest = _mlflow_parent(run, {"judge_calibration.accuracy": 0.9})
    result = CliRunner().invoke(app, ["validity", run])
    assert result.exit_code == 0, result.output
    assert "validity — " in result.output and "prediction-powered" in result.output
    from mlflow.tracking import MlflowClient

    from experiments.tracking import setup_mlflow

    setup_mlflow()
    metrics = MlflowClient().get_run(latest).data.metrics
    assert metrics["validity.reviewed_n"] == REVIEWED_ACC + REVIEWED_REJ
    for key in (
        "validity.human_valid_rate",
        "validity.judge_precision",
        "validity.judge_recall",
        "validity.judge_kappa",
        "validity.ppi.accepted_valid",
        "validity.ppi.accepted_valid.lo",
        "validity.ppi.accepted_valid.hi",
        "validity.classical.accepted_valid.lo",
        "validity.classical.accepted_valid.hi",
        "validity.ppi.attack_success.qwen2.5-0.5b.open_book.greedy",
        "validity.ppi.attack_success.qwen2.5-0.5b.open_book.greedy.lo",
    ):
        assert key in metrics, key
    assert metrics["validity.ppi.accepted_valid.lo"] <= metrics["validity.ppi.accepted_valid"]
    assert metrics["validity.judge_calibration_accuracy"] == pytest.approx(0.9)
    artifacts = [a.path for a in MlflowClient().list_artifacts(latest, "validity")]
    assert artifacts == ["validity/validity.html", "validity/validity.json", "validity/validity.md"]
    page = Path(MlflowClient().download_artifacts(latest, "validity/validity.md")).read_text()
    assert f"# validity — {run}" in page and "| judge accuracy on calibration controls | 0.900 |" in page


def test_validity_command_without_a_run(runs):
    result = CliRunner().invoke(app, ["validity", "no-such-run"])
    assert result.exit_code == 2  # an unknown run id is a user mistake (experiments/failures.py)
    assert "no run 'no-such-run'" in result.output and "cases.jsonl does not exist" in result.output


def test_show_prints_the_validity_section(runs, mlflow_ids):
    run, _ = mlflow_ids
    make_generation_run(runs, reviews=False, run=run)
    _mlflow_parent(run, {"judge_calibration.accuracy": 0.75})
    result = CliRunner().invoke(app, ["show", run])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "Validity is the judge's alone" in flat and "75%" in flat


def test_show_of_an_evaluate_run_shows_its_cases_validity(runs, mlflow_ids):
    run, eval_run = mlflow_ids
    make_generation_run(runs, run=run)
    make_evaluate_run(runs, run=run, eval_run=eval_run)
    _mlflow_parent(eval_run, {"evaluations": 60})
    result = CliRunner().invoke(app, ["show", eval_run])
    assert result.exit_code == 0, result.output
    assert f"evaluates the cases of run {run!r}" in " ".join(result.output.split())
    assert "attack success" in result.output


def test_report_shows_the_validity_section_escaped(runs, tmp_path):
    make_generation_run(runs)
    make_evaluate_run(runs)
    section = report_section(run_validity(RUN))
    section["notes"].append(f"annotator note {SCRIPT}")
    section["rows"][0]["figure"] = f"figure {SCRIPT}"
    records = [r for r in RunStore(EVAL).records()]
    for r in records:
        r.update(question="q", context="c", answers=["x"], prediction="x", generator="g", source="nq")
    page = write_report(records, tmp_path / "out", title="t", validity=section).read_text()
    assert "<h2>Validity of the cases" in page
    assert "prediction-powered" in page
    assert SCRIPT not in page and "&lt;script&gt;" in page
    assert not re.search(r"<script", page, re.IGNORECASE)
    # without figures, no section
    assert "Validity of the cases" not in write_report(records, tmp_path / "out2", title="t").read_text()
