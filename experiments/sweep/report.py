"""The sweep's report: the curves (success and yield against the level, per target and setting) as a PNG,
and a page (sweep.md, sweep.html) of the same figures with intervals and paired differences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from experiments.report_page import Figure, Report, Section, write

PLOT = "sweep.png"


def _pct(rate: Mapping[str, Any]) -> str:
    if not rate.get("n"):
        return "—"
    return f"{rate['rate']:.2f} [{rate['low']:.2f}, {rate['high']:.2f}] (n={rate['n']})"


def _diff(paired: Mapping[str, Any]) -> str:
    if not paired.get("n"):
        return "—"
    return f"{paired['diff']:+.2f} [{paired['low']:+.2f}, {paired['high']:+.2f}] p={paired['p']:.3g} (n={paired['n']})"


def curve_figure(rows: Sequence[Mapping[str, Any]], yields: Mapping[str, Mapping[str, Any]], dial: str):
    """Attack success per target and setting against the level, with 95% intervals, and the level's yield."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    levels = list(yields)
    fig = Figure(figsize=(7, 4), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xs = range(len(levels))
    for target, setting in dict.fromkeys((r["target"], r["setting"]) for r in rows):
        line = {r["level"]: r["success"] for r in rows if r["target"] == target and r["setting"] == setting}
        mids = [line[lv]["rate"] if line[lv]["n"] else float("nan") for lv in levels]
        # max(0, …): an interval's end can sit a rounding error inside its rate (1.0 against 0.9999…)
        lows = [max(0.0, m - line[lv]["low"]) if line[lv]["n"] else 0 for m, lv in zip(mids, levels, strict=True)]
        highs = [max(0.0, line[lv]["high"] - m) if line[lv]["n"] else 0 for m, lv in zip(mids, levels, strict=True)]
        ax.errorbar(xs, mids, yerr=[lows, highs], marker="o", capsize=3, label=f"success: {target}, {setting}")
    ax.plot(xs, [yields[lv]["yield"]["rate"] for lv in levels], "k--", marker="s", label="yield (accepted / made)")
    ax.set_xticks(list(xs), levels)
    ax.set_xlabel(dial)
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7)
    return fig


class SweepPage(Report):
    """The sweep's page: the curve, then yield and validity per level, then attack success per level."""

    name = "sweep"

    def __init__(self, *, generator, dial, default, rows, yields, validity, run_info):
        self.dial, self.default, self.rows, self.yields, self.validity = dial, default, rows, yields, validity
        self.title = f"Strength sweep: {generator}, {dial}"
        self.intro = (
            f"Run `{run_info.get('run_id')}` (config {run_info.get('config')}, "
            f"commit {str(run_info.get('git.commit', '?'))[:10]}). "
            f"Paired differences are against level `{default}`, over the cases both levels made."
        )

    def figures(self) -> dict[str, Any]:
        return {PLOT: curve_figure(self.rows, self.yields, self.dial)}

    def sections(self) -> list[Section]:
        curve = Section("", figure=Figure(PLOT, "success and yield against the level"))
        return [curve, self._yields(), self._success()]

    def _yields(self) -> Section:
        rows = []
        for level, y in self.yields.items():
            reasons = ", ".join(f"`{k}` {v}" for k, v in list(y["not_accepted"].items())[:5]) or "—"
            rows.append(
                [level, str(y["cases"]), str(y["accepted"]), _pct(y["yield"]), self.validity.get(level, "—"), reasons]
            )
        header = ["level", "cases made", "accepted", "yield", "validity", "not accepted, by reason"]
        return Section("Yield and validity per level", header, rows)

    def _success(self) -> Section:
        header = ["level", "target", "setting", "success", "memory answer", "success − default (paired)"]
        rows = [
            [
                r["level"],
                r["target"],
                r["setting"],
                _pct(r["success"]),
                _pct(r["memory"]),
                _diff(r["vs_default"]) if r["level"] != self.default else "(default)",
            ]
            for r in self.rows
        ]
        return Section("Attack success per level", header, rows)


def write_report(
    out: Path,
    *,
    generator: str,
    dial: str,
    default: str,
    rows: Sequence[Mapping[str, Any]],
    yields: Mapping[str, Mapping[str, Any]],
    validity: Mapping[str, str],
    run_info: Mapping[str, Any],
) -> Path:
    page = SweepPage(
        generator=generator, dial=dial, default=default, rows=rows, yields=yields, validity=validity, run_info=run_info
    )
    write(page, out)
    return out
