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

from experiments.bench.render import drop_cell, sections, to_html, to_markdown
from experiments.bench.tables import bench_tables, main_metrics
from experiments.report import jsonable, scored_records, write_report

logger = logging.getLogger(__name__)

MARKDOWN_FILE = "bench.md"
HTML_FILE = "bench.html"
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
    extra_sections: Sequence[Any] = (),
) -> BenchReport:
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = bench_tables(records, tasks=tasks, targets=targets, headline=headline)
    parts = [*sections(tables, tasks_info, stages, sharing), *extra_sections]
    title = f"reeval bench — {run_info.get('run_id', '')}"
    intro = (
        f"Config {run_info.get('config', '')}, commit {run_info.get('git.commit', '?')[:12]}"
        f"{' (dirty)' if run_info.get('git.dirty') == 'true' else ''}. Targets: {', '.join(targets)}. "
        "Intervals: 95% percentile bootstrap over seeds (1000 resamples, seed 0). Errored answers are "
        "counted apart, never scored as wrong."
    )
    markdown = to_markdown(title, intro, parts)
    (out_dir / MARKDOWN_FILE).write_text(markdown, encoding="utf-8")
    details = out_dir / DETAILS_DIR
    (out_dir / HTML_FILE).write_text(
        to_html(title, intro, parts, [(f"{DETAILS_DIR}/report.html", "every metric, breakdowns and cases")]),
        encoding="utf-8",
    )
    payload = {"tables": tables, "tasks": list(tasks_info), "stages": list(stages), "sharing": dict(sharing)}
    (out_dir / TABLES_FILE).write_text(json.dumps(jsonable(payload), indent=1, default=str), encoding="utf-8")
    scored = scored_records(records)
    with (out_dir / SCORES_FILE).open("w", encoding="utf-8") as f:
        for record in scored:
            row = {k: v for k, v in record.items() if k not in SCORES_DROPPED}
            f.write(json.dumps(jsonable(row), default=str) + "\n")
    if records:
        write_report(scored, details, title=f"{title}: every evaluation", run_info=dict(run_info))
    logger.info("wrote bench report %s", out_dir / HTML_FILE)
    return BenchReport(out_dir, markdown, main_metrics(tables), tables)
