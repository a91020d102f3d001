"""The sweep's report: the curves (success and yield against the level, per target and setting) as a PNG,
and a Markdown page of the same figures with intervals and paired differences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


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
    out.mkdir(parents=True, exist_ok=True)
    fig = curve_figure(rows, yields, dial)
    fig.savefig(out / "sweep.png", format="png")
    lines = [
        f"# Strength sweep: {generator}, {dial}",
        "",
        f"Run `{run_info.get('run_id')}` (config {run_info.get('config')}, "
        f"commit {str(run_info.get('git.commit', '?'))[:10]}). "
        f"Paired differences are against level `{default}`, over the cases both levels made.",
        "",
        "![success and yield against the level](sweep.png)",
        "",
        "## Yield and validity per level",
        "",
        "| level | cases made | accepted | yield | validity | not accepted, by reason |",
        "|---|---:|---:|---|---|---|",
    ]
    for level, y in yields.items():
        reasons = ", ".join(f"`{k}` {v}" for k, v in list(y["not_accepted"].items())[:5]) or "—"
        lines.append(
            f"| {level} | {y['cases']} | {y['accepted']} | {_pct(y['yield'])} "
            f"| {validity.get(level, '—')} | {reasons} |"
        )
    lines += [
        "",
        "## Attack success per level",
        "",
        "| level | target | setting | success | memory answer | success − default (paired) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['level']} | {r['target']} | {r['setting']} | {_pct(r['success'])} | {_pct(r['memory'])} "
            f"| {_diff(r['vs_default']) if r['level'] != default else '(default)'} |"
        )
    (out / "sweep.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out
