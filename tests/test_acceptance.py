"""The acceptance score: plausibility signals from a fake token scorer, the fit, the cut, and the decision
applied in a run and to a finished run."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from experiments.judging import acceptance
from metrics.plausibility import passage_signals, reading_prompt, rest_shift


@dataclass(frozen=True)
class Tok:
    start: int
    end: int
    logprob: float


class FakeScorer:
    """Words are tokens. An answer word is likely (-0.1) when the passage names it and unlikely (-5) otherwise;
    "her" is unlikely (-6) after "Obama" (a pronoun that no longer agrees); every other word costs -1."""

    def __init__(self):
        self.calls = 0

    def __call__(self, text: str) -> list[Tok]:
        self.calls += 1
        passage = text.split("\nQuestion:")[0] if "\nQuestion:" in text else ""
        answer_at = text.rfind("Answer:") + len("Answer:")
        out = []
        for m in list(re.finditer(r"\S+", text))[1:]:
            word = m.group()
            if m.start() >= answer_at:
                lp = -0.1 if word in passage else -5.0
            elif word == "her" and "Obama" in text[: m.start()]:
                lp = -6.0
            else:
                lp = -1.0
            out.append(Tok(m.start(), m.end(), lp))
        return out


def test_reading_prompt_offsets_mark_passage_end_and_answer_start():
    text, end, answer_at = reading_prompt("A passage.", "who", "Paris")
    assert text[:end].endswith("A passage.")
    assert text[answer_at:] == " Paris"


def test_old_answer_left_in_the_passage_pulls():
    clean = passage_signals(FakeScorer(), "who", "Moscow is big .", "Paris is big .", "Moscow", "Paris")
    trace = passage_signals(FakeScorer(), "who", "Moscow is big .", "Paris is big , Moscow too .", "Moscow", "Paris")
    assert clean["old_pmi"] == pytest.approx(0.0)
    assert trace["old_pmi"] == pytest.approx(4.9)
    assert clean["new_support"] == pytest.approx(0.0)  # the new answer is stated as plainly as the old was


def test_a_word_that_only_fits_the_old_answer_spikes_the_rest():
    signals = passage_signals(
        FakeScorer(),
        "who",
        "Michelle was First Lady ; her work .",
        "Obama was First Lady ; her work .",
        "Michelle",
        "Obama",
    )
    assert signals["rest_top"] == pytest.approx(5.0)
    fine = passage_signals(
        FakeScorer(), "who", "Michelle was First Lady .", "Laura was First Lady .", "Michelle", "Laura"
    )
    assert fine["rest_top"] == pytest.approx(0.0)


def test_unanswerable_signals_have_no_new_answer():
    signals = passage_signals(FakeScorer(), "who", "Moscow is big .", "The city is big .", "Moscow", None)
    assert "new_support" not in signals and signals["old_drop"] == pytest.approx(4.9)


def test_rest_shift_aligns_shared_tokens_only():
    out = rest_shift([("a", -1.0), ("X", -1.0), ("b", -1.0)], [("a", -1.0), ("Y", -9.0), ("b", -4.0)])
    assert out["rest_top"] == pytest.approx(3.0)  # "b" rose by 3; the replaced token is not counted
    assert out["rest_tokens"] == 2


def test_threshold_is_the_lowest_cut_that_keeps_precision():
    scores = [0.9, 0.8, 0.7, 0.6, 0.5]
    assert acceptance.threshold_for(scores, [True, True, True, False, True], 0.8, min_kept=1) == 0.5
    assert acceptance.threshold_for(scores, [True, True, False, False, True], 0.9, min_kept=1) == 0.8
    # a cut above fewer than min_kept cases is not taken, however precise
    assert acceptance.threshold_for(scores, [True, False, False, False, False], 0.9, min_kept=2) == 1.0


def test_best_cut_is_the_most_precise_cut_that_keeps_its_share():
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    labels = [False, True, True, True, False, False]
    # the top case alone is invalid; among cuts keeping at least half, 3 of 4 at 0.6 is the most precise
    assert acceptance.best_cut(scores, labels, min_share=0.5) == 0.6
    assert acceptance.best_cut(scores, [True] * 6, min_share=0.5) == 0.4  # ties: the lower cut keeps more


def test_answer_kind_reads_numbers_and_names():
    assert acceptance.answer_kind("July 18 , 2018") == (1.0, 0.0)
    assert acceptance.answer_kind("Gina Riley") == (0.0, 1.0)
    assert acceptance.answer_kind("the primal rib") == (0.0, 0.0)


def test_fit_orders_separable_cases():
    features = [[float(i), 0.0] for i in range(20)]
    labels = [i >= 10 for i in range(20)]
    params = acceptance.fit(features, labels)
    scores = [acceptance.score(params, f) for f in features]
    assert scores == sorted(scores) and scores[-1] > 0.5 > scores[0]
    cv = acceptance.cross_validated(features, labels)
    # each row scored by a model that never saw it: far from the boundary, still on its side
    assert min(cv[13:]) > 0.5 > max(cv[:7])


def _params(task: str) -> dict:
    names = acceptance.feature_names(task)
    coef = [-1.0 if n in ("old_pmi", "rest_top") else 0.0 for n in names]
    return {
        "name": f"acceptance.{task}/test",
        "mean": [0.0] * len(names),
        "scale": [1.0] * len(names),
        "coef": coef,
        "intercept": 2.0,
        "threshold": 0.5,
        "scorer": "fake",
        "features": names,
    }


def _swap(case_id: str, edited: str, status: str = "accepted") -> dict:
    return {
        "id": f"{case_id}:swap",
        "seed_id": case_id,
        "task": "answer_swap",
        "status": status,
        "question": "who",
        "original_context": "Moscow is big .",
        "context": edited,
        "original_answers": ["Moscow"],
        "answers": ["Paris"],
        "judge": {"if": True, "only_if": True, "p_valid": 1.0},
    }


def test_decision_rejects_a_trace_and_keeps_a_clean_swap():
    decision = acceptance.AcceptanceDecision("answer_swap", _params("answer_swap"), FakeScorer())
    clean = decision.apply(_swap("a", "Paris is big ."))
    trace = decision.apply(_swap("b", "Paris is big , Moscow too ."))
    assert clean["status"] == "accepted" and clean["acceptance"]["score"] > 0.5
    assert trace["status"] == "rejected:acceptance" and trace["acceptance"]["signals"]["old_pmi"] > 4
    unjudged = {**_swap("c", "Paris ."), "status": "rejected:old_answer_absent", "judge": {}}
    assert decision.apply(unjudged) is unjudged  # only cases the checks passed are decided
    assert acceptance.passed_checks(trace)  # a case the score rejected is still one the checks passed


def test_signals_are_read_once_per_text(tmp_path):
    cache = acceptance.SignalCache(tmp_path / acceptance.SIGNALS_FILE)
    scorer = FakeScorer()
    records = [_swap("a", "Paris is big ."), {**_swap("a2", "Paris is big ."), "id": "a2:swap"}]
    first = acceptance.read_signals(records, scorer, "fake", cache, progress=False)
    calls = scorer.calls
    again = acceptance.read_signals(records, scorer, "fake", acceptance.SignalCache(cache.path), progress=False)
    assert scorer.calls == calls and first == again and len(first) == 2


def test_accept_run_appends_decisions_and_resumes(tmp_path, monkeypatch):
    from experiments.run_store import RunStore

    monkeypatch.setenv("REEVAL_RUNS_DIR", str(tmp_path))
    monkeypatch.setattr(acceptance, "load_params", lambda task: _params(task))
    monkeypatch.setattr(acceptance.AcceptanceDecision, "_scorer", lambda self: FakeScorer())
    store = RunStore("run-a")
    store.append(_swap("a", "Paris is big ."))
    store.append(_swap("b", "Paris is big , Moscow too ."))
    store.append(_swap("c", "Paris is big .", status="rejected:judge_if"))
    store.close()
    out = acceptance.accept_run("run-a", progress=False)
    statuses = {r["id"]: r["status"] for r in RunStore("run-a").records()}
    assert statuses == {"a:swap": "accepted", "b:swap": "rejected:acceptance", "c:swap": "accepted"}
    assert out["before"]["accepted"] == 2 and out["after"]["accepted"] == 2
    lines = (tmp_path / "run-a" / "cases.jsonl").read_text().splitlines()
    acceptance.accept_run("run-a", progress=False)  # nothing left to decide: no line added
    assert len((tmp_path / "run-a" / "cases.jsonl").read_text().splitlines()) == len(lines)
    assert json.loads(lines[-1])["status_before_acceptance"] == "rejected:judge_if"


def test_validation_acceptance_auto_gives_the_task_its_decision(isolated, monkeypatch):
    from experiments.config import ExperimentConfig
    from experiments.executors.worker import build_task
    from experiments.resolved_run import resolve_run

    monkeypatch.setattr(acceptance, "load_params", lambda task: _params(task))
    lms = {"pivot": object(), "judge": object()}
    base = {"name": "t", "task": "answer_swap", "data": {"source": "nq"}, "models": {"pivot": {"name": "qwen2.5-0.5b"}}}
    on = ExperimentConfig.model_validate({**base, "validation": {"acceptance": "auto"}})
    off = ExperimentConfig.model_validate(base)
    task, _ = build_task(resolve_run(on), lms, None)
    assert isinstance(task.acceptance, acceptance.AcceptanceDecision) and task.acceptance.task == "answer_swap"
    assert build_task(resolve_run(off), lms, None)[0].acceptance is None
