"""Every task through the runner with a scripted LM (DummyLM keyed on what each prompt asks for)."""

import json

import dspy
import pytest
import yaml

from experiments import runner
from experiments.config import LMConfig
from experiments.config_loader import load_config
from experiments.lm.registry import ResolvedLM
from experiments.run_store import RunStore
from tests.test_context_enrich import FakeRetriever

FORMAT_ANSWERS = {
    "Literal['only_expected'": {"reason": "r", "verdict": "only_expected"},
    "Literal['yes', 'no']": {"reason": "r", "verdict": "yes"},
    "'E', 'F']": {"choice": "A"},  # a multiple choice among a question's own options
    "Literal['answerable'": {"reason": "r", "verdict": "unanswerable"},
    "`rewritten_sentence`": {"justification": "j", "rewritten_sentence": "Nothing is said about it here."},
    "`wrong_answer`, then `justification`": {"answer_type": "t", "wrong_answer": "Zanzibar Q", "justification": "j"},
    "`wrong_answer`.": {"answer_type": "t", "wrong_answer": "Zanzibar Q"},
    "`paragraph`, then `justification`": {"paragraph": "P2 claims OPTION.", "justification": "j"},
    "`paragraph`.": {"paragraph": "Background on the topic."},
    "`passage`.": {"passage": "nothing usable"},
    "`background`": {"background": "Harbours have ferries. Bridges are steel."},
    "`sentence`.": {"sentence": "not a sentence of the evidence"},
    "`answers`": {"answers": ["Zanzibar Q"]},  # the judge's extraction: an answer in no context
}


def scripted_lm(examples, task):
    answers = dict(FORMAT_ANSWERS)
    if task == "unanswerable":  # only-if asks "does the context still support the old answer?"
        answers["Literal['yes', 'no']"] = {"reason": "r", "verdict": "no"}
    for e in examples:
        if e.get("context"):
            answers[e.context[:200]] = {"answer": e.answers[0]}  # open-book: right
    answers["`answer`."] = {"answer": "no idea"}  # closed-book: wrong
    return dspy.utils.DummyLM(answers, adapter=dspy.JSONAdapter())


@pytest.fixture
def scripted(monkeypatch):
    def build_lms(run):
        examples = runner.load_data(run.config).examples
        if run.config.task == "counterfactual":
            FORMAT_ANSWERS["`paragraph`, then `justification`"]["paragraph"] = " ".join(
                o for e in examples for o in e.options
            )  # names every option: the checks must reject it
        lm = scripted_lm(examples, run.config.task)
        return {role: ResolvedLM(role, LMConfig(name=f"dummy/{role}"), lm, None) for role in run.models}

    monkeypatch.setattr(runner, "build_lms", build_lms)
    monkeypatch.setattr("experiments.corpus.default_retriever", lambda embedder, **options: FakeRetriever())


def config_for(tmp_path, task, source="nq", limit=4, judge=True, calibration=0, options=None):
    models = {"pivot": {"name": "qwen2.5-0.5b"}} if task != "judge_calibration" else {}
    if judge or task == "judge_calibration":
        models["judge"] = {"name": "qwen2.5-0.5b"}
    path = tmp_path / f"{task}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": task,
                "task": task,
                "data": {"source": source, "limit": limit, "max_evidence_words": 300},
                "models": models,
                "validation": {"calibration_controls": calibration},
                "options": options or {},
            }
        )
    )
    return load_config(path)


@pytest.mark.parametrize("task", ["answer_swap", "context_enrich", "unanswerable", "inconsistent"])
def test_perturbation_tasks_produce_checked_cases(isolated, scripted, task):
    # The scripted pivot proposes the swap's new answer: the distance that asks it.
    options = {"distance": "proposed"} if task == "answer_swap" else None
    config = config_for(isolated, task, judge=True, calibration=2, options=options)
    result = runner.run_experiment(config, progress=False)
    records = RunStore(result.run_id).records()
    assert {r["seed_id"] for r in records} == {e.id for e in runner.load_data(config).examples}
    accepted = [r for r in records if r["status"] == "accepted"]
    assert accepted, [r["status"] for r in records]
    for record in accepted:  # every perturbation task passes its cases through the judge
        assert record["context"] and record["answers"]
        assert record["judge"]["if"] is True and record["judge"]["only_if"] is True
    assert result.metrics["judge.if.pass_rate"] == 1.0
    if task == "answer_swap":
        assert all(r["answers"] == ["Zanzibar Q"] and "Zanzibar Q" in r["context"] for r in accepted)
    if task == "context_enrich":
        assert {r["focus"] for r in accepted} == {"question", "evidence"}
        assert all(r["sentence_fallback"] for r in accepted)  # the scripted sentence is never verbatim
        import mlflow

        params = mlflow.get_run(result.mlflow_run_id).data.params  # the retrieval that made the cases
        assert params["retrieval.corpus_sha256"] == "f" * 64 and params["retrieval.index"] == "Flat"
    if task == "unanswerable":
        assert all(r["answers"] == ["unknown"] and r["judge"]["if"] for r in accepted)
        assert result.metrics["judge_calibration.gold_answer.n"] == 2
    if task == "inconsistent":
        pairs = {r["id"] for r in accepted}
        assert any(i.endswith(":inconsistent") for i in pairs) and any(i.endswith("-modified") for i in pairs)
        assert all(r["answers"] == ["conflict"] for r in accepted if r["id"].endswith(":inconsistent"))
        # both records carry the generator's proposal with its justification
        assert all(r["proposals"] and "justification" in r["proposals"][0] for r in accepted)


def test_counterfactual_rejects_passages_naming_other_options(isolated, scripted):
    config = config_for(isolated, "counterfactual", source="arc_challenge", limit=3)
    result = runner.run_experiment(config, progress=False)
    records = RunStore(result.run_id).records()
    closed = [r for r in records if r["id"].endswith(":closed-book")]
    assert len(closed) == 3 and all(r["context"] == "" for r in closed)
    generated = [r for r in records if r["id"].endswith(":counterfactual")]
    assert all(r["status"].startswith("rejected:") for r in generated)
    assert all(r["question"].count("\nA. ") == 1 for r in generated)


def test_judge_calibration_task(isolated, scripted):
    config = config_for(isolated, "judge_calibration", limit=6)
    config.options = {"families": ["extract"]}
    result = runner.run_experiment(config, progress=False)
    # the scripted judge reads an answer that is in no context: nothing is answerable, so only the
    # unanswerable kind's valid condition is judged right
    m = result.metrics
    assert m["judge_calibration.gold_answer.accuracy"] == 0.0 and m["judge_calibration.two_answers.accuracy"] == 1.0
    assert m["judge_calibration.answer_removed.accuracy"] == 1.0
    assert m["judge_calibration.original_as_unanswerable.accuracy"] == 0.0
    assert "judge_method.extract.held_out.worst" in m and "judge_method.reasoned_as_is.held_out.worst" not in m
    params = json.loads((RunStore(result.run_id).dir / "judge_params.json").read_text())
    assert params["chosen"] == "extract" and params["judge"]["name"] == "dummy/judge"
    signals = (RunStore(result.run_id).dir / "judge_signals.jsonl").read_text().splitlines()
    assert len(signals) == len(result.records) and "context" not in json.loads(signals[0])
    report = RunStore(result.run_id).dir / "report"
    page = (report / "judge_methods.md").read_text()
    assert "| method | gold_answer |" in page and "| extract **(chosen)** |" in page
    assert "<th>method</th>" in (report / "judge_methods.html").read_text()
