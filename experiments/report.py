"""The report of a target evaluation: a `Report` (experiments.report_page) written as report.md and report.html,
its plots as PNG files, and its tables as report_tables.json.

The report shows: run information, accuracy before/after perturbation per target and prompt
setting (bar chart with bootstrap intervals and tables; rows of a benchmark file evaluated as
given, without an original, are the variant "external"), normalised accuracy, every metric side
by side, the generator x target transfer matrix, rank changes, breakdowns by source and by
answer position, the task instruction's effect on original contexts, errors, and a seeded
sample of cases with the original and perturbed contexts and every target's answers.

The cases are adversarial by construction and model outputs are arbitrary text: this module hands the page
plain strings, which the shared template escapes. Plots are drawn on matplotlib Figure objects with the Agg
canvas, which touches no global pyplot state and needs no display.
"""

from __future__ import annotations

import json
import logging
import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from experiments import task_registry
from experiments.report_page import Figure, Report, Section, write
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

TABLES_FILE = "report_tables.json"
ACCURACY_PNG, TRANSFER_PNG, RANKS_PNG = "accuracy.png", "transfer.png", "ranks.png"
VARIANT_COLORS: dict[str, str] = {"original": "#4c78a8", "perturbed": "#e45756", "external": "#72b7b2"}
_SETTING_ORDER = ("closed_book", "open_book", "few_shot", "opinion", "cot", "task_instruction")


# --- formatting -------------------------------------------------------------------------------------


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


def _cell(row: Mapping[str, Any], key: str) -> str:
    if key == "ci":
        return _ci(row)
    if key == "kinds":
        return ", ".join(f"{k}: {v}" for k, v in (row.get("kinds") or {}).items()) or "—"
    return _num(row.get(key))


def _table(
    title: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]], **section: Any
) -> Section:
    """A section whose table is `rows` (dicts) under `columns`, (key, header) pairs; key "ci" shows low/high."""
    cells = [[_cell(row, key) for key, _ in columns] for row in rows]
    return Section(title, [header for _, header in columns], cells, **section)


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
    from matplotlib.figure import Figure as PlotFigure

    fig = PlotFigure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


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


def transfer_figure(matrix: Mapping[str, Any]):
    """Perturbed accuracy of each target on each generator's cases, self-attacks outlined; None without
    generated cases."""
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
    return fig


def ranks_figure(rows: Sequence[Mapping[str, Any]]):
    """Each target's rank before and after perturbation, one panel per setting and decoding; None without
    targets to rank."""
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
    return fig


# --- case sample -------------------------------------------------------------------------------------


def _answer(record: Mapping[str, Any] | None, metric: str) -> str:
    """A target's answer to one case, after the verdict: right, wrong, n/a or the error's kind."""
    if record is None:
        return "—"
    if is_error(record):
        verdict = f"error: {error_kind(record)}"
    elif record.get(metric) is None:
        verdict = "n/a"
    else:
        verdict = "right" if float(record[metric]) >= 1.0 else "wrong"
    prediction = record.get("prediction")
    return verdict if prediction is None else f"{verdict}: {prediction}"


def _options(record: Mapping[str, Any]) -> str:
    return "; ".join(
        f"{o.get('label', '')}. {o.get('text', '')}" if isinstance(o, Mapping) else f"{chr(65 + i)}. {o}"
        for i, o in enumerate(record.get("options") or [])
    )


def _column(record: Mapping[str, Any]) -> str:
    return "original" if record.get("variant") == "original" else str(record.get("case_id"))


