"""The bench report's sections of plain rows and the cells they are made of; experiments.report_page renders
them (markdown printed at the end of a run, HTML, both logged to MLflow)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from experiments import task_registry
from experiments.report_page import Section


def task_label(task: str) -> str:
    """How the report names a task: its registration's label."""
    entry = task_registry.find(task)
    return entry.shown_as if entry else task


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def rate(x: Any) -> str:
    return "—" if _nan(x) else f"{x:.2f}"


def signed(x: Any) -> str:
    return "—" if _nan(x) else f"{x:+.2f}"


def interval(row: Mapping[str, Any]) -> str:
    return "" if _nan(row.get("low")) else f" [{signed(row['low'])}, {signed(row['high'])}]"


def drop_cell(row: Mapping[str, Any] | None) -> str:
    if not row or not row.get("n"):
        return "—"
    return (
        f"{rate(row['original'])} → {rate(row['perturbed'])} · drop {signed(row['drop'])}{interval(row)} · n={row['n']}"
    )


def change_cell(row: Mapping[str, Any] | None) -> str:
    if not row or not row.get("n"):
        return "—"
    return f"{signed(row['change'])}{interval(row)} · n={row['n']}"


def sections(
    tables: Mapping[str, Any],
    tasks_info: Sequence[Mapping[str, Any]],
    stages: Sequence[Mapping[str, Any]],
    sharing: Mapping[str, Any],
) -> list[Section]:
    """The report's sections, in the order it shows them."""
    return [
        _main_table(tables),
        _large_drops(tables),
        _tasks(tasks_info),
        *(_setting_effects(tables, variant, note) for variant, note in EFFECT_NOTES),
        _keyword_accuracy(tables),
        _all_settings(tables),
        *(_transfer(tables, task, first=task == tables["tasks"][0]) for task in tables["tasks"]),
        _rank_changes(tables),
        _cost(stages, sharing),
    ]


def _main_table(tables: Mapping[str, Any]) -> Section:
    tasks = tables["tasks"]
    return Section(
        "Main table",
        ["target", *(task_label(t) for t in tasks)],
        [[target, *(drop_cell(tables["main"][target].get(task)) for task in tasks)] for target in tables["targets"]],
        note=f"Setting {tables['headline']}, greedy. Each cell: original → perturbed accuracy · paired drop (original "
        "− perturbed, 95% bootstrap interval) · n paired seeds. Accuracy is each task's own: non-strict keyword "
        "for unanswerable/inconsistent, the chosen option for counterfactual (whose original is the same "
        "question asked closed-book), EM or containment otherwise; a context-enriched seed counts as right only "
        "if both copies are.",
    )


def _large_drops(tables: Mapping[str, Any]) -> Section:
    return Section(
        "Where accuracy drops by 20 points or more",
        ["task", "target", "drop", "verdict", "commonest answers, originals", "commonest answers, perturbed"],
        [
            [
                task_label(task),
                target,
                f"{signed(row['drop'])}{interval(row)} · n={row['n']}",
                _verdict(row),
                _answers(tables["answers"].get(f"{task}|{target}|original")),
                _answers(tables["answers"].get(f"{task}|{target}|perturbed")),
            ]
            for target in tables["targets"]
            for task in tables["tasks"]
            if (row := tables["main"][target].get(task)) and row.get("n")
        ],
        note=f"Setting {tables['headline']}, greedy. A drop counts when its point estimate is 20 points or more; "
        "where the interval reaches below 20 points the verdict says so. The commonest answers (normalised) say "
        "what the accuracy is made of.",
    )


def _tasks(tasks_info: Sequence[Mapping[str, Any]]) -> Section:
    columns = ("seeds", "selected", "generated", "accepted", "evaluated")
    return Section(
        "Tasks",
        ["task", *columns, "validity"],
        [[task_label(i["task"]), *(str(i[c]) for c in columns), i["validity"]] for i in tasks_info],
        note="seeds: rows offered to the generator; selected: seeds the pivot's seed selection kept; generated: "
        "cases made; accepted: passed the string checks and the judge; evaluated: accepted cases put to the "
        "targets (an inconsistent seed's modified document alone is validated but not evaluated).",
    )


