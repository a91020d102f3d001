"""The bench report: bench.md (printed at the end of a run), bench.html, bench_tables.json, every
evaluation record with its scores (scores.jsonl) and the evaluation report of every record
(details/report.html: accuracy plots, every metric, breakdowns, a sample of cases), all logged to
MLflow under report/."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.bench.render import drop_cell, sections
from experiments.bench.tables import bench_tables, main_metrics
from experiments.report import jsonable, scored_records, write_report
from experiments.report_page import Report, Section, write

logger = logging.getLogger(__name__)

PAGE = "bench"
MARKDOWN_FILE = f"{PAGE}.md"
HTML_FILE = f"{PAGE}.html"
TABLES_FILE = "bench_tables.json"
SCORES_FILE = "scores.jsonl"
# Left out of scores.jsonl: the evidence is the stage's (runs/<id>/<stage>/cases.jsonl) and would make the
# file tens of MB at 40 cases a cell.
SCORES_DROPPED = ("context",)
DETAILS_DIR = "details"


@dataclass
class BenchReport:
    """What a finished bench hands back: the report's files, its markdown and its flat metrics."""

    dir: Path
    markdown: str
    metrics: dict[str, float] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)

    def table_rows(self, records=None) -> tuple[list[str], list[list[str]]]:
        """The main table, for callers that print a table of a run."""

        tasks = self.tables.get("tasks", [])
        rows = [
            [target, *(drop_cell(cells.get(task)) for task in tasks)]
            for target, cells in self.tables.get("main", {}).items()
        ]
        return ["target", *tasks], rows


class BenchPage(Report):
    """The bench's page: its run, the intervals it shows, then the sections (experiments.bench.render) and any
    the run adds (the knowledge conflict's)."""

    name = PAGE
    links = ((f"{DETAILS_DIR}/report.html", "every metric, breakdowns and cases"),)

    def __init__(self, parts: Sequence[Section], *, run_info: Mapping[str, Any], targets: Sequence[str]):
        self.parts = list(parts)
        self.title = f"reeval bench — {run_info.get('run_id', '')}"
        self.intro = (
            f"Config {run_info.get('config', '')}, commit {run_info.get('git.commit', '?')[:12]}"
            f"{' (dirty)' if run_info.get('git.dirty') == 'true' else ''}. Targets: {', '.join(targets)}. "
            "Intervals: 95% percentile bootstrap over seeds (1000 resamples, seed 0). Errored answers are "
            "counted apart, never scored as wrong."
        )

    def sections(self) -> list[Section]:
        return self.parts


def write_bench_report(
    out_dir: Path,
    records: Sequence[Mapping[str, Any]],
    *,
    tasks: Sequence[str],
    targets: Sequence[str],
    headline: str,
    tasks_info: Sequence[Mapping[str, Any]],
    stages: Sequence[Mapping[str, Any]],
    sharing: Mapping[str, Any],
    run_info: Mapping[str, Any],
    extra_sections: Sequence[Section] = (),
) -> BenchReport:
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = bench_tables(records, tasks=tasks, targets=targets, headline=headline)
    page = BenchPage(
        [*sections(tables, tasks_info, stages, sharing), *extra_sections], run_info=run_info, targets=targets
    )
    markdown = write(page, out_dir).markdown
    payload = {"tables": tables, "tasks": list(tasks_info), "stages": list(stages), "sharing": dict(sharing)}
    (out_dir / TABLES_FILE).write_text(json.dumps(jsonable(payload), indent=1, default=str), encoding="utf-8")
    scored = scored_records(records)
    with (out_dir / SCORES_FILE).open("w", encoding="utf-8") as f:
        for record in scored:
            row = {k: v for k, v in record.items() if k not in SCORES_DROPPED}
            f.write(json.dumps(jsonable(row), default=str) + "\n")
    if records:
        write_report(scored, out_dir / DETAILS_DIR, title=f"{page.title}: every evaluation", run_info=dict(run_info))
    logger.info("wrote bench report %s", out_dir / HTML_FILE)
    return BenchReport(out_dir, markdown, main_metrics(tables), tables)
