"""Self-contained HTML report of a target evaluation, with its plots also saved as PNG files.

The report shows: run information, accuracy before/after perturbation per target and prompt
setting (bar chart with bootstrap intervals and tables; rows of a benchmark file evaluated as
given, without an original, are the variant "external"), normalised accuracy, every metric side
by side, the generator x target transfer matrix, rank changes, breakdowns by source and by
answer position, the task instruction's effect on original contexts, errors, and a seeded
sample of cases with the original and perturbed contexts and every target's answers.

The page is rendered from Jinja2 templates (experiments/templates/report*.html) with
autoescaping: the cases are adversarial by construction and model outputs are arbitrary text,
so every value that comes from data, models or the run configuration is escaped on its way into
the page (with html.escape's entities), and no template marks a value safe. The page forbids
scripts through its Content-Security-Policy as a second line of defence. This module prepares
plain values (formatted numbers, cell classes); the templates hold all markup. Plots are drawn
on matplotlib Figure objects with the Agg canvas, which touches no global pyplot state and
needs no display.
"""

from __future__ import annotations

import base64
import html
import io
import json
import logging
import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from experiments import task_registry
from metrics.evaluation import (
    accuracy_table,
    breakdown,
    error_counts,
    normalised_accuracy,
    paired_drop,
    sycophancy,
)
from metrics.scores import (
    ADVERSARIAL_VARIANTS,
    LABELS,
    SCORE_NAMES,
    error_kind,
    expected_answers,
    is_error,
    score_record,
)
from metrics.transfer import rank_changes, transfer_matrix

log = logging.getLogger(__name__)

TEMPLATES = Path(__file__).resolve().parent / "templates"
REPORT_FILE = "report.html"
TABLES_FILE = "report_tables.json"
VARIANT_COLORS: dict[str, str] = {"original": "#4c78a8", "perturbed": "#e45756", "external": "#72b7b2"}
_SETTING_ORDER = ("closed_book", "open_book", "few_shot", "opinion", "cot", "task_instruction")


# --- formatting -------------------------------------------------------------------------------------


def _escape(value: Any) -> Markup:
    """The templates' escaping: html.escape (quotes too, as &quot; and &#x27;) of anything not
    already markup; None is empty. Jinja's autoescaping then leaves the Markup as it is."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        finalize=_escape,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _num(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _ci(row: Mapping[str, Any]) -> str:
    low, high = row.get("low"), row.get("high")
    if low is None or (isinstance(low, float) and math.isnan(low)):
        return "—"
    return f"[{_num(low)}, {_num(high)}]"


def _table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]], *, empty: str) -> dict[str, Any]:
    """A table for the template from row dicts; columns are (key, header); key "ci" renders low/high.
    Each cell is its text and its class (num or txt)."""
    body = []
    for row in rows:
        cells = []
        for key, _ in columns:
            if key == "ci":
                text = _ci(row)
            elif key == "kinds":
                text = ", ".join(f"{k}: {v}" for k, v in (row.get("kinds") or {}).items()) or "—"
            else:
                text = _num(row.get(key))
            numeric = isinstance(row.get(key), int | float) or key == "ci"
            cells.append({"cls": "num" if numeric else "txt", "text": text})
        body.append(cells)
    return {"headers": [header for _, header in columns], "rows": body, "empty": empty}


def _mpl(text: Any) -> str:
    # Matplotlib parses $...$ as mathtext; data never means that.
    return str(text).replace("$", r"\$")


def _setting_rank(setting: Any) -> tuple:
    return (_SETTING_ORDER.index(setting) if setting in _SETTING_ORDER else len(_SETTING_ORDER), str(setting))


# --- tables ------------------------------------------------------------------------------------------


def _transfer_view(records: Sequence[Mapping[str, Any]]) -> tuple[str | None, str | None]:
    """The (setting, decoding) the transfer heatmap shows: open_book/greedy if present, else the
    combination with the most perturbed generated cases."""
    combos = Counter(
        (r.get("setting"), r.get("decoding")) for r in records if r.get("variant") == "perturbed" and r.get("generator")
    )
    if not combos:
        return (None, None)
    if ("open_book", "greedy") in combos:
        return ("open_book", "greedy")
    return combos.most_common(1)[0][0]


def scored_records(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Records with their scores: those not yet scored (no "correct" field) are scored without NLI. A record
    stored before records said what their task expects is told it from the registry."""
    told = (
        r if "task_answer" in r else {**r, "task_answer": task_registry.task_answer(r.get("task", ""))} for r in records
    )
    return [r if "correct" in r else score_record(r) for r in told]


