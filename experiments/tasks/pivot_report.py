"""A pivot comparison's report: `comparison.md`, `.html` and `.json`, the generator x target matrix beside the cost per
valid case, and validity against attack success per row."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from experiments.report_page import Figure, Report, Section, write
from metrics.attack import format_rate


def _num(x: float, digits: int = 2) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _read(read: dict[str, Any] | None) -> str:
    if not read:
        return "not read"
    return f"{read['estimate']:.2f} [{read['low']:.2f}, {read['high']:.2f}] ({read['valid']}/{read['read']} read)"


def _dollars(row: dict[str, Any]) -> str:
    if row.get("dollars_per_valid") is not None:
        return f"{row['dollars_per_valid']:.6f}"
    # A row with no token count has no bill to price: unknown, not unpriced.
    return "no price" if row.get("dollars") is None and row.get("tokens") is not None else "—"


def main_rows(per_row: dict[str, dict], targets: list[str]) -> tuple[list[str], list[list[str]]]:
    header = [
        "pivot",
        "selected",
        "reachable",
        "passed checks",
        "valid (judge) [95% CI]",
        "read valid [95% PPI]",
        *(f"success on {n} [95% CI]" for n in targets),
        "identical to another",
        "tokens / valid",
        "s / valid",
    ]
    priced = any(row.get("dollars") is not None for row in per_row.values())
    if priced:
        header.append("$ / valid")
    rows = []
    for name, row in per_row.items():
        read = row.get("read")
        same = row["identical"]
        rows.append(
            [
                name,
                str(row["selected"]),
                str(row["reachable"]),
                f"{row['passed_checks']} ({_num(row['acceptance'])})",
                format_rate(row["summary"]["validity"]),
                _read(read),
                *(format_rate(row["summary"]["targets"][n]["success"]) for n in targets),
                f"{same['identical']}/{same['n']}" + (f" ({same['share']:.0%})" if same["n"] else ""),
                _num(row["tokens_per_valid"], 0),
                _num(row["seconds_per_valid"], 1)
                + (f" ({row['cached_calls']} calls from the cache)" if row["cached_calls"] else ""),
                *([_dollars(row)] if priced else []),
            ]
        )
    return header, rows


def flip_rows(per_row: dict[str, dict], targets: list[str]) -> tuple[list[str], list[list[str]]]:
    header = ["pivot", *(f"flip on {n} [95% CI]" for n in targets)]
    return header, [
        [name, *(format_rate(row["summary"]["targets"][n]["flip"]) for n in targets)] for name, row in per_row.items()
    ]


def pair_rows(pairs: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = [
        "target",
        "measure",
        "A",
        "B",
        "n both",
        "A rate",
        "B rate",
        "B − A [95% CI]",
        "A only / B only",
        "McNemar p",
    ]
    rows = [
        [
            p["target"],
            p["measure"],
            p["a"],
            p["b"],
            str(p["n"]),
            _num(p["a_rate"]),
            _num(p["b_rate"]),
            f"{_num(p['diff'])} [{_num(p['low'])}, {_num(p['high'])}]" if p["n"] else "—",
            f"{p['a_only']} / {p['b_only']}",
            _num(p["p"], 3) if p["n"] else "—",
        ]
        for p in pairs
    ]
    return header, rows


def settings_text(info: dict[str, Any]) -> str:
    """The comparison's settings, paragraphs apart."""
    paragraphs = [
        f"Generator: {info['generator']} ({', '.join(info['versions']) or info['version']}); "
        f"judge: {info['judge']}; targets answer in setting {info['setting']}.",
        f"Every pivot's generator options as given: `{json.dumps(info['options'], sort_keys=True)}`; "
        f"in full: `{json.dumps(info['resolved'], sort_keys=True)}`.",
    ]
    if info.get("rules") is not None:
        paragraphs.append(
            "Row `rules`: the same generator made in code, no pivot, so no seed selection (every seed perturbed): "
            f"`{json.dumps(info['rules'], sort_keys=True)}`; in full: "
            f"`{json.dumps(info['rules_resolved'], sort_keys=True)}`."
        )
    return "\n\n".join(paragraphs)


def _money(value: float | None) -> str:
    return "no price" if value is None else f"${value:.4f}"