EFFECT_NOTES = (
    ("perturbed", "On the perturbed cases: change = compared setting − baseline, same cases."),
    (
        "original",
        "On the original cases (e.g. a task instruction that makes a model answer "
        "'unknown' on evidence that does answer).",
    ),
)


def _setting_effects(tables: Mapping[str, Any], variant: str, note: str) -> Section:
    tasks, rows = tables["tasks"], []
    for name in dict.fromkeys(r["effect"] for r in tables["effects"]):
        mine = [r for r in tables["effects"] if r["effect"] == name and r["variant"] == variant]
        for target in tables["targets"]:
            cells = {r["task"]: r for r in mine if r["target"] == target}
            if cells:
                base, alt = next(iter(cells.values()))["base"], next(iter(cells.values()))["alt"]
                rows.append([name, f"{alt} vs {base}", target, *(change_cell(cells.get(t)) for t in tasks)])
    return Section(
        f"Setting effects, {variant} cases",
        ["effect", "compared", "target", *(task_label(t) for t in tasks)],
        rows,
        note=note,
        empty="No pair of settings to compare (see options.settings / sampled).",
    )


def _keyword_accuracy(tables: Mapping[str, Any]) -> Section:
    keyword_tasks = [t for t in tables["tasks"] if task_registry.get(t).verdict]
    strict, loose = (
        {(r["task"], r["target"], r["setting"], r["decoding"]): r for r in tables["keywords"][metric]}
        for metric in ("keyword_strict", "keyword_nonstrict")
    )

    def cell(key: tuple) -> str:
        both, n = (rate(m.get(key, {}).get("rate")) for m in (strict, loose)), loose.get(key, {}).get("n", 0)
        return f"{' / '.join(both)} · n={n}"

    return Section(
        "Keyword accuracy, strict / non-strict",
        ["target", "setting", *(task_label(t) for t in keyword_tasks)],
        [
            [target, f"{setting}/{decoding}", *(cell((t, target, setting, decoding)) for t in keyword_tasks)]
            for target, setting, decoding in sorted({k[1:] for k in loose})
        ],
        note="FaithEval's keyword match on perturbed cases: strict wants the answer to be the keyword itself, "
        "non-strict accepts it within the answer.",
    )


def _all_settings(tables: Mapping[str, Any]) -> Section:
    closed_book = [
        r
        for r in tables["accuracy"]
        if r["setting"] == "closed_book" and task_registry.get(r["task"]).original_setting != "closed_book"
    ]
    return Section(
        "All settings",
        ["task", "target", "setting", "original → perturbed · drop · n"],
        [[task_label(r["task"]), r["target"], f"{r['setting']}/{r['decoding']}", drop_cell(r)] for r in tables["drops"]]
        + [
            [
                task_label(r["task"]),
                r["target"],
                f"closed_book/{r['decoding']}",
                f"{rate(r['rate'])} (originals only) · n={r['n']}",
            ]
            for r in closed_book
        ],
    )


def _transfer(tables: Mapping[str, Any], task: str, first: bool) -> Section:
    matrix = tables["transfer"][task]
    return Section(
        f"Transfer, {task_label(task)}: pivot × target",
        ["pivot", *matrix["cols"]],
        [[pivot, *(_transfer_cell(matrix["cells"][pivot][t]) for t in matrix["cols"])] for pivot in matrix["rows"]],
        level=3,
        note="Drop (original − perturbed) on the cases each pivot made; (self) marks the "
        "self-attack, where the target made the cases itself."
        if first
        else "",
    )


def _rank_changes(tables: Mapping[str, Any]) -> Section:
    return Section(
        "Rank changes",
        ["task", "target", "original (rank)", "perturbed (rank)", "rank change"],
        [
            [
                task_label(r["task"]),
                r["target"],
                f"{rate(r['original'])} (#{r['rank_original']:g})",
                f"{rate(r['perturbed'])} (#{r['rank_perturbed']:g})",
                f"{r['change']:+g}",
            ]
            for r in tables["ranks"]
        ],
        note=f"Setting {tables['headline']}, greedy; rank 1 is the best target; a positive change means the target "
        "fell.",
    )


COST_HEADER = [
    "stage",
    "this run",
    "items",
    "LM calls",
    "calls per item",
    "prompt read / sent",
    "LM seconds",
    "wall seconds",
    "CPU seconds",
    "dollars",
]


