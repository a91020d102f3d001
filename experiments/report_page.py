"""A report as a title, an intro and sections of plain rows, rendered one way for every report: Markdown (read in
a terminal, a diff, a review), HTML (one self-contained page, figures inlined) and the folder logged to the
active MLflow run.

A new report is one subclass of `Report`: its title, intro and `sections()`, and the figures it draws, if any.
`write(report, folder)` writes <name>.md, <name>.html and the figures; `log_report(folder)` logs the folder.

Cells, notes and code hold model output and adversarial text: the HTML template is autoescaped and marks
nothing safe; Markdown escapes the one character that would break a table row (`|`) and puts a cell on one line.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "report_page.html"
# Markdown's inline code (`…`) and bold (**…**), which the HTML page shows as such on text already escaped.
_INLINE = ((re.compile(r"`([^`\n]+)`"), "code"), (re.compile(r"\*\*([^*\n]+)\*\*"), "b"))


@dataclass
class Figure:
    """An image a section shows: a file in the report's folder (written by `Report.figures`)."""

    file: str
    alt: str = ""


@dataclass
class Section:
    """One part of a report, shown in this order: heading, note, figure, table, code block, closing lines.

    A section without a title continues the one before it (a second table under the same heading). A section
    without a header has no table; one with a header and no rows says `empty` instead."""

    title: str
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""
    level: int = 2
    empty: str = "No data."
    extra: list[str] = field(default_factory=list)  # lines after the table
    figure: Figure | None = None
    code: str = ""
    code_language: str = ""


class Report:
    """What a report is: override `title`, `intro` and `sections` (and `figures` when it draws any)."""

    name = "report"  # the files' stem: <name>.md and <name>.html
    title = ""
    intro = ""
    links: Sequence[tuple[str, str]] = ()  # (href, label) shown under the HTML page's intro

    def sections(self) -> list[Section]:
        raise NotImplementedError

    def figures(self) -> Mapping[str, Any]:
        """File name -> a matplotlib Figure, saved into the folder before the pages are rendered."""
        return {}


@dataclass
class Written:
    """Where `write` put a report, and its Markdown (what a run prints at its end)."""

    markdown: str
    markdown_path: Path
    html_path: Path
    figure_paths: list[Path] = field(default_factory=list)


def write(report: Report, folder: Path) -> Written:
    """The report's figures, then <name>.md and <name>.html, into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    figures = []
    for file, figure in report.figures().items():
        figure.savefig(folder / file, format="png")
        figures.append(folder / file)
    parts = report.sections()
    markdown = to_markdown(report.title, report.intro, parts)
    md_path, html_path = folder / f"{report.name}.md", folder / f"{report.name}.html"
    md_path.write_text(markdown, encoding="utf-8")
    html_path.write_text(to_html(report.title, report.intro, parts, report.links, folder), encoding="utf-8")
    return Written(markdown, md_path, html_path, figures)


def log_report(folder: Path, artifact_path: str = "report", run_id: str | None = None) -> None:
    """Every file of the report's folder (pages, figures, and whatever else the report keeps there) as
    artifacts of the active MLflow run, or of `run_id` (a run that may have finished)."""
    import mlflow

    if run_id is None:
        mlflow.log_artifacts(str(folder), artifact_path=artifact_path)
    else:
        mlflow.MlflowClient().log_artifacts(run_id, str(folder), artifact_path=artifact_path)


def _cell(text: Any) -> str:
    # A line break ends a Markdown table row; passages and answers have them.
    return str(text).replace("|", "\\|").replace("\n", " ")


def _markdown_section(s: Section) -> list[str]:
    lines = ["#" * s.level + " " + s.title, ""] if s.title else []
    if s.note:
        lines += [s.note, ""]
    if s.figure:
        lines += [f"![{s.figure.alt}]({s.figure.file})", ""]
    if s.header and s.rows:
        lines.append("| " + " | ".join(s.header) + " |")
        lines.append("|" + "---|" * len(s.header))
        lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in s.rows]
        lines.append("")
    elif s.header:
        lines += [s.empty, ""]
    if s.code:
        lines += [f"```{s.code_language}", s.code, "```", ""]
    if s.extra:
        lines += [*s.extra, ""]
    return lines


def to_markdown(title: str, intro: str, parts: Sequence[Section]) -> str:
    lines = [f"# {title}", ""] + ([intro, ""] if intro else [])
    for s in parts:
        lines += _markdown_section(s)
    return "\n".join(lines)


def _inline(paragraph: str) -> Markup:
    html = str(escape(paragraph))
    for pattern, tag in _INLINE:
        html = pattern.sub(lambda m, tag=tag: f"<{tag}>{m.group(1)}</{tag}>", html)
    return Markup(html)


def _prose(text: str) -> list[Markup]:
    """A note's paragraphs, escaped, with Markdown's inline code and bold shown as such."""
    return [_inline(p.strip()) for p in text.split("\n\n") if p.strip()]


def _image(folder: Path | None, figure: Figure | None) -> str:
    """The figure inlined as a data: URI (the page's Content-Security-Policy allows no other image source)."""
    if figure is None or folder is None or not (folder / figure.file).exists():
        return ""
    return "data:image/png;base64," + base64.b64encode((folder / figure.file).read_bytes()).decode("ascii")


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)


def to_html(
    title: str,
    intro: str,
    parts: Sequence[Section],
    links: Sequence[tuple[str, str]] = (),
    folder: Path | None = None,
) -> str:
    shown = [
        {"s": s, "note": _prose(s.note), "image": _image(folder, s.figure), "extra": [_prose(x) for x in s.extra]}
        for s in parts
    ]
    return _environment().get_template(TEMPLATE).render(title=title, intro=_prose(intro), sections=shown, links=links)
