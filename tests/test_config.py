import pytest
import yaml
from typer.testing import CliRunner

from experiments.cli import app
from experiments.config import DEFAULT_CONFIG, ConfigError
from experiments.config_loader import load_config

GOOD = {
    "name": "t",
    "task": "seed_selection",
    "data": {"source": "nq", "limit": 3},
    "models": {"pivot": {"name": "qwen2.5-0.5b"}},
}


def write(tmp_path, data, name="c.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_default_config_is_valid():
    config = load_config(DEFAULT_CONFIG)
    assert config.task == "seed_selection"
    assert config.models.pivot.name == "qwen2.5-1.5b"


def test_misspelt_key_names_the_key_and_suggests(tmp_path):
    bad = {**GOOD, "data": {"source": "nq", "limt": 3}}
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, bad))
    message = str(info.value)
    assert "data.limt: unknown key" in message
    assert "did you mean 'limit'" in message


def test_unknown_model_suggests_close_name(tmp_path):
    bad = {**GOOD, "models": {"pivot": {"name": "qwen2.5-1.5"}}}
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, bad))
    assert "models.pivot.name" in str(info.value)
    assert "Did you mean qwen2.5-1.5b" in str(info.value)


def test_provider_model_strings_pass_through(tmp_path):
    ok = {**GOOD, "models": {"pivot": {"name": "hosted_vllm/Qwen2.5-7B", "api_base": "http://localhost:8000/v1"}}}
    assert load_config(write(tmp_path, ok)).models.pivot.api_base == "http://localhost:8000/v1"


def test_unknown_data_source_is_an_error(tmp_path):
    bad = {**GOOD, "data": {"source": "nqq"}}
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, bad))
    assert "data.source" in str(info.value)
    assert "nq" in str(info.value)


def test_a_judged_config_needs_its_stored_calibration_controls(tmp_path):
    judged = {**GOOD, "models": {**GOOD["models"], "judge": {"name": "qwen2.5-0.5b"}}}
    assert load_config(write(tmp_path, judged)).validation.calibration_source == "nq"
    for validation, message in (
        ({"calibration_source": "squad"}, "no stored judge controls for 'squad'"),
        ({"calibration_controls": 51}, "hold 50 per condition"),
    ):
        with pytest.raises(ConfigError, match=message):
            load_config(write(tmp_path, {**judged, "validation": validation}))
    # no judge, or no controls asked for: nothing is read
    load_config(write(tmp_path, {**GOOD, "validation": {"calibration_source": "squad"}}))
    load_config(write(tmp_path, {**judged, "validation": {"calibration_source": "squad", "calibration_controls": 0}}))


def test_unknown_task(tmp_path):
    with pytest.raises(ConfigError, match="did you mean|Did you mean"):
        load_config(write(tmp_path, {**GOOD, "task": "seed_selectoin"}))


def test_validate_cli_exit_codes(tmp_path):
    runner = CliRunner()
    good = write(tmp_path, GOOD, "good.yaml")
    typo = write(tmp_path, {**GOOD, "modles": GOOD["models"]}, "typo.yaml")
    badmodel = write(tmp_path, {**GOOD, "models": {"pivot": {"name": "gpt4"}}}, "model.yaml")
    assert runner.invoke(app, ["validate", str(good)]).exit_code == 0
    result = runner.invoke(app, ["validate", str(typo), str(badmodel)])
    assert result.exit_code == 2
    assert "modles: unknown key" in result.output
    assert "Unknown local model 'gpt4'" in result.output


def test_digest_is_stable_and_sensitive(tmp_path):
    a = load_config(write(tmp_path, GOOD))
    b = load_config(write(tmp_path, GOOD, "b.yaml"))
    c = load_config(write(tmp_path, {**GOOD, "data": {"source": "nq", "limit": 4}}, "c2.yaml"))
    assert a.digest() == b.digest() != c.digest()


def test_a_new_schema_field_with_a_default_keeps_the_run_id(tmp_path):
    from experiments.config import ExperimentConfig

    config = load_config(write(tmp_path, GOOD))
    explicit = ExperimentConfig.model_validate({**GOOD, "run": {"error_budget": 0.2}})  # the default, spelt out
    assert explicit.digest() == config.digest()
    changed = ExperimentConfig.model_validate({**GOOD, "run": {"error_budget": 0.5}})
    assert changed.digest() != config.digest()


@pytest.mark.parametrize("path", sorted(DEFAULT_CONFIG.parent.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_config_is_valid_and_has_its_roles(path):
    from experiments.task_registry import entries

    raw = yaml.safe_load(path.read_text())
    if str(raw["data"]["source"]).startswith("run:"):
        # named by a shipped config, never by a run id that exists on one machine only
        assert (path.parent / (raw["data"]["source"].removeprefix("run:") + ".yaml")).is_file()
    config = load_config(path)  # valid on a fresh clone too: a config-named case set may wait for its run
    for role in entries()[config.task].cls.roles:
        assert getattr(config.models, role), f"{path.name}: models.{role} missing"


def test_schema_knows_which_tasks_evaluate_files_as_given():
    """The run id depends on data.reeval_filters' default, which the schema reads off EVALUATES_FILES_AS_GIVEN."""
    from experiments.config import EVALUATES_FILES_AS_GIVEN
    from experiments.task_registry import entries

    given = {
        name
        for name, task in ((n, e.cls) for n, e in entries().items())
        if getattr(task, "evaluates_files_as_given", False)
    }
    assert given == EVALUATES_FILES_AS_GIVEN


def test_run_target_keeps_the_named_targets_and_refuses_others():
    from experiments.cli import _only_targets
    from experiments.failures import UserError

    cfg = load_config("experiments/configs/knowledge_conflict.yaml")
    kept = _only_targets(cfg, ["qwen2.5-0.5b", "gemma3-270m"])
    assert [t.name for t in kept.models.targets] == ["qwen2.5-0.5b", "gemma3-270m"]
    assert kept.models.targets[0].max_tokens == 48  # the config's own settings of that target
    assert [t.name for t in cfg.models.targets][0] == "qwen2.5-1.5b"  # the loaded config is left as it was
    with pytest.raises(UserError, match="qwen2.5-7b: not a target of this config"):
        _only_targets(cfg, ["qwen2.5-7b"])