def spend_rows(spend: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Per model (as the run's `lm.<label>.…` metrics name it) its calls, tokens, seconds and dollars, and the
    total with this process's CPU seconds."""
    header = ["model", "calls", "from the cache", "prompt tokens", "completion tokens", "LM seconds", "dollars"]

    def count(usage: dict[str, Any], key: str) -> str:
        return "—" if key not in usage else f"{usage[key]:,.0f}"

    rows = [
        [
            label,
            count(usage, "calls"),
            f"{usage.get('cached_calls', 0):,.0f}",
            count(usage, "prompt_tokens"),
            count(usage, "completion_tokens"),
            _num(usage.get("seconds"), 1),
            _money(usage.get("cost_usd")) if usage.get("calls") or "cost_usd" in usage else "—",
        ]
        for label, usage in spend["models"].items()
    ]
    cpu = spend.get("cpu_seconds")
    rows.append(
        [
            "total" + ("" if cpu is None else f" ({cpu:.1f} CPU seconds)"),
            f"{sum(u.get('calls', 0) for u in spend['models'].values()):,.0f}",
            f"{sum(u.get('cached_calls', 0) for u in spend['models'].values()):,.0f}",
            "",
            "",
            _num(sum(u.get("seconds", 0.0) for u in spend["models"].values()), 1),
            _money(spend.get("dollars")),
        ]
    )
    return header, rows


PAIRED_NOTE = (
    "B − A with a percentile bootstrap interval over those cases; McNemar's exact test on the cases only one "
    "row's attack succeeded on (A only / B only)."
)
COST_NOTE = (
    "What each model spent in the process that finished the comparison (a resumed comparison: since it "
    "resumed), judge and targets included; the same figures as the run's `lm.<model>.…` and `cost_usd` "
    "metrics. Calls the cache answered cost nothing. Dollars: the price map's or the config's price on the "
    "tokens a provider reported, $0 for a local model (its cost is CPU time: this process's, every thread, "
    "in the total); no price where a model answered without one."
)
MATRIX, SCATTER = "generator_x_target.png", "validity_x_success.png"


class PivotComparisonPage(Report):
    """The pivot comparison's page: settings, the main and flip tables, the paired tests, cost, the two figures."""

    name = "comparison"

    def __init__(self, run_id, info, per_row, pairs, targets, spend=None):
        self.info, self.per_row, self.pairs, self.targets, self.spend = info, per_row, pairs, targets, spend
        self.title = f"Pivot comparison — {run_id}"
        self.intro = settings_text(info)

    def figures(self) -> dict[str, Any]:
        return {
            MATRIX: matrix_figure(self.per_row, self.targets),
            SCATTER: validity_success_figure(self.per_row, self.targets),
        }

    def sections(self) -> list[Section]:
        flip = "Flip rate: the target read the original right and the perturbed case wrong."
        parts = [
            Section("", *main_rows(self.per_row, self.targets)),
            Section("", *flip_rows(self.per_row, self.targets), note=flip),
            Section("Paired, on the cases both rows made valid", *pair_rows(self.pairs), note=PAIRED_NOTE)
            if self.pairs
            else Section("Paired, on the cases both rows made valid", note=PAIRED_NOTE, extra=[NOTHING_PAIRED]),
        ]
        if self.spend is not None:
            parts.append(Section("Cost", *spend_rows(self.spend), note=COST_NOTE))
        parts.append(Section("", figure=Figure(MATRIX, "generator × target")))
        parts.append(Section("", figure=Figure(SCATTER, "validity against attack success")))
        return parts


NOTHING_PAIRED = "(one row only: nothing to pair)"


def write_report(
    out_dir: Path,
    run_id: str,
    info: dict[str, Any],
    per_row: dict[str, dict],
    pairs: list[dict],
    targets: list[str],
    spend: dict[str, Any] | None = None,
) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "comparison.json").write_text(
        json.dumps({"settings": info, "pivots": per_row, "pairs": pairs, "spend": spend}, indent=2, default=str)
    )
    return write(PivotComparisonPage(run_id, info, per_row, pairs, targets, spend), out_dir).markdown_path


def _figure(**kw):
    """A matplotlib figure on the Agg canvas, which touches no global pyplot state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as PlotFigure

    fig = PlotFigure(dpi=110, **kw)
    FigureCanvasAgg(fig)
    return fig


def matrix_figure(per_row: dict, targets: list[str]):
    """Attack success (valid cases the target got wrong), generator rows × target columns, beside cost."""
    import numpy as np

    pivots = list(per_row)
    grid = np.array(
        [[per_row[p]["summary"]["targets"][t]["success"]["rate"] for t in targets] for p in pivots], dtype=float
    ).reshape(len(pivots), len(targets))
    fig = _figure(figsize=(4 + 1.6 * len(targets), 1.2 + 0.7 * len(pivots)))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [max(len(targets), 1), 1.3]})
    left.imshow(np.nan_to_num(grid, nan=0.0), vmin=0, vmax=1, cmap="Reds", aspect="auto")
    for i, pivot in enumerate(pivots):
        for j, target in enumerate(targets):
            n = per_row[pivot]["summary"]["targets"][target]["success"]["n"]
            label = "—" if np.isnan(grid[i, j]) else f"{grid[i, j]:.2f}\n(n={n})"
            left.text(j, i, label, ha="center", va="center", color="white" if grid[i, j] > 0.6 else "black")
    left.set_xticks(range(len(targets)), targets, rotation=20)
    left.set_yticks(range(len(pivots)), pivots)
    left.set_title("attack success (valid cases)")
    cost = [float("nan") if per_row[p]["tokens_per_valid"] is None else per_row[p]["tokens_per_valid"] for p in pivots]
    right.barh(range(len(pivots)), np.nan_to_num(cost, nan=0.0), color="grey")
    right.set_yticks(range(len(pivots)), [])
    right.invert_yaxis()
    right.set_title("pivot tokens / valid case")
    fig.tight_layout()
    return fig


def validity_success_figure(per_row: dict, targets: list[str]):
    """One point per row and target: validity (the readers' where read, else the judge's) against attack
    success, each with its interval."""
    fig = _figure(figsize=(6, 4.5))
    ax = fig.add_subplot()
    markers = "osD^vP*X"
    for i, (name, row) in enumerate(per_row.items()):
        read = row.get("read")
        validity = (
            {"rate": read["estimate"], "low": read["low"], "high": read["high"]} if read else row["summary"]["validity"]
        )
        for j, target in enumerate(targets):
            success = row["summary"]["targets"][target]["success"]
            if not success["n"] or validity["rate"] != validity["rate"]:
                continue
            ax.errorbar(
                validity["rate"],
                success["rate"],
                xerr=[[validity["rate"] - validity["low"]], [validity["high"] - validity["rate"]]],
                yerr=[[success["rate"] - success["low"]], [success["high"] - success["rate"]]],
                fmt=markers[j % len(markers)],
                color=f"C{i}",
                capsize=3,
                label=f"{name} on {target}",
            )
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("validity (read, PPI, where read; else the judge's)")
    ax.set_ylabel("attack success on valid cases")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
