"""`reeval validate` reads every data row with the checks `run` applies: a file `run` would stop on does not
pass `validate`, and both name it alike (file, line, field or column)."""

import pytest

from tests.test_cli_errors import CONTEXT, eval_config, invoke, row, run


def _error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("second", "problem"),
    [
        (row("b", question=""), ":2: field 'question': expected a non-empty string, got an empty one"),
        (row("b", answers=[]), ":2: field 'answers'"),
        (row("b")[:-10], f":2: invalid JSON: Expecting value (column {len(row('b')) - 9})"),
    ],
)
def test_a_row_run_stops_on_fails_validate_with_the_same_line(isolated, second, problem):
    data = isolated / "cases.jsonl"
    data.write_text(row("a") + "\n" + second + "\n" + row("c") + "\n")
    config = eval_config(isolated, data)
    line = _error_line(invoke("validate", config))
    assert line.startswith(f"{data}{problem}"), line
    assert _error_line(run(config)) == line


def test_validate_passes_good_rows_and_reads_a_shared_file_once(isolated, monkeypatch):
    from experiments import runner

    data = isolated / "cases.jsonl"
    data.write_text(row("a") + "\n" + row("b", context=CONTEXT + " Again.") + "\n")
    first, second = eval_config(isolated, data, name="one"), eval_config(isolated, data, name="two")
    reads = []
    real = runner.load_data
    monkeypatch.setattr(runner, "load_data", lambda config: reads.append(config.name) or real(config))
    result = invoke("validate", first, second)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"ok {first}", f"ok {second}"]
    assert reads == ["one"]
