"""Every figure of the evaluation report as an MLflow metric of the run, so runs compare in the MLflow UI.

A name is the table, then the row's keys, then (except for the row's headline figure) the field,
joined by dots; model ids and other parts keep their spelling except characters MLflow refuses
(see `experiments.tracking.metric_name`). Filter in the UI with a substring: ``em.``,
``.open_book.``, a model id, ``.perturbed``.

Report table → name: headline figure; other fields as suffixes.

- accuracy (headline): ``acc.<target>.<setting>.<decoding>.<variant>``: rate; lo, hi, n, errors
- all metrics: ``<metric>.<task>.<target>.<setting>.<decoding>.<variant>``: rate; lo, hi, n, errors
- paired drop: ``drop.<task>.<target>.<setting>.<decoding>``: drop; lo, hi, n, errors, original, perturbed
- normalised accuracy: ``norm_acc.<task>.<target>.<setting>.<decoding>``: rate; lo, hi, n, errors,
  originals, originals_right
- transfer: ``transfer.<generator>.<target>.<setting>.<decoding>``: perturbed accuracy; lo, hi, n,
  errors; ``transfer_drop.…`` the same for the drop from the originals
- rank changes: ``rank.<target>.<setting>.<decoding>``: change; original, perturbed, n_original,
  n_perturbed, rank_original, rank_perturbed
- breakdowns: ``by_source.<source>.…`` and ``by_position.<position>.…`` then
  ``<target>.<setting>.<decoding>.<variant>``: rate; lo, hi, n, errors
- task instruction on originals: ``task_instruction.<task>.<target>.<decoding>``: change; lo, hi, n,
  errors, open_book, task_instruction
- errors: ``errors.<target>.<setting>.<decoding>``: errors; records, and one per error kind

``<metric>`` is the name of a score (`metrics.scores.SCORES`: em, f1, correct, …); ``<variant>``
original, perturbed or external. A figure the report shows as "—" (no data: NaN) is not logged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from experiments.tracking import metric_name
from metrics.scores import SCORE_NAMES

# table -> (name prefix, the row keys in the name, the headline field)
ROW_TABLES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "accuracy": ("acc", ("target", "setting", "decoding", "variant"), "rate"),
    "paired_drop": ("drop", ("task", "target", "setting", "decoding"), "drop"),
    "normalised": ("norm_acc", ("task", "target", "setting", "decoding"), "rate"),
    "ranks": ("rank", ("target", "setting", "decoding"), "change"),
    "by_source": ("by_source", ("source", "target", "setting", "decoding", "variant"), "rate"),
    "by_position": ("by_position", ("answer_position", "target", "setting", "decoding", "variant"), "rate"),
    "sycophancy": ("task_instruction", ("task", "target", "decoding"), "change"),
    "errors": ("errors", ("target", "setting", "decoding"), "errors"),
}
PER_METRIC_KEYS: tuple[str, ...] = ("task", "target", "setting", "decoding", "variant")
# Fields that are labels, not figures.
_NOT_FIGURES = frozenset({"metric", "self_attack", "kinds"})
_SUFFIX = {"low": "lo", "high": "hi"}
DETAIL_PREFIXES: tuple[str, ...] = tuple(
    f"{prefix}."
    for prefix in (
        *(p for p, _, _ in ROW_TABLES.values() if p != "acc"),
        "transfer",
        "transfer_drop",
        *SCORE_NAMES,
    )
)
_ACC_DETAIL = tuple(f".{s}" for s in ("lo", "hi", "n", "errors"))


def _figure(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def _row_metrics(
    prefix: str, parts: Sequence[Any], row: Mapping[str, Any], headline: str, skip: Sequence[str] = ()
) -> dict[str, float]:
    """`prefix.<parts>` for the headline field, `prefix.<parts>.<field>` for the row's other figures."""
    out = {}
    for field, value in row.items():
        figure = _figure(value)
        if figure is None or field in _NOT_FIGURES or field in skip:
            continue
        suffix = () if field == headline else (_SUFFIX.get(field, field),)
        out[metric_name(prefix, *parts, *suffix)] = figure
    return out


def report_metrics(tables: Mapping[str, Any]) -> dict[str, float]:
    """Every figure of `experiments.report.report_tables(...)` under its metric name (module docstring)."""
    out: dict[str, float] = {}
    for table, (prefix, keys, headline) in ROW_TABLES.items():
        for row in tables.get(table) or []:
            parts = [row.get(k) for k in keys]
            out.update(_row_metrics(prefix, parts, row, headline, skip=keys))
            if table == "errors":
                out.update(
                    {
                        metric_name(prefix, *parts, kind): float(count)
                        for kind, count in (row.get("kinds") or {}).items()
                    }
                )
    for metric, rows in (tables.get("per_metric") or {}).items():
        for row in rows:
            out.update(_row_metrics(metric, [row.get(k) for k in PER_METRIC_KEYS], row, "rate", skip=PER_METRIC_KEYS))
    for table in ("transfer", "transfer_drop"):
        matrix = tables.get(table)
        if not matrix:
            continue
        view = (matrix.get("setting") or "all", matrix.get("decoding") or "all")
        for generator, cells in matrix["cells"].items():
            for target, cell in cells.items():
                out.update(_row_metrics(table, [generator, target, *view], cell, "value"))
    return out


def is_detail(name: str) -> bool:
    """A report figure beyond the headline accuracy (what `reeval run` and `reeval show` leave to MLflow)."""
    return name.startswith(DETAIL_PREFIXES) or (name.startswith("acc.") and name.endswith(_ACC_DETAIL))
