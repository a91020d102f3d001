"""One error path for every command: a user mistake is a line or two naming the file, line and field (or the
id) and what to do, exit 2; an unexpected error is one line plus a log file holding the traceback, exit 1."""

import gzip
import importlib
import json

import pytest
from typer.testing import CliRunner

from experiments import failures
from experiments.cli import app
from tests.test_roster import fake_roster

CONTEXT = "The Eiffel Tower was completed in 1889 and stands on the Champ de Mars in Paris, France, near the Seine."


def row(rid: str, **fields) -> str:
    return json.dumps(
        {"id": rid, "question": "When was the tower completed?", "context": CONTEXT, "answers": ["1889"], **fields}
    )


def eval_config(tmp_path, source, target: str = "qwen2.5-0.5b", name: str = "cli-errors") -> str:
    path = tmp_path / f"{name}.yaml"
    targets = f"[{{name: {target}, max_tokens: 16}}]" if target else "[]"
    path.write_text(
        f"name: {name}\ntask: evaluate\ndata: {{source: '{source}', reeval_filters: false}}\n"
        f"models: {{targets: {targets}}}\noptions: {{settings: [open_book]}}\n"
    )
    return str(path)


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def run(config_path, *options: str):
    """`reeval run` with its INFO log off: what is left on stderr is the error's own report."""
    return invoke("run", str(config_path), "--log-level", "WARNING", *options)


