"""A new report is one class: title, intro, sections (and figures); one writer renders Markdown and HTML, one
helper logs the folder to MLflow."""

import mlflow
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure

from experiments.report_page import Figure, Report, Section, log_report, to_markdown, write

HOSTILE = "<script>alert('x')</script>"


class TinyReport(Report):
    name = "tiny"
    title = "Tiny report"
    intro = "Two sections and a figure; `code` and **bold** in the intro."

    def sections(self) -> list[Section]:
        return [
            Section("Scores", ["model", "score"], [["a", "0.50"], [f"b{HOSTILE}", "0.25 | 0.30"]], note="A note."),
            Section("Curve", figure=Figure("curve.png", "the curve"), code="+ added\n- removed", code_language="diff"),
            Section("", ["x"], [], empty="Nothing here."),
        ]

    def figures(self):
        fig = MplFigure(figsize=(2, 2))
        FigureCanvasAgg(fig)
        fig.add_subplot().plot([0, 1], [0, 1])
        return {"curve.png": fig}


def test_a_report_class_is_written_as_markdown_and_html(tmp_path):
    written = write(TinyReport(), tmp_path)
    markdown = (tmp_path / "tiny.md").read_text()
    assert written.markdown == markdown and written.html_path == tmp_path / "tiny.html"
    assert markdown.startswith("# Tiny report\n")
    assert "## Scores" in markdown and "| model | score |" in markdown and "| a | 0.50 |" in markdown
    assert "0.25 \\| 0.30" in markdown  # a cell's pipe does not split the row
    assert "![the curve](curve.png)" in markdown and "```diff\n+ added\n- removed\n```" in markdown
    assert "Nothing here." in markdown and markdown.count("## ") == 2  # an untitled section has no heading
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"

    html = (tmp_path / "tiny.html").read_text()
    assert "<h1>Tiny report</h1>" in html and "<h2>Scores</h2>" in html and "<td>0.50</td>" in html
    assert "<code>code</code>" in html and "<b>bold</b>" in html
    assert 'src="data:image/png;base64,' in html  # the figure inlined: the page allows no other image source
    assert HOSTILE not in html and "&lt;script&gt;" in html
    assert "default-src 'none'" in html


def test_a_section_without_rows_says_so_and_one_without_a_header_has_no_table():
    markdown = to_markdown("t", "", [Section("Empty", ["a"], []), Section("Prose", note="Only words.")])
    assert "No data." in markdown and "Only words." in markdown and markdown.count("|") == 0


def test_the_written_report_is_logged_to_the_active_run(isolated, tmp_path):
    from experiments.tracking import setup_mlflow

    setup_mlflow()  # the test's own store (conftest's isolated)
    experiment = mlflow.create_experiment("pages", artifact_location=(tmp_path / "artifacts").as_uri())
    folder = tmp_path / "report"
    write(TinyReport(), folder)
    with mlflow.start_run(experiment_id=experiment) as run:
        log_report(folder)
    logged = {a.path for a in mlflow.MlflowClient().list_artifacts(run.info.run_id, "report")}
    assert logged == {"report/tiny.md", "report/tiny.html", "report/curve.png"}
