"""A case set named by the config that made it: the latest finished run of that very config."""

import pytest

from experiments import runner
from experiments.case_sets import CaseSetNotRun, load_run_cases, resolve_run_source
from experiments.config_loader import load_config
from tests.test_tasks_end_to_end import config_for, scripted  # noqa: F401 - fixture


def test_a_config_names_its_latest_finished_run(isolated, scripted):  # noqa: F811
    config = config_for(isolated, "answer_swap", judge=False)
    path = isolated / "answer_swap.yaml"
    with pytest.raises(CaseSetNotRun, match="reeval run .*answer_swap.yaml. first"):
        resolve_run_source(f"run:{path}")
    first = runner.run_experiment(config, progress=False)
    assert resolve_run_source(f"run:{path}") == f"run:{first.run_id}"
    fresh = runner.run_experiment(load_config(path), fresh=True, progress=False)
    assert resolve_run_source(f"run:{path}") == f"run:{fresh.run_id}"  # the newest finished one
    assert resolve_run_source(f"run:{first.run_id}") == f"run:{first.run_id}"  # an id stays an id
    cases, _ = load_run_cases(f"run:{path}")
    assert {c.id for c in cases} == {r["id"] for r in fresh.records if r["status"] == "accepted"}
    # an edited config is another config: its old runs are not its cases
    path.write_text(path.read_text().replace("limit: 4", "limit: 3"))
    with pytest.raises(CaseSetNotRun):
        resolve_run_source(f"run:{path}")


def test_unknown_names_say_what_was_looked_for(isolated):
    with pytest.raises(FileNotFoundError, match="no config experiments/configs/nope.yaml"):
        resolve_run_source("run:nope")