def assert_user_mistake(result, *fragments: str) -> None:
    """Exit 2, every fragment in the message, no traceback (neither Python's nor rich's boxed one)."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "╭" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2, result.stderr


# -- bad data rows ------------------------------------------------------------------------------------


def test_bad_json_row(isolated):
    data = isolated / "cases.jsonl"
    data.write_text(row("a") + "\n" + row("b")[:-10] + "\n" + row("c") + "\n")
    assert_user_mistake(run(eval_config(isolated, data)), f"{data}:2: invalid JSON")


def test_empty_answers(isolated):
    data = isolated / "cases.jsonl"
    data.write_text(row("a") + "\n" + row("b", answers=[]) + "\n")
    assert_user_mistake(run(eval_config(isolated, data)), f"{data}:2: field 'answers'", "empty list")


def test_truncated_gzip(isolated):
    data = isolated / "cases.jsonl.gz"
    packed = gzip.compress("".join(row(f"q{i}") + "\n" for i in range(300)).encode())
    data.write_bytes(packed[: len(packed) // 2])
    assert_user_mistake(run(eval_config(isolated, data)), f"{data}:", "corrupt or truncated gzip")


# -- configs ------------------------------------------------------------------------------------------


def test_missing_config(isolated):
    assert_user_mistake(run(str(isolated / "nope.yaml")), "nope.yaml: no such config file")


def test_invalid_yaml_names_line_and_column(isolated):
    path = isolated / "broken.yaml"
    path.write_text("name: x\ntask: evaluate\ndata: {source: nq\n")
    result = run(str(path))
    assert_user_mistake(result, f"{path}:4:1: not valid YAML")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", ["latin-1", "directory"])
def test_unreadable_config(isolated, kind):
    path = isolated / "odd.yaml"
    if kind == "directory":
        path.mkdir()
    else:
        path.write_bytes("name: café\n".encode("latin-1"))
    expected = "not UTF-8 text" if kind == "latin-1" else "cannot read the config"
    assert_user_mistake(run(str(path)), f"{path}: {expected}")


def test_config_without_the_models_its_task_needs(isolated):
    data = isolated / "cases.jsonl"
    data.write_text(row("a") + "\n")
    assert_user_mistake(run(eval_config(isolated, data, target="")), "models.targets", "add it")


@pytest.mark.parametrize(
    "model, variable",
    [
        ("openai/gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic/claude-3-5-haiku-latest", "ANTHROPIC_API_KEY"),
        ("gemini/gemini-1.5-flash", "GOOGLE_API_KEY or GEMINI_API_KEY"),
    ],
)
def test_a_provider_model_without_its_key_is_refused_before_any_call(isolated, monkeypatch, model, variable):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    data = isolated / "cases.jsonl"
    data.write_text(row("a") + "\n")
    result = run(eval_config(isolated, data, target=model))
    assert_user_mistake(result, f"models.target {model}: {variable} is not set", "Nothing was run")
    # A server that needs no key (vLLM, Ollama) is not refused for the lack of one.
    from experiments.lm.credentials import missing_credentials

    assert missing_credentials("hosted_vllm/meta-llama/Llama-3.1-8B-Instruct", "http://127.0.0.1:8000/v1") == []
    assert missing_credentials("ollama_chat/llama3.2") == []
    monkeypatch.setenv("TOGETHER_API_KEY", "set")  # one of the names the provider reads is enough
    assert missing_credentials("together_ai/meta-llama/Llama-3-8b-chat-hf") == []


def test_limit_override_on_a_config_whose_data_is_not_a_mapping(isolated):
    path = isolated / "flat.yaml"
    path.write_text("name: x\ntask: evaluate\ndata: nq\nmodels: {}\n")
    assert_user_mistake(run(str(path), "--limit", "3"), f"{path}: invalid config", "data")


def test_message_is_printed_verbatim_not_as_markup(isolated):
    assert_user_mistake(run(str(isolated / "[red]odd[/red].yaml")), "[red]odd[/red].yaml")


# -- unknown run ids ----------------------------------------------------------------------------------

UNKNOWN_ID_COMMANDS = {
    "show": ["show", "no-such-run"],
    "report": ["report", "no-such-run"],
    "reproduce": ["reproduce", "no-such-run"],
    "review": ["review", "no-such-run", "--annotator", "ann"],
    "validity": ["validity", "no-such-run"],
    "rejudge": ["rejudge", "no-such-run"],
    "resume": ["resume", "no-such-run"],
    "run --resume": ["run", "--resume", "no-such-run"],
}


@pytest.mark.parametrize("args", UNKNOWN_ID_COMMANDS.values(), ids=UNKNOWN_ID_COMMANDS.keys())
def test_unknown_run_id(isolated, args):
    result = invoke(*args)
    assert_user_mistake(result, "'no-such-run'")
    assert "run id" in result.stderr  # says what to give instead


# -- run directories ----------------------------------------------------------------------------------


def _made_run(isolated, data_rows: list[str]) -> tuple[str, str]:
    from experiments.config_loader import load_config
    from experiments.run_store import RunStore

    data = isolated / "cases.jsonl"
    data.write_text("".join(r + "\n" for r in data_rows))
    config_path = eval_config(isolated, data)
    config = load_config(config_path)
    run_id = RunStore.new_id(config.name, config.digest())
    return config_path, run_id


@pytest.mark.parametrize("run_id", ["../outside", "/etc", "a/../../b", "..", "a b", "a'b"])
@pytest.mark.parametrize("command", ["resume", "validity", "report", "show"])
def test_a_run_id_that_would_leave_the_runs_directory_is_refused(isolated, run_id, command):
    # `show` looks the id up in MLflow (where "a'b" broke the filter string) and finds none
    assert_user_mistake(invoke(command, run_id), "no MLflow run for" if command == "show" else "is not a run id")


def test_run_directory_of_another_config(isolated):
    config_path, run_id = _made_run(isolated, [row("a")])
    from experiments.config_loader import load_config

    other = load_config(config_path).model_dump(mode="json")
    other["data"]["limit"] = 1
    (isolated / "runs" / run_id).mkdir(parents=True)
    (isolated / "runs" / run_id / "config.json").write_text(json.dumps(other))
    assert_user_mistake(
        run(config_path), f"{run_id}/config.json", "another config", "data.limit: 1 there, unset here", "--fresh"
    )


def test_resume_of_a_damaged_run_directory(isolated):
    (isolated / "runs" / "torn").mkdir(parents=True)
    (isolated / "runs" / "torn" / "config.json").write_text('{"name": "x", "task": ')
    assert_user_mistake(invoke("resume", "torn"), "torn/config.json: damaged", "--fresh")


def test_resume_of_a_config_this_version_cannot_read(isolated):
    (isolated / "runs" / "old").mkdir(parents=True)
    (isolated / "runs" / "old" / "config.json").write_text(
        json.dumps({"name": "x", "task": "evaluate", "data": {"source": "nq"}, "models": {}, "retired_option": 1})
    )
    assert_user_mistake(invoke("resume", "old"), "old/config.json: invalid config", "retired_option: unknown key")


def test_damaged_case_line_names_file_and_line(isolated):
    folder = isolated / "runs" / "evalrun"
    folder.mkdir(parents=True)
    (folder / "cases.jsonl").write_text(json.dumps({"id": "a", "target": "t"}) + "\n{oops\n")
    assert_user_mistake(invoke("report", "evalrun"), "cases.jsonl:2: not valid JSON", "delete that line")


# -- model files --------------------------------------------------------------------------------------


def test_model_not_installed(isolated, monkeypatch):
    from experiments.lm import roster as local_models

    spec = local_models.LocalModelSpec("ghost", "t", ("no_such_weights_part1",), "g.gguf", "0" * 64, None, True, ())
    monkeypatch.setitem(local_models.ROSTER, "ghost", spec)
    (isolated / "cases.jsonl").write_text(row("a") + "\n")
    config_path = eval_config(isolated, isolated / "cases.jsonl", target="ghost", name="ghost-eval")
    assert_user_mistake(run(config_path), "'ghost' is not installed", "reeval models install ghost")


def test_corrupt_model_file_stops_before_any_case(isolated, monkeypatch):
    fake_roster(isolated, monkeypatch, [b"x" * 10, b"y" * 10], sha="0" * 64)
    (isolated / "cases.jsonl").write_text(row("a") + "\n" + row("b") + "\n")
    config_path = eval_config(isolated, isolated / "cases.jsonl", target="fake", name="fake-eval")
    assert_user_mistake(
        run(config_path), "fake: the weights", "refusing to load", "reeval models install fake --reinstall"
    )
    assert not list((isolated / "runs").glob("*/cases.jsonl"))  # not one error record per case


# -- unexpected errors --------------------------------------------------------------------------------


def test_internal_error_is_one_line_and_a_log_file(isolated, monkeypatch):
    from experiments import runner

    def broken(config):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(runner, "load_data", broken)
    (isolated / "cases.jsonl").write_text(row("a") + "\n")
    result = run(eval_config(isolated, isolated / "cases.jsonl"))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "╭" not in result.output
    summary, where = result.stderr.strip().splitlines()[-2:]
    assert summary == "reeval: internal error: ZeroDivisionError: division by zero"
    logs = list((isolated / "cache" / "logs").glob("reeval-*.log"))
    assert len(logs) == 1 and str(logs[0]) in where
    text = logs[0].read_text()
    assert "Traceback (most recent call last)" in text and "in broken" in text and "command:" in text


def test_every_listed_user_error_is_an_exception_class():
    for entry in failures.USER_ERRORS:
        module_name, _, class_name = entry.partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        assert isinstance(cls, type) and issubclass(cls, Exception), entry
    assert failures.is_user_error(importlib.import_module("experiments.data.errors").DataError("x"))
    assert not failures.is_user_error(ValueError("x"))


def test_error_budget_exceeded_says_how_to_go_on(isolated, monkeypatch):
    from experiments import runner
    from tests.fakes import scripted_pivot

    def build_lms(run):
        resolved = scripted_pivot(runner.load_data(run.config).examples, {}, {})
        resolved.lm.answers = {}  # every reply fails to parse: error:parse on every case
        return {"pivot": resolved}

    monkeypatch.setattr(runner, "build_lms", build_lms)
    (isolated / "seeds.jsonl").write_text(
        "".join(row(f"q{i}", question=f"When was tower {i} completed?") + "\n" for i in range(2))
    )
    path = isolated / "budget.yaml"
    path.write_text(
        f"name: budget\ntask: seed_selection\ndata: {{source: '{isolated / 'seeds.jsonl'}'}}\n"
        "models: {pivot: {name: qwen2.5-0.5b}}\nrun: {error_budget: 0.25, min_cases_before_budget: 1}\n"
    )
    result = run(path)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "╭" not in result.output
    assert result.stderr.strip().splitlines()[-1].startswith("1 of 1 records errored")
    assert "resume the run" in result.stderr


def test_split_override_on_a_source_without_declared_rows(isolated):
    """--split is checked like the config's own field: a source with no declared development rows has no split."""
    path = eval_config(isolated, "squad")
    assert_user_mistake(run(path, "--split", "held_out"), "split:", "no declared development rows")


def test_split_override_reaches_the_config(isolated):
    from experiments.config_loader import load_config

    path = isolated / "held-out.yaml"
    path.write_text("name: held-out\ntask: seed_selection\ndata: {source: nq}\nmodels: {pivot: {name: qwen2.5-0.5b}}\n")
    assert load_config(path, {"data.split": "held_out"}).data.split == "held_out"


def test_offset_override_is_checked_like_the_field(isolated):
    result = invoke("run", eval_config(isolated, "nq"), "--offset", "-1", "--log-level", "WARNING")
    assert result.exit_code == 2 and "--offset" in result.output


def test_source_override_runs_the_config_on_a_file_and_names_a_missing_one(isolated):
    """--source swaps the rows a config reads: a missing file is named, with the field it came from."""
    missing = isolated / "nowhere.jsonl"
    assert_user_mistake(run(eval_config(isolated, "nq"), "--source", str(missing)), str(missing))
    data = isolated / "mine.jsonl"
    data.write_text(row("a") + "\n" + row("b")[:-10] + "\n")
    # The file's own rows are read, not the config's: its damaged second line is what is reported.
    assert_user_mistake(run(eval_config(isolated, "nq"), "--source", str(data)), f"{data}:2: invalid JSON")
