"""A run refused before its first case leaves nothing behind: no runs/<id>/ folder, no MLflow run.

An unknown provider prefix is refused by `validate` and by `run` with the nearest providers LiteLLM
knows; a data file that cannot be read is refused by `run` after its config was found valid.
"""

import pytest

from tests.test_cli_errors import assert_user_mistake, eval_config, invoke, row, run


def assert_nothing_written(isolated) -> None:
    runs = isolated / "runs"
    assert not runs.exists() or not any(runs.iterdir()), sorted(runs.iterdir())
    assert not (isolated / "mlflow.db").exists()  # the MLflow store `isolated` points at was never opened


@pytest.mark.parametrize(
    ("model", "nearest"), [("opnai/fake-model", "did you mean openai"), ("notaprovider/fake-model", "")]
)
def test_an_unknown_provider_prefix_is_refused_before_anything_is_written(isolated, monkeypatch, model, nearest):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    data = isolated / "cases.jsonl"
    data.write_text(row("a") + "\n")
    config = eval_config(isolated, data, target=model)
    for result in (invoke("validate", config), run(config)):
        assert_user_mistake(result, f"models.targets.0.name: {model}: unknown provider", nearest)
        assert "docs.litellm.ai/docs/providers" in result.stderr
        assert "Provider List" not in result.output  # LiteLLM's banner: no call was made
    assert_nothing_written(isolated)


def test_known_providers_pass_validate(isolated):
    data = isolated / "cases.jsonl"
    data.write_text(row("a") + "\n")
    for model in ("openai/gpt-4o-mini", "hosted_vllm/Qwen/Qwen2.5-7B-Instruct", "ollama_chat/llama3.1"):
        result = invoke("validate", eval_config(isolated, data, target=model))
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (row("a") + "\n" + row("b")[:-10] + "\n", ":2: invalid JSON"),
        ((row("a") + "\n").encode().replace(b"tower", b"tow\xe9r"), ":1: not valid UTF-8"),
    ],
)
def test_a_data_file_refused_at_run_time_leaves_no_run_folder(isolated, content, problem):
    data = isolated / "cases.jsonl"
    (data.write_bytes if isinstance(content, bytes) else data.write_text)(content)
    assert_user_mistake(run(eval_config(isolated, data)), f"{data}{problem}")
    assert_nothing_written(isolated)