def report_tables(scored: Sequence[Mapping[str, Any]], metric: str = "task_correct") -> dict[str, Any]:
    """Every table the report shows, as plain dicts and lists (also written as JSON)."""
    setting, decoding = _transfer_view(scored)
    metrics_present = [m for m in SCORE_NAMES if any(r.get(m) is not None for r in scored if not is_error(r))]
    per_metric = {
        m: accuracy_table(scored, metric=m, by=("task", "target", "setting", "decoding", "variant"))
        for m in metrics_present
    }
    return {
        "metric": metric,
        "accuracy": accuracy_table(scored, metric=metric),
        "paired_drop": paired_drop(scored, metric),
        "normalised": normalised_accuracy(scored, metric),
        "per_metric": per_metric,
        "transfer": transfer_matrix(scored, metric, setting=setting, decoding=decoding),
        "transfer_drop": transfer_matrix(scored, metric, value="drop", setting=setting, decoding=decoding),
        "ranks": rank_changes(scored, metric),
        "by_source": breakdown(scored, "source", metric=metric),
        "by_position": breakdown(scored, "answer_position", metric=metric),
        "sycophancy": sycophancy(scored, "correct"),
        "errors": error_counts(scored, by=("target", "setting", "decoding")),
    }


def jsonable(obj: Any) -> Any:
    """NaN is not JSON: an undefined figure is written as null."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    return obj


# --- plots -------------------------------------------------------------------------------------------


def _new_figure(width: float, height: float):
    # Figure + Agg canvas, not pyplot: no global backend switch, nothing to leak between calls.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path) -> str:
    """Write the PNG and return it base64-encoded for embedding."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    fig.clear()
    data = buf.getvalue()
    path.write_bytes(data)
    return base64.b64encode(data).decode("ascii")