def _cost_row(s: Mapping[str, Any]) -> list[str]:
    return [
        s["stage"],
        "ran" if s["ran"] else "reused",
        str(s["items"]),
        f"{s['calls']:.0f}",
        "—" if not s["items"] else f"{s['calls'] / s['items']:.2f}",
        "—" if s.get("prompt_read_share") is None else f"{s['prompt_read_share']:.2f}",
        f"{s['lm_seconds']:.0f}",
        f"{s['wall_seconds']:.0f}",
        "—" if s.get("cpu_seconds") is None else f"{s['cpu_seconds']:.0f}",
        money(s.get("dollars")),
    ]


def _cost(stages: Sequence[Mapping[str, Any]], sharing: Mapping[str, Any]) -> Section:
    return Section(
        "Cost",
        COST_HEADER,
        [_cost_row(s) for s in stages] + ([_cost_total(stages)] if stages else []),
        note="LM calls are real (uncached) calls of local models (providers report none here), counted by the "
        "invocation that finished the stage: a reused stage shows what it cost then, a stage resumed after a "
        "kill what it cost after the kill. Prompt read / sent: the prompt tokens llama.cpp decoded over those "
        "sent; the rest was a prefix its context or a saved state already held (docs/guides/scale.md). CPU "
        "seconds: this process's, every thread (local models decode in it; a stage on Ray actors spends theirs). "
        "Dollars: the price map's or the config's price on the tokens providers reported, $0 for a local model; "
        "— where a model answered without a price, or the stage was recorded before dollars were.",
        extra=_sharing_lines(sharing),
    )


def money(x: Any) -> str:
    return "—" if _nan(x) else f"${x:.4f}"


def _cost_total(stages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every stage summed, reused ones included (what the whole bench cost when its stages ran); a total of
    dollars only where every stage has one."""
    dollars = [s.get("dollars") for s in stages]
    cpu = [s.get("cpu_seconds") for s in stages]
    return [
        "total",
        "",
        str(sum(s["items"] for s in stages)),
        f"{sum(s['calls'] for s in stages):.0f}",
        "",
        "",
        f"{sum(s['lm_seconds'] for s in stages):.0f}",
        f"{sum(s['wall_seconds'] for s in stages):.0f}",
        "—" if any(c is None for c in cpu) else f"{sum(cpu):.0f}",
        "—" if not stages or any(_nan(d) for d in dollars) else money(sum(dollars)),
    ]


def _verdict(row: Mapping[str, Any]) -> str:
    drop, low = row["drop"], row.get("low")
    if _nan(drop):
        return "—"
    if drop >= 0.2:
        return "drops" + ("" if _nan(low) or low >= 0.2 else " (interval reaches below 20 points)")
    return "does not drop" + ("" if _nan(row.get("high")) or row["high"] < 0.2 else " (interval reaches 20 points)")


def _answers(summary: Mapping[str, Any] | None) -> str:
    if not summary:
        return "—"
    return ", ".join(f"{answer[:30]!r} {share:.0%}" for answer, share in summary["top"]) + f" (n={summary['n']})"


def _transfer_cell(cell: Mapping[str, Any]) -> str:
    if not cell["n"]:
        return "—"
    return f"{signed(cell['value'])}{interval(cell)} · n={cell['n']}" + (" (self)" if cell["self_attack"] else "")


def _sharing_lines(sharing: Mapping[str, Any]) -> list[str]:
    lines = []
    seeds = sharing.get("seeds")
    if seeds:
        lines.append(
            f"Seed selection: {seeds['calls']:.0f} pivot calls for {seeds['seeds']} seeds × "
            f"{seeds['pivots']} pivot(s) ({seeds['per_seed']:.2f} per seed), shared by {seeds['generators']} "
            f"generators: {seeds['saved']:.0f} calls saved against separate runs."
        )
    asks = sharing.get("asks")
    if asks:
        lines.append(
            f"Target calls: {asks['uses']} evaluations needed {asks['asks']} distinct calls "
            f"({asks['saved']} saved; originals: {asks['original_uses']} evaluations, "
            f"{asks['original_asks']} calls)."
        )
    if sharing.get("skipped"):
        lines.append(
            "Few-shot evaluations skipped for lack of demonstrations (the other fold had no accepted "
            f"case): {dict(sharing['skipped'])}."
        )
    return lines
