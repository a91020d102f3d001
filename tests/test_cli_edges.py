"""Edges of the command line met against providers: a `--target` name two targets share, and long labels alike up
to the width of an 80-column terminal."""

from types import SimpleNamespace

from rich.console import Console
from typer.testing import CliRunner

from experiments import cli
from experiments.cli import app

TWO_SERVERS = """\
name: two-servers
task: evaluate
data: {source: nq, limit: 2}
models:
  targets:
    - {name: openai/fake-model, api_base: "http://127.0.0.1:8001/v1"}
    - {name: openai/fake-model, api_base: "http://127.0.0.1:8002/v1"}
    - {name: qwen2.5-0.5b}
"""
LABELS = ("openai/fake-model@127.0.0.1:8001", "openai/fake-model@127.0.0.1:8002")


def test_a_target_name_two_targets_share_is_refused_with_their_labels(isolated, tmp_path):
    config = tmp_path / "two.yaml"
    config.write_text(TWO_SERVERS)
    result = CliRunner().invoke(app, ["run", str(config), "--target", "openai/fake-model"])
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())  # the terminal may wrap the one line
    assert "--target openai/fake-model: 2 targets share that name; choose by label:" in message
    assert all(label in message for label in LABELS)
    assert not (isolated / "runs").exists() or not any((isolated / "runs").iterdir())  # nothing ran

    loaded = cli._only_targets(_config(config), [LABELS[1]])
    assert [t.label for t in loaded.models.targets] == [LABELS[1]]  # a label picks its one target
    loaded = cli._only_targets(_config(config), ["qwen2.5-0.5b"])
    assert [t.label for t in loaded.models.targets] == ["qwen2.5-0.5b"]  # a name no other target has still works


def _config(path):
    from experiments.config_loader import load_config

    return load_config(str(path))


def test_labels_alike_up_to_the_column_width_are_never_cut_to_one_string(isolated, monkeypatch):
    console = Console(width=80, record=True)
    monkeypatch.setattr(cli, "console", console)
    header = ["target", "setting", "decoding", "variant", "accuracy", "n", "errors", "note"]
    rows = [[label, "open_book", "greedy", "perturbed", "0.50 [0.10, 0.90]", "10", "0", "x"] for label in LABELS]
    task = SimpleNamespace(table_rows=lambda records: (header, rows))
    metrics = {f"acc.{label}.open_book.greedy.perturbed": 0.5 for label in LABELS}
    result = SimpleNamespace(
        run_id="r", records=[], metrics=metrics, task=task, new_cases=0, seconds=0.0, mlflow_run_id="m", notes=[]
    )
    cli._print_result(result)
    text = console.export_text()
    assert "…" not in text
    # A folded cell continues on the next lines of its column: its pieces, read down the column, are the label.
    run_table = text.split("└")[0]
    first_column = [line.split("│")[1].strip() for line in run_table.splitlines() if line.startswith("│")]
    cells, current = [], ""
    for piece in first_column:
        if piece.startswith("openai/") and current:
            cells.append(current)
            current = ""
        current += piece
    cells.append(current)
    assert cells == list(LABELS)
    assert all(f"acc.{label}.open_book" in text for label in LABELS)  # the metrics table keeps them whole too


def test_validity_figures_naming_labels_alike_are_never_cut_to_one_string(monkeypatch):
    from experiments.validity import render

    # Two figures that differ only after the label: cut at the column's width, both would end in "…".
    figures = [
        f"attack success on valid cases, {LABELS[0]}.open_book.{decoding} — prediction-powered"
        for decoding in ("greedy", "sampled")
    ]
    rows = [{"figure": f, "estimate": 0.5, "low": 0.1, "high": 0.9, "n": 10, "note": ""} for f in figures]
    monkeypatch.setattr(render, "validity_rows", lambda rv: rows)
    console = Console(width=80, record=True)
    console.print(render.rich_table(SimpleNamespace(run_id="r")))
    text = console.export_text()
    assert "…" not in text
    column = "".join(line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│"))
    assert all(f.replace(" ", "") in column.replace(" ", "") for f in figures)