def accuracy_figure(rows: Sequence[Mapping[str, Any]], metric: str):
    """Bars of accuracy with their intervals, one panel per setting and decoding, one bar per target
    and variant (original, perturbed, and external: a file's rows evaluated as given); None
    without scored rows."""
    combos = {(r["setting"], r["decoding"]) for r in rows if r["n"]}
    panels = sorted(combos, key=lambda p: (_setting_rank(p[0]), str(p[1])))
    if not panels:
        return None
    targets = sorted({r["target"] for r in rows if r["n"]}, key=str)
    variants = [v for v in VARIANT_COLORS if any(r["variant"] == v and r["n"] for r in rows)]
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = _new_figure(max(4.5, 1.1 * len(targets) + 2) * ncols, 3.4 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    width = 0.76 / len(variants)
    index = {(r["target"], r["setting"], r["decoding"], r["variant"]): r for r in rows}
    for ax, (setting, decoding) in zip(axes.flat, panels, strict=False):
        for j, variant in enumerate(variants):
            xs, ys, lo, hi = [], [], [], []
            for i, target in enumerate(targets):
                row = index.get((target, setting, decoding, variant))
                if not row or not row["n"]:
                    continue
                xs.append(i + (j - (len(variants) - 1) / 2) * width)
                ys.append(row["rate"])
                lo.append(max(0.0, row["rate"] - row["low"]))
                hi.append(max(0.0, row["high"] - row["rate"]))
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, color=VARIANT_COLORS[variant], label=variant)
        ax.set_xticks(range(len(targets)), [_mpl(t) for t in targets], rotation=20, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_title(_mpl(f"{setting} · {decoding}"), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    axes[0][0].set_ylabel(_mpl(LABELS.get(metric, metric)))
    # Explicit handles: a panel with no perturbed bars (closed-book) would give the legend a default colour.
    from matplotlib.patches import Patch

    axes[0][0].legend(handles=[Patch(color=VARIANT_COLORS[v], label=v) for v in variants], fontsize=8)
    return fig


def _plot_accuracy(rows: Sequence[Mapping[str, Any]], metric: str, path: Path) -> str | None:
    fig = accuracy_figure(rows, metric)
    return None if fig is None else _save(fig, path)


def _plot_transfer(matrix: Mapping[str, Any], path: Path) -> str | None:
    rows, cols = matrix["rows"], matrix["cols"]
    if not rows or not cols:
        return None
    from matplotlib.patches import Rectangle

    values = [[matrix["cells"][g][t]["value"] for t in cols] for g in rows]
    fig = _new_figure(1.4 * len(cols) + 2.5, 0.9 * len(rows) + 1.8)
    ax = fig.subplots()
    image = ax.imshow(values, cmap="RdYlGn", vmin=0.0, vmax=1.0, aspect="auto")
    fig.colorbar(image, ax=ax, label="perturbed accuracy")
    for i, gen in enumerate(rows):
        for j, target in enumerate(cols):
            cell = matrix["cells"][gen][target]
            text = "—" if not cell["n"] else f"{cell['value']:.2f}\nn={cell['n']}"
            ax.text(j, i, text, ha="center", va="center", fontsize=8)
            if cell["self_attack"]:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=2.5, ec="black"))
    ax.set_xticks(range(len(cols)), [_mpl(c) for c in cols], rotation=20, ha="right")
    ax.set_yticks(range(len(rows)), [_mpl(r) for r in rows])
    ax.set_xlabel("target")
    ax.set_ylabel("generator (pivot)")
    ax.set_title(_mpl(f"{matrix['setting'] or 'all settings'} · {matrix['decoding'] or 'all decodings'}"), fontsize=10)
    return _save(fig, path)


