"""Compiled programs as MLflow models (logged, registered, loaded from models:/ in a fresh run store) and
generator prompts in the Prompt Registry (one version per generator version, linked to the run)."""

import dspy
import pytest

from experiments import tracking
from experiments.compiled import CompiledProgramNotFound, load_compiled, log_compiled_model
from experiments.config import ConfigError
from programs.answer_swap import VERSION, AnswerSwap
from programs.faitheval import Unanswerable


def _compiled() -> AnswerSwap:
    """An AnswerSwap whose first predictor holds a demonstration, as an optimiser leaves it."""
    program = AnswerSwap(3, False, 0.9)
    name, predictor = program.named_predictors()[0]
    fields = {k: f"demo {k}" for k in (*predictor.signature.input_fields, *predictor.signature.output_fields)}
    predictor.demos = [dspy.Example(**fields)]
    return program


def _prompts(program) -> list[str]:
    return [tracking.render_prompt(p, None) for _, p in program.named_predictors()]


def test_compiled_program_round_trips_through_the_model_registry(isolated, tmp_path, monkeypatch):
    mlflow = tracking.setup_mlflow()
    experiment = tracking.ensure_experiment("reeval/optimise")
    program = _compiled()
    with mlflow.start_run(experiment_id=experiment):
        uri = log_compiled_model(program, "best", {"generator": "answer_swap"}, "reeval-answer-swap")
    assert uri.startswith("models:/")

    monkeypatch.setenv("REEVAL_RUNS_DIR", str(tmp_path / "fresh-runs"))  # no runs/<id>/compiled to fall back on
    loaded = AnswerSwap(3, False, 0.9)
    meta = load_compiled(loaded, "models:/reeval-answer-swap/1", "answer_swap")
    assert meta == {"generator": "answer_swap"}
    assert loaded.dump_state() == program.dump_state()
    # The same rendered prompts (demonstrations included) make the same calls, hence the same cases.
    assert _prompts(loaded) == _prompts(program) != _prompts(AnswerSwap(3, False, 0.9))

    with pytest.raises(ConfigError, match="compiled for 'answer_swap', not 'unanswerable'"):
        load_compiled(AnswerSwap(3, False, 0.9), "models:/reeval-answer-swap/1", "unanswerable")
    with pytest.raises(ConfigError, match="is a AnswerSwap, not a Unanswerable"):
        load_compiled(Unanswerable(), "models:/reeval-answer-swap/1", "answer_swap")
    with pytest.raises(CompiledProgramNotFound):
        load_compiled(AnswerSwap(3, False, 0.9), "models:/reeval-answer-swap/7", "answer_swap")


def test_generator_prompts_registered_once_per_version_and_linked(isolated):
    mlflow = tracking.setup_mlflow()
    experiment = tracking.ensure_experiment("reeval/prompts")
    programs = {"answer_swap": AnswerSwap(3, False, 0.9), "unanswerable": Unanswerable()}
    with mlflow.start_run(experiment_id=experiment) as first:
        uris = tracking.register_prompts(programs, {})
    with mlflow.start_run(experiment_id=experiment) as second:
        again = tracking.register_prompts(programs, {})
    assert uris == again  # the same generator versions: no new registry version
    names = {p.name for p in mlflow.genai.search_prompts()}
    assert {u.split("/")[1] for u in uris} == names
    assert any(n.startswith("reeval.answer_swap.") for n in names)
    assert any(n.startswith("reeval.unanswerable.") for n in names)
    swap_uri = next(u for u in uris if "reeval.answer_swap." in u)
    prompt = mlflow.genai.load_prompt(swap_uri)
    assert prompt.tags["program_version"] == VERSION
    assert prompt.template == tracking.render_prompt(
        dict(AnswerSwap(3, False, 0.9).named_predictors())[swap_uri.split("/")[1].removeprefix("reeval.answer_swap.")],
        None,
    )
    for run in (first, second):
        tags = mlflow.get_run(run.info.run_id).data.tags
        assert tags[tracking.PROMPTS_TAG].split() == uris

    compiled = {"answer_swap": _compiled()}
    with mlflow.start_run(experiment_id=experiment):
        changed = tracking.register_prompts(compiled, {})
    assert changed[0].rsplit("/", 1)[1] == "2"  # other text under the same version: its own registry version


def test_only_generators_have_registered_prompts(isolated):
    from programs.seed_selection import SeedSelection

    mlflow = tracking.setup_mlflow()
    with mlflow.start_run(experiment_id=tracking.ensure_experiment("reeval/none")):
        assert tracking.register_prompts({"seed_selection": SeedSelection()}, {}) == []
