"""The comparison's report: comparison.md and comparison.html (tables, prompt diffs, cases side by side),
strength_curve.png and comparison.json, in runs/<run-id>/report/."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.report import jsonable
from experiments.report_page import Figure, Report, Section, write
from metrics.attack import format_rate

GROUP_LABEL = {"optimised": "optimisation targets", "held_out": "held-out targets"}
PAGE_NAME = "comparison"
PAGE = f"{PAGE_NAME}.md"
PLOT = "strength_curve.png"


@dataclass
class ComparisonReport:
    """What the CLI prints and where the files went."""

    dir: Path
    markdown: str
    page: str = PAGE
    metrics: dict[str, float] = field(default_factory=dict)

    @staticmethod
    def summary_metrics(metrics: dict[str, float]) -> dict[str, float]:
        """What the CLI prints: the paired differences and their p-values; the rest is in the report and MLflow."""
        keep = (".vs_uncompiled.", "test_seeds", "wall_seconds")
        return {k: v for k, v in metrics.items() if any(s in k for s in keep) and not k.endswith((".low", ".high"))}


def _diff(d: Mapping[str, Any]) -> str:
    if not d["n"]:
        return "— (n=0)"
    return f"{d['diff']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}]"


def _paired_label(measure: str) -> str:
    if measure == "validity":
        return "validity"
    group, _, part = measure.partition(".")
    return (
        f"success on seeds valid in both, {GROUP_LABEL[group]}" if part else f"success per seed, {GROUP_LABEL[group]}"
    )


def comparison_sections(rows: Sequence[Mapping[str, Any]], groups: Sequence[str]) -> list[Section]:
    header = ["variant", "test seeds", "validity"]
    for g in groups:
        header += [f"success on valid cases, {GROUP_LABEL[g]}", f"success per seed, {GROUP_LABEL[g]}"]
    figures = [
        [r["variant"], str(r["seeds"]), format_rate(r["validity"])]
        + [format_rate(r[g][k]) for g in groups for k in ("on_valid", "per_seed")]
        for r in rows
    ]
    paired = []
    for r in rows:
        for measure, d in r.get("vs_uncompiled", {}).items():
            label = _paired_label(measure)
            paired.append(
                [
                    r["variant"],
                    label,
                    f"{d['a']:.2f}" if d["n"] else "—",
                    f"{d['b']:.2f}" if d["n"] else "—",
                    _diff(d),
                    f"{d['a_only']} / {d['b_only']}",
                    f"{d['p']:.3g}",
                    str(d["n"]),
                ]
            )
    paired_header = [
        "variant",
        "measure",
        "uncompiled",
        "variant's",
        "difference [95% CI]",
        "discordant: uncompiled only / variant only",
        "exact McNemar p",
        "pairs",
    ]
    note = (
        "Paired against the uncompiled program on the same test seeds (per seed: valid and answered wrongly; "
        "valid in both: answered wrongly, on the seeds whose cases both programs made valid; intervals: bootstrap "
        "over seeds):"
    )
    return [Section("Compiled against uncompiled", header, figures), Section("", paired_header, paired, note=note)]


def _reviewed(point: Mapping[str, Any]) -> str:
    r = point.get("reviewed")
    if not r or not r["n"]:
        return f"— (`reeval review <run>/{point.get('stage', '?')}`)"
    return format_rate(r)


def strength_section(curve: Sequence[Mapping[str, Any]], groups: Sequence[str]) -> Section:
    header = ["strength", "variant", "validity", "accepted cases valid, read blind"]
    header += [f"success per seed, {GROUP_LABEL[g]}" for g in groups]
    rows = [
        [f"{p['strength']:g}", p["variant"], format_rate(p["validity"]), _reviewed(p)]
        + [format_rate(p[g]["per_seed"]) for g in groups]
        for p in curve
    ]
    return Section("The strength curve", header, rows, figure=Figure(PLOT, "strength curve"))


def cost_section(costs: Mapping[str, Mapping[str, float]]) -> Section:
    rows = []
    for variant, c in costs.items():
        per_case = c["test_seconds"] / c["test_cases"] if c["test_cases"] else float("nan")
        rows.append(
            [
                variant,
                f"{c['compile_calls']:.0f}",
                f"{c['compile_seconds']:.0f}",
                f"{c['test_calls']:.0f}",
                f"{c['test_seconds']:.0f}",
                f"{per_case:.1f}",
            ]
        )
    header = ["variant", "compile: LM calls", "compile: s", "test seeds: LM calls", "test seeds: s", "s per test case"]
    closing = "Calls the LMs really made; calls answered by the call cache are free and not counted."
    return Section("Cost", header, rows, extra=[closing])


def review_section(review: Mapping[str, Any]) -> Section:
    """The test cases' review-based validity per variant, or how to get it."""
    run_id = review["stage"].split("/")[0]
    how = f"`reeval review {review['stage']}`, then `reeval resume {run_id}` (no LM call; writes this report again)"
    figures = review.get("figures")
    if not figures:
        return Section(
            "Review",
            note="Validity above is the checks' and the judge's verdict; nobody has reviewed the test cases. For "
            f"the review-based estimate (blind, prediction-powered, per variant): {how}.",
        )
    rows = [
        [v, str(f["accepted"]), str(f["n"]), format_rate(f) if f["n"] else "— (none read)"]
        for v, f in figures["variants"].items()
    ]
    return Section(
        "Review",
        ["variant", "accepted test cases", "read", "valid share of accepted [95% CI] (n read)"],
        rows,
        note=f"The test cases read blind ({', '.join(figures['reviewers']) or 'reviewer kind not recorded'}; cases "
        "that read the same in several variants were read once): the valid share of each variant's accepted cases, "
        f"prediction-powered with the judge's scores. More verdicts: {how}.",
    )