def _plot_ranks(rows: Sequence[Mapping[str, Any]], path: Path) -> str | None:
    groups: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["setting"], r["decoding"])].append(r)
    panels = sorted(groups, key=lambda p: (_setting_rank(p[0]), str(p[1])))
    if not panels:
        return None
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = _new_figure(4.2 * ncols, 3.0 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    targets = sorted({r["target"] for r in rows}, key=str)
    palette = [f"C{i % 10}" for i in range(len(targets))]  # one colour per target in every panel
    for ax, key in zip(axes.flat, panels, strict=False):
        n = len(groups[key])
        for r in groups[key]:
            ax.plot(
                [0, 1], [r["rank_original"], r["rank_perturbed"]], marker="o", color=palette[targets.index(r["target"])]
            )
        # Tied targets share a point: label it once with all their names.
        for x, field, ha, dx in ((0, "rank_original", "right", -6), (1, "rank_perturbed", "left", 6)):
            names: dict[float, list[str]] = defaultdict(list)
            for r in groups[key]:
                names[r[field]].append(str(r["target"]))
            for rank, who in names.items():
                ax.annotate(
                    _mpl(", ".join(sorted(who))),
                    (x, rank),
                    xytext=(dx, 0),
                    textcoords="offset points",
                    ha=ha,
                    va="center",
                    fontsize=8,
                )
        ax.set_xlim(-1.2, 2.2)
        ax.set_ylim(n + 0.5, 0.5)
        ax.set_xticks([0, 1], ["original", "perturbed"])
        ax.set_yticks(range(1, n + 1))
        ax.set_ylabel("rank (1 = best)")
        ax.set_title(_mpl(f"{key[0]} · {key[1]}"), fontsize=10)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    return _save(fig, path)


# --- case sample -------------------------------------------------------------------------------------


def _mark(record: Mapping[str, Any], metric: str) -> tuple[str, str]:
    if is_error(record):
        return ("err", f"error: {error_kind(record)}")
    value = record.get(metric)
    if value is None:
        return ("na", "n/a")
    return ("ok", "right") if float(value) >= 1.0 else ("bad", "wrong")


def _context_box(label: str, record: Mapping[str, Any]) -> dict[str, Any]:
    options = [
        (o.get("label", ""), o.get("text", "")) if isinstance(o, Mapping) else (chr(65 + i), o)
        for i, o in enumerate(record.get("options") or [])
    ]
    return {
        "label": label,
        "expected": ", ".join(expected_answers(record)),
        "options": options,
        "answer_label": record.get("answer_label"),
        "context": record.get("context"),
    }


def _sample_cases(scored: Sequence[Mapping[str, Any]], metric: str, size: int, seed: int) -> dict[str, Any]:
    """A seeded sample of seeds with adversarial (perturbed or external) cases: each with its
    contexts side by side and every target's answer to each."""
    by_seed: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for r in scored:
        by_seed[(str(r.get("task")), str(r.get("seed_id")))].append(r)
    keys = sorted(k for k, rs in by_seed.items() if any(r.get("variant") in ADVERSARIAL_VARIANTS for r in rs))
    if not keys:
        return {"cases": [], "empty": "No perturbed cases."}
    chosen = sorted(random.Random(seed).sample(keys, min(size, len(keys))))
    cases = []
    for task, seed_id in chosen:
        records = by_seed[(task, seed_id)]
        first = records[0]
        # Columns: the original, then each perturbed case (by case id), each with its context.
        columns: dict[str, Mapping[str, Any]] = {}
        # A record that carries its context (closed-book ones may not) shows it.
        ranked = sorted(
            records, key=lambda r: (r.get("variant") != "original", str(r.get("case_id")), not r.get("context"))
        )
        for r in ranked:
            col = "original" if r.get("variant") == "original" else str(r.get("case_id"))
            columns.setdefault(col, r)
        boxes = [
            _context_box(col if col == "original" else f"{col} (generator: {r.get('generator') or '—'})", r)
            for col, r in columns.items()
        ]
        answers: dict[tuple, dict[str, Mapping[str, Any]]] = defaultdict(dict)
        for r in records:
            col = "original" if r.get("variant") == "original" else str(r.get("case_id"))
            answers[(str(r.get("target")), str(r.get("setting")), str(r.get("decoding")))][col] = r
        rows = []
        for target, setting, decoding in sorted(answers, key=lambda k: (k[0], _setting_rank(k[1]), k[2])):
            cells = []
            for col in columns:
                r = answers[(target, setting, decoding)].get(col)
                if r is None:
                    cells.append(None)
                    continue
                cls, word = _mark(r, metric)
                cells.append({"cls": cls, "prediction": r.get("prediction"), "word": word})
            rows.append({"target": target, "setting": setting, "decoding": decoding, "cells": cells})
        cases.append(
            {
                "heading": f"{task} · seed {seed_id} · source {first.get('source')}",
                "question": first.get("question"),
                "boxes": boxes,
                "columns": list(columns),
                "rows": rows,
            }
        )
    intro = f"{len(chosen)} of {len(keys)} seeds with perturbed cases, sampled with seed {seed}."
    return {"cases": cases, "intro": intro}


# --- page ---------------------------------------------------------------------------------------------


def _pairs(info: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(k), v if isinstance(v, str) else json.dumps(v, default=str)) for k, v in info.items()]