def _case_sections(task: str, seed_id: str, records: Sequence[Mapping[str, Any]], metric: str) -> list[Section]:
    """One seed: its contexts side by side (the original, then each adversarial case by case id), then every
    target's answer to each."""
    # A record that carries its context (closed-book ones may not) shows it.
    ranked = sorted(
        records, key=lambda r: (r.get("variant") != "original", str(r.get("case_id")), not r.get("context"))
    )
    columns: dict[str, Mapping[str, Any]] = {}
    for r in ranked:
        columns.setdefault(_column(r), r)
    shown = list(columns.values())
    contexts = [["expected", *(", ".join(expected_answers(r)) for r in shown)]]
    if any(r.get("options") for r in shown):
        contexts += [["options", *map(_options, shown)], ["label", *(_num(r.get("answer_label")) for r in shown)]]
    contexts.append(["context", *(str(r.get("context") or "") for r in shown)])
    labels = [
        col if col == "original" else f"{col} (generator: {r.get('generator') or '—'})" for col, r in columns.items()
    ]
    answers: dict[tuple, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for r in records:
        answers[(str(r.get("target")), str(r.get("setting")), str(r.get("decoding")))][_column(r)] = r
    order = sorted(answers, key=lambda k: (k[0], _setting_rank(k[1]), k[2]))
    rows = [[*key, *(_answer(answers[key].get(col), metric) for col in columns)] for key in order]
    first = records[0]
    heading = f"{task} · seed {seed_id} · source {first.get('source')}"
    return [
        Section(heading, ["", *labels], contexts, level=3, note=f"Q: {first.get('question') or ''}"),
        Section("", ["target", "setting", "decoding", *columns], rows),
    ]


def sample_sections(scored: Sequence[Mapping[str, Any]], metric: str, size: int, seed: int) -> list[Section]:
    """A seeded sample of seeds with adversarial (perturbed or external) cases, each as `_case_sections`."""
    by_seed: dict[tuple, list[Mapping[str, Any]]] = defaultdict(list)
    for r in scored:
        by_seed[(str(r.get("task")), str(r.get("seed_id")))].append(r)
    keys = sorted(k for k, rs in by_seed.items() if any(r.get("variant") in ADVERSARIAL_VARIANTS for r in rs))
    if not keys:
        return [Section("Sample of cases", note="No perturbed cases.")]
    chosen = sorted(random.Random(seed).sample(keys, min(size, len(keys))))
    intro = f"{len(chosen)} of {len(keys)} seeds with perturbed cases, sampled with seed {seed}."
    return [Section("Sample of cases", note=intro)] + [
        part for task, seed_id in chosen for part in _case_sections(task, seed_id, by_seed[(task, seed_id)], metric)
    ]


# --- page ---------------------------------------------------------------------------------------------


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


_VALIDITY_COLUMNS = [
    ("figure", "figure"),
    ("estimate", "estimate"),
    ("ci", "95% CI"),
    ("n", "reviewed n"),
    ("note", "note"),
]
INTERVALS = (
    "Intervals are 95% percentile bootstrap (1000 resamples, seed 0). Errored records are counted apart and never "
    "scored as wrong. A Category 2 (context_enrich) seed counts as right only if both enriched copies are "
    "answered correctly."
)
EXTERNAL_NOTE = (
    "Variant **external**: rows of a benchmark file evaluated as given, without an original context to pair them with."
)
PPI_NOTE = (
    "Judge figures weight each reviewed case by its stratum (population / reviewed). Prediction-powered intervals "
    "(PPI++, ppi_py) use the judge on every case and the reviews on the sample; the reviews-only interval beside "
    "each shows what the judge bought."
)
TRANSFER_NOTE = (
    "Perturbed accuracy of each target on the cases each generator made ({view}). Outlined cells are self-attacks "
    "(the target made the cases itself)."
)
SYCOPHANCY_NOTE = (
    'Accuracy (correct) on the unperturbed contexts with the task instruction ("answer unknown/conflict if ...") '
    "versus plain open-book; a negative change means the instruction made the model abstain on evidence that "
    "does answer the question."
)


def _pairs(info: Mapping[str, Any]) -> list[list[str]]:
    return [[str(k), v if isinstance(v, str) else json.dumps(v, default=str)] for k, v in info.items()]


def _nli_line(scored: Sequence[Mapping[str, Any]], backend: Any) -> str:
    if backend:
        return f"Entailment scores were produced by: **{backend}**."
    if any(r.get("entailment") is not None for r in scored):
        return "Entailment scores are present but the run did not record which NLI backend produced them."
    return "No entailment scores: no NLI model was given to the scorer."


def _validity_sections(validity: Mapping[str, Any] | None) -> list[Section]:
    """The figures of `experiments.validity.report_section`: the statement, its table, the notes."""
    if validity is None:
        return []
    rows = [
        {**row, "figure": str(row.get("figure", "")), "note": str(row.get("note") or "")}
        for row in validity.get("rows") or []
    ]
    title = f"Validity of the cases (run {validity.get('run_id')})"
    notes = [str(note) for note in validity.get("notes") or []]
    statement = str(validity.get("statement") or "")
    return [
        _table(title, rows, _VALIDITY_COLUMNS, note=statement, empty="No validity figures.", extra=[*notes, PPI_NOTE])
    ]


class EvaluationPage(Report):
    """The evaluation's page: run, validity, accuracy, every metric, transfer, ranks, breakdowns, the task
    instruction's effect, errors and a sample of cases. `tables` are `report_tables(scored, metric)`."""

    name = "report"

    def __init__(self, scored, tables, *, title, run_info, metric, sample_size, seed, validity):
        self.scored, self.tables, self.run_info, self.metric = scored, tables, run_info, metric
        self.sample, self.validity = (sample_size, seed), validity
        self.label = LABELS.get(metric, metric)
        self.title = title
        generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        self.intro = f"Generated {generated}. Headline metric: **{self.label}**. {INTERVALS}\n\n" + _nli_line(
            scored, run_info.get("nli_backend")
        )
        drawn = {
            ACCURACY_PNG: accuracy_figure(tables["accuracy"], metric),
            TRANSFER_PNG: transfer_figure(tables["transfer"]),
            RANKS_PNG: ranks_figure(tables["ranks"]),
        }
        self.drawn = {file: figure for file, figure in drawn.items() if figure is not None}

    def figures(self) -> dict[str, Any]:
        return self.drawn

    def _figure(self, file: str, alt: str) -> Figure | None:
        return Figure(file, alt) if file in self.drawn else None

    def sections(self) -> list[Section]:
        t, columns = self.tables, _accuracy_columns(self.label)
        overview = Section("Records", ["field", "value"], _pairs(_overview(self.scored)), level=3)
        return [
            Section("Run", ["field", "value"], _pairs(self.run_info), empty="No run information given."),
            overview,
            *_validity_sections(self.validity),
            *self._accuracy(columns),
            *self._metrics(columns),
            *self._transfer_and_ranks(),
            Section("Breakdowns"),
            _table("By source", t["by_source"], [*columns[:4], ("source", "source"), *columns[4:]], level=3),
            _table(
                "By answer position in the context",
                t["by_position"],
                [*columns[:4], ("answer_position", "answer position"), *columns[4:]],
                level=3,
            ),
            _table(
                "Task instruction on original contexts",
                t["sycophancy"],
                _SYCOPHANCY_COLUMNS,
                note=SYCOPHANCY_NOTE,
                empty="No seed was evaluated both open-book and with the task instruction.",
            ),
            _table("Errors", t["errors"], _ERROR_COLUMNS, empty="No records."),
            *sample_sections(self.scored, self.metric, *self.sample),
        ]

    def _accuracy(self, columns: Sequence[tuple[str, str]]) -> list[Section]:
        external = any(r.get("variant") == "external" for r in self.scored)
        return [
            _table(
                "Accuracy before and after perturbation",
                self.tables["accuracy"],
                columns,
                note=EXTERNAL_NOTE if external else "",
                figure=self._figure(ACCURACY_PNG, "accuracy before and after perturbation"),
                empty="No scored records.",
            ),
            _table(
                "Paired drop (same seeds, original − perturbed)",
                self.tables["paired_drop"],
                _DROP_COLUMNS,
                level=3,
                empty="No seed has an original and a perturbed result.",
            ),
            _table(
                "Normalised accuracy (perturbed, over seeds the target got right originally)",
                self.tables["normalised"],
                _NORMALISED_COLUMNS,
                level=3,
                empty="No paired seeds.",
            ),
        ]

    def _metrics(self, columns: Sequence[tuple[str, str]]) -> list[Section]:
        """One accuracy table per metric, each headed by that metric's label."""
        per_metric = self.tables["per_metric"]
        return [Section("All metrics", extra=[] if per_metric else ["No scores."])] + [
            _table(
                LABELS.get(m, m),
                rows,
                [("task", "task"), *columns[:4], ("rate", LABELS.get(m, m)), *columns[5:]],
                level=3,
            )
            for m, rows in per_metric.items()
        ]

    def _transfer_and_ranks(self) -> list[Section]:
        transfer = self.tables["transfer"]
        view = f"{transfer['setting'] or 'all settings'} · {transfer['decoding'] or 'all decodings'}"
        return [
            _table(
                "Transfer: generator × target",
                _transfer_rows(self.tables),
                _TRANSFER_COLUMNS,
                note=TRANSFER_NOTE.format(view=view),
                figure=self._figure(TRANSFER_PNG, "transfer matrix"),
                empty="No generated perturbed cases.",
            ),
            _table(
                "Rank changes",
                self.tables["ranks"],
                _RANK_COLUMNS,
                figure=self._figure(RANKS_PNG, "rank changes"),
                empty="No targets to rank.",
            ),
        ]


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
    """Write the `EvaluationPage` of `records` into out_dir (report.md, report.html with the plots inlined,
    accuracy.png, transfer.png and ranks.png when there is data for them) and report_tables.json.

    Records not yet scored (no "correct" field) are scored here without NLI. `metric` is the
    headline score of the accuracy, transfer, rank and breakdown sections (default task_correct:
    keywords for unanswerable/inconsistent, option choice for counterfactual, else correct).
    `validity` (from `experiments.validity.report_section`) adds a validity section: the
    statement, its table and notes. `tables` are `report_tables(scored_records(records), metric)`
    when the caller has them already (they are what the page shows). Returns the path of report.html.
    """
    out = Path(out_dir)
    scored = scored_records(records)
    tables = dict(tables) if tables is not None else report_tables(scored, metric)
    page = EvaluationPage(
        scored,
        tables,
        title=title,
        run_info=dict(run_info or {}),
        metric=metric,
        sample_size=sample_size,
        seed=seed,
        validity=validity,
    )
    written = write(page, out)
    (out / TABLES_FILE).write_text(json.dumps(jsonable(tables), indent=1, default=str), encoding="utf-8")
    log.info("wrote report %s (%d records, %d errored)", written.html_path, len(scored), sum(map(is_error, scored)))
    return written.html_path
