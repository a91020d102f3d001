"""A run is resolved once, before it runs: the task that drives it receives the resolved run (typed options, the
run id, how this invocation runs) and nothing below resolves or validates it again."""

import pytest
from pydantic import BaseModel, ConfigDict, model_validator

from experiments import launch, task_registry
from experiments.config import ConfigError, ExperimentConfig
from experiments.resolved_run import ResolvedRun, resolve_run
from experiments.run_store import RunStore, RunStoreError

VALIDATIONS: list[int] = []


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    level: int = 1

    @model_validator(mode="after")
    def _count(self):
        VALIDATIONS.append(self.level)
        return self


@pytest.fixture
def toy_task():
    driven: list[ResolvedRun] = []

    @task_registry.task("toy_stages", runs="stages")
    class ToyStages:
        roles = ()
        Options = ToyOptions

        @staticmethod
        def drive(run):
            driven.append(run)
            return run

    VALIDATIONS.clear()
    yield driven
    task_registry.unregister("toy_stages")


def _config(**options) -> ExperimentConfig:
    raw = {"name": "toy", "task": "toy_stages", "data": {"source": "nq"}, "models": {}, "options": options}
    return ExperimentConfig.model_validate(raw)  # the schema alone: the options are first validated on resolving


def test_the_driving_task_receives_the_resolved_run(isolated, toy_task):
    result = launch.run_experiment(_config(level=3), retry_errors=True, progress=False)
    [run] = toy_task
    assert result is run
    assert isinstance(run.options, ToyOptions) and run.options.level == 3
    assert VALIDATIONS == [3]  # validated once, where the run is resolved
    assert run.run_id == RunStore.new_id("toy", _config(level=3).digest())
    assert (run.retry_errors, run.progress, run.ray_address) == (True, False, None)


def test_a_fresh_run_gets_an_id_of_its_own(isolated, toy_task):
    assert resolve_run(_config(), fresh=True).run_id != resolve_run(_config()).run_id


def test_another_configs_run_is_refused_before_anything_runs(isolated, toy_task):
    run_id = resolve_run(_config(level=1)).run_id
    RunStore(run_id).write_config(_config(level=1).model_dump(mode="json"))
    with pytest.raises(RunStoreError, match="options.level: 1 there, 2 here"):
        launch.run_experiment(_config(level=2), run_id=run_id)
    assert len(toy_task) == 0


def test_the_models_of_the_tasks_roles_are_resolved_with_the_run(isolated):
    raw = {"name": "m", "task": "evaluate", "data": {"source": "nq"}}
    targets = [{"name": "qwen2.5-0.5b"}, {"name": "smollm2-135m"}]
    run = resolve_run(ExperimentConfig.model_validate({**raw, "models": {"targets": targets}}))
    assert [c.name for c in run.models["targets"]] == ["qwen2.5-0.5b", "smollm2-135m"]
    assert "judge" not in run.models  # optional, and unset
    assert run.split.contexts >= 1
    with pytest.raises(ConfigError, match="models.targets: task 'evaluate' needs at least one"):
        resolve_run(ExperimentConfig.model_validate({**raw, "models": {}}))