def _validity_view(validity: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if validity is None:
        return None
    columns = [("figure", "figure"), ("estimate", "estimate"), ("ci", "95% CI"), ("n", "reviewed n"), ("note", "note")]
    rows = [
        {**row, "figure": str(row.get("figure", "")), "note": str(row.get("note") or "")}
        for row in validity.get("rows") or []
    ]
    return {
        "run_id": validity.get("run_id"),
        "statement": validity.get("statement"),
        "table": _table(rows, columns, empty="No validity figures."),
        "notes": list(validity.get("notes") or []),
    }


def write_report(
    records: Iterable[Mapping[str, Any]],
    out_dir: str | Path,
    *,
    title: str,
    run_info: Mapping[str, Any] | None = None,
    metric: str = "task_correct",
    sample_size: int = 20,
    seed: int = 0,
    validity: Mapping[str, Any] | None = None,
    tables: Mapping[str, Any] | None = None,
) -> Path:
    """Write out_dir/report.html (self-contained: PNGs embedded as base64), the plots as PNG files
    (accuracy.png, transfer.png, ranks.png when there is data for them) and report_tables.json.

    Records not yet scored (no "correct" field) are scored here without NLI. `metric` is the
    headline score of the accuracy, transfer, rank and breakdown sections (default task_correct:
    keywords for unanswerable/inconsistent, option choice for counterfactual, else correct).
    `validity` (from `experiments.validity.report_section`) adds a validity section: the
    statement, its table and notes. `tables` are `report_tables(scored_records(records), metric)`
    when the caller has them already (they are what the page shows). Returns the path of report.html.
    """
    run_info = dict(run_info or {})
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    scored = scored_records(records)
    tables = dict(tables) if tables is not None else report_tables(scored, metric)
    label = LABELS.get(metric, metric)

    acc_png = _plot_accuracy(tables["accuracy"], metric, out / "accuracy.png")
    transfer_png = _plot_transfer(tables["transfer"], out / "transfer.png")
    ranks_png = _plot_ranks(tables["ranks"], out / "ranks.png")
    (out / TABLES_FILE).write_text(json.dumps(jsonable(tables), indent=1, default=str), encoding="utf-8")

    n_err = sum(is_error(r) for r in scored)
    overview = _overview(scored)
    transfer = tables["transfer"]
    page = (
        _environment()
        .get_template("report.html")
        .render(
            title=title,
            generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            label=label,
            nli_backend=run_info.get("nli_backend"),
            has_entailment=any(r.get("entailment") is not None for r in scored),
            run_info=_pairs(run_info),
            overview=_pairs(overview),
            validity=_validity_view(validity),
            has_external=any(r.get("variant") == "external" for r in scored),
            images={"accuracy": acc_png, "transfer": transfer_png, "ranks": ranks_png},
            **_page_tables(tables, label),
            transfer_view=f"{transfer['setting'] or 'all settings'} · {transfer['decoding'] or 'all decodings'}",
            sample=_sample_cases(scored, metric, sample_size, seed),
        )
    )
    path = out / REPORT_FILE
    path.write_text(page, encoding="utf-8")
    log.info("wrote report %s (%d records, %d errored)", path, len(scored), n_err)
    return path


def _overview(scored: list[dict]) -> dict[str, Any]:
    """What the records cover: counts and the distinct tasks, targets, generators, settings and sources."""
    return {
        "records": len(scored),
        "errored records": sum(is_error(r) for r in scored),
        "tasks": sorted({str(r.get("task")) for r in scored}),
        "targets": sorted({str(r.get("target")) for r in scored}),
        "generators": sorted({str(r.get("generator")) for r in scored if r.get("generator")}),
        "settings": sorted({str(r.get("setting")) for r in scored}, key=_setting_rank),
        "decodings": sorted({str(r.get("decoding")) for r in scored}),
        "sources": sorted({str(r.get("source")) for r in scored}),
    }


_GROUP = [("target", "target"), ("setting", "setting"), ("decoding", "decoding")]
_DROP_COLUMNS = [
    ("task", "task"),
    *_GROUP,
    ("original", "original"),
    ("perturbed", "perturbed"),
    ("drop", "drop"),
    ("ci", "95% CI of drop"),
    ("n", "paired seeds"),
    ("errors", "errored pairs"),
]
_NORMALISED_COLUMNS = [
    ("task", "task"),
    *_GROUP,
    ("rate", "normalised accuracy"),
    ("ci", "95% CI"),
    ("n", "n"),
    ("originals_right", "originals right"),
    ("originals", "originals scored"),
    ("errors", "errors"),
]
_RANK_COLUMNS = [
    ("setting", "setting"),
    ("decoding", "decoding"),
    ("target", "target"),
    ("original", "original acc."),
    ("perturbed", "perturbed acc."),
    ("rank_original", "rank before"),
    ("rank_perturbed", "rank after"),
    ("change", "rank change"),
]
_SYCOPHANCY_COLUMNS = [
    ("task", "task"),
    ("target", "target"),
    ("decoding", "decoding"),
    ("open_book", "open book"),
    ("task_instruction", "with task instruction"),
    ("change", "change"),
    ("ci", "95% CI"),
    ("n", "seeds"),
    ("errors", "errors"),
]
_TRANSFER_COLUMNS = [
    ("generator", "generator"),
    ("target", "target"),
    ("value", "perturbed acc."),
    ("ci", "95% CI"),
    ("n", "n"),
    ("drop", "drop vs original"),
    ("self_attack", "self-attack"),
    ("errors", "errors"),
]
_ERROR_COLUMNS = [
    ("target", "target"),
    ("setting", "setting"),
    ("decoding", "decoding"),
    ("records", "records"),
    ("errors", "errors"),
    ("kinds", "kinds"),
]


def _accuracy_columns(label: str) -> list[tuple[str, str]]:
    """The accuracy table's columns; the rate is headed by the report's metric."""
    return [*_GROUP, ("variant", "variant"), ("rate", label), ("ci", "95% CI"), ("n", "n"), ("errors", "errors")]


def _transfer_rows(tables: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per generator × target cell of the transfer matrix, with its drop from the original."""
    transfer = tables["transfer"]
    return [
        {
            "generator": g,
            "target": t,
            **transfer["cells"][g][t],
            "drop": tables["transfer_drop"]["cells"].get(g, {}).get(t, {}).get("value"),
        }
        for g in transfer["rows"]
        for t in transfer["cols"]
    ]


def _metric_sections(tables: Mapping[str, Any], acc_cols: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """One accuracy table per metric, each headed by that metric's label."""
    return [
        {
            "label": LABELS.get(m, m),
            "table": _table(
                rows,
                [
                    ("task", "task"),
                    *acc_cols[:4],
                    ("rate", LABELS.get(m, m)),
                    ("ci", "95% CI"),
                    ("n", "n"),
                    ("errors", "errors"),
                ],
                empty="No data.",
            ),
        }
        for m, rows in tables["per_metric"].items()
    ]


def _page_tables(tables: Mapping[str, Any], label: str) -> dict[str, Any]:
    """The report's tables as the template shows them: `tables` and `metric_sections`."""
    acc_cols = _accuracy_columns(label)
    return {
        "metric_sections": _metric_sections(tables, acc_cols),
        "tables": {
            "accuracy": _table(tables["accuracy"], acc_cols, empty="No scored records."),
            "paired_drop": _table(
                tables["paired_drop"], _DROP_COLUMNS, empty="No seed has an original and a perturbed result."
            ),
            "normalised": _table(tables["normalised"], _NORMALISED_COLUMNS, empty="No paired seeds."),
            "transfer": _table(_transfer_rows(tables), _TRANSFER_COLUMNS, empty="No generated perturbed cases."),
            "ranks": _table(tables["ranks"], _RANK_COLUMNS, empty="No targets to rank."),
            "by_source": _table(
                tables["by_source"], [*acc_cols[:4], ("source", "source"), *acc_cols[4:]], empty="No data."
            ),
            "by_position": _table(
                tables["by_position"],
                [*acc_cols[:4], ("answer_position", "answer position"), *acc_cols[4:]],
                empty="No data.",
            ),
            "sycophancy": _table(
                tables["sycophancy"],
                _SYCOPHANCY_COLUMNS,
                empty="No seed was evaluated both open-book and with the task instruction.",
            ),
            "errors": _table(tables["errors"], _ERROR_COLUMNS, empty="No records."),
        },
    }
