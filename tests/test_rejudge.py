"""Judging a finished run again: new verdicts appended as the next attempt, the first kept, resumable."""

import json

import dspy
import pytest

from experiments import runner
from experiments.config import LMConfig
from experiments.judging.rejudge import RejudgeError, params_digest, rejudge
from experiments.lm.registry import ResolvedLM
from experiments.run_store import RunStore
from experiments.tracking import find_runs
from tests.test_tasks_end_to_end import config_for, scripted  # noqa: F401 - fixture


def _extract_lm(monkeypatch):
    lm = dspy.utils.DummyLM({"`answers`": {"answers": []}}, adapter=dspy.JSONAdapter())
    monkeypatch.setattr(
        "experiments.lm.registry.build_lm",
        lambda config, role, n_threads=None: ResolvedLM(role, LMConfig(name="dummy/judge"), lm, None),
    )


def test_rejudge_replaces_verdicts_keeps_the_first_and_resumes(isolated, scripted, monkeypatch):  # noqa: F811
    result = runner.run_experiment(config_for(isolated, "unanswerable", judge=True), progress=False)
    first = {r["id"]: r for r in RunStore(result.run_id).records() if r.get("judge")}
    assert first and all(r["status"] == "accepted" for r in first.values())
    review = isolated / "runs" / result.run_id / "review"
    review.mkdir(parents=True)
    (review / "sample.json").write_text('{"cases": [], "strata": {}}')
    params = isolated / "strict.json"
    # nothing can pass: every case judged again must change status
    params.write_text(json.dumps({"params": {"method": "extract", "thresholds": {"answer": 2, "unanswerable": 2}}}))
    _extract_lm(monkeypatch)

    out = rejudge(result.run_id, str(params), progress=False)
    assert out.judged == len(first) and out.before == {"accepted": len(first)}
    assert "accepted" not in out.after and sum(out.after.values()) == len(first)
    now = {r["id"]: r for r in RunStore(result.run_id).records() if r.get("judge")}
    for case_id, record in now.items():
        assert record["judge"]["method"] == "extract" and record["status"].startswith("rejected:judge")
        assert record["judge_before"]["status"] == "accepted" and record["judge_before"]["method"] == "reasoned"
        assert record["context"] == first[case_id]["context"]  # nothing generated again
    assert json.loads((review / "sample.json").read_text())["strata_from"] == "judge_before"
    assert any(r.info.run_name.endswith("/rejudge") for r in find_runs(result.run_id))

    # validity weighs by the stratum a case was sampled from, and scores today's verdict
    from experiments.validity.inputs import judged_population

    design, _ = judged_population(list(now.values()), "judge_before")
    assert all(c.stratum.endswith("judge_accepted") and not c.accepted for c in design)

    again = rejudge(result.run_id, str(params), progress=False)  # same parameters: nothing left to do
    assert again.judged == 0 and again.skipped_seeds == len({r["seed_id"] for r in now.values()})
    assert all(r["judge"]["params_digest"] == params_digest(out.params) for r in now.values())


def test_rejudge_refuses_runs_it_cannot_judge(isolated, scripted):  # noqa: F811
    result = runner.run_experiment(config_for(isolated, "unanswerable", judge=False), progress=False)
    with pytest.raises(RejudgeError, match="no models.judge"):
        rejudge(result.run_id, "auto", progress=False)