def cases_sections(shown: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[Section]:
    """A heading, then each seed's cases side by side: one table a seed under its question."""
    parts = [Section("Cases side by side")]
    for seed in shown:
        rows = [
            [variant, ", ".join(c["answers"]) or "—", c["status"], c["excerpt"]]
            + [str(c["targets"].get(t) or "—") for t in targets]
            for variant, c in seed["cases"].items()
        ]
        note = f"**{seed['seed_id']}**: {seed['question']} (gold: {', '.join(seed['original_answers'])})"
        parts.append(Section("", ["variant", "new answer", "status", "changed passage", *targets], rows, note=note))
    return parts


def strength_figure(curve: Sequence[Mapping[str, Any]], baseline: Mapping[str, Any], groups):
    """Validity and per-seed attack success against strength, 95% intervals as error bars; the uncompiled
    program (which no strength changes) as dashed lines. Drawn on the Agg canvas, without pyplot's state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as PlotFigure

    fig = PlotFigure(figsize=(6, 4), dpi=120, layout="tight")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xs = [p["strength"] for p in curve]
    series = [("validity", lambda p: p["validity"])] + [
        (f"success per seed, {GROUP_LABEL[g]}", lambda p, g=g: p[g]["per_seed"]) for g in groups
    ]
    for i, ((label, get), colour) in enumerate(zip(series, ("tab:green", "tab:red", "tab:purple"), strict=False)):
        rates = [get(p) for p in curve]
        ys = [r["rate"] if r["n"] else float("nan") for r in rates]
        errors = [
            [max(0.0, y - r["low"]) if r["n"] else 0.0 for y, r in zip(ys, rates, strict=True)],
            [max(0.0, r["high"] - y) if r["n"] else 0.0 for y, r in zip(ys, rates, strict=True)],
        ]
        dodge = [x + 0.012 * (i - 1) for x in xs]  # equal rates would hide each other's error bars
        ax.errorbar(dodge, ys, yerr=errors, marker="o", capsize=4, label=label, color=colour)
        base = get(baseline)
        if base["n"]:
            ax.axhline(base["rate"], linestyle="--", linewidth=1, color=colour, alpha=0.6)
    ax.set_xlabel("options.strength (compiled program)")
    ax.set_ylabel("share of test seeds")
    ax.set_ylim(0, 1)
    ax.set_xticks(xs)
    ax.set_title(f"Strength curve: {curve[0]['variant'] if curve else ''} (dashed: uncompiled)")
    ax.legend(fontsize=8, loc="best")
    return fig


class ComparisonPage(Report):
    """The comparison's page: the run, the paired tables, the strength curve, cost, the optimisers' prompt changes,
    cases side by side and their review. `content` as `write_report` takes it."""

    name = PAGE_NAME

    def __init__(self, content: Mapping[str, Any]):
        self.content = content
        info = content["info"]
        self.title = str(info["run_id"])
        self.intro = (
            f"Config `{info['config']}` · commit `{info.get('git.commit', '?')}` · pivot `{info['pivot']}` · "
            f"judge `{info['judge']}` ({info.get('judge_method', 'method not recorded')}) · "
            f"generator `{info['generator']}` · seeds: {info['seeds']} · strength {info['strength']:g} · "
            f"{info['test']} test seeds ({info['train']} train, {info['val']} validation)\n\n"
            f"Optimisation targets (the metric's, while compiling): {', '.join(info['optimised']) or '—'}. "
            f"Held-out targets (never seen while compiling): {', '.join(info['held_out']) or '—'}.\n\n"
            f"Validity is the checks{' and the judge' if info['judged'] else ' alone'} ({info['validity_note']})."
        )

    def figures(self) -> dict[str, Any]:
        c = self.content
        return {PLOT: strength_figure(c["curve"], c["baseline"], c["groups"])}

    def sections(self) -> list[Section]:
        c, groups = self.content, self.content["groups"]
        changed = [Section("What the optimiser changed")] + [
            Section(variant, level=3, code=diff, code_language="diff") for variant, diff in c["diffs"].items()
        ]
        return [
            *comparison_sections(c["rows"], groups),
            strength_section(c["curve"], groups),
            cost_section(c["costs"]),
            *changed,
            *cases_sections(c["shown"], c["targets"]),
            review_section(c["review"]),
        ]


def write_report(out_dir: Path, content: Mapping[str, Any]) -> ComparisonReport:
    """`content`: info, groups, rows, curve, baseline, costs, diffs, shown, targets, review (see the driver)."""
    markdown = write(ComparisonPage(content), out_dir).markdown
    payload = {k: content[k] for k in ("info", "rows", "curve", "baseline", "costs", "review")}
    (out_dir / "comparison.json").write_text(json.dumps(jsonable(payload), indent=1, default=str), encoding="utf-8")
    return ComparisonReport(out_dir, markdown)
