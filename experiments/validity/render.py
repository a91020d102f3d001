"""Validity figures as words and table rows, for the terminal (rich), the evaluation report and the validity
page (a report_page Report, logged beside validity.json)."""

from __future__ import annotations

import math
from typing import Any

from experiments.report_page import Report, Section
from experiments.validity.run import CALIBRATION_ACCURACY, RunValidity
from metrics.validity import Estimate


def _pct(x: float) -> str:
    return "—" if x is None or math.isnan(x) else f"{100 * x:.0f}%"


def reviewers(rv: RunValidity) -> str:
    """Who the reviews come from: "1 reviewer (reviewer-1: maintainer, blind)"."""
    ids = rv.inputs.annotators
    kinds = rv.inputs.reviewer_kinds
    named = "; ".join(f"{i}: {kinds[i]}" if kinds.get(i) else i for i in ids)
    return f"{len(ids)} reviewer{'' if len(ids) == 1 else 's'} ({named})"


def judge_reading(rv: RunValidity) -> str:
    """What the judge read and what became of it: its own verdicts, and the cases a later step dropped (the
    acceptance score), which "accepted of judged" alone would hide."""
    f = rv.figures
    read = rv.inputs.judge_read
    later = {s: n for s, n in read.items() if s != "accepted" and not s.startswith(("rejected:judge", "error:judge"))}
    if not later:
        return f"The judge accepted {f.judge_accepted_n} of {f.judged_n} judged cases ({_pct(f.judge_acceptance)})"
    total = sum(read.values())
    dropped = sum(later.values())
    which = ", ".join(f"{s} {n}" for s, n in later.items())
    return (
        f"The judge read {total} cases: {dropped} of them were dropped after its reading ({which}); of the "
        f"other {f.judged_n}, it accepted {f.judge_accepted_n} ({_pct(f.judge_acceptance)})"
    )


def statement(rv: RunValidity) -> str:
    """One plain sentence (or two) on what the run's validity rests on."""
    f = rv.figures
    calibration = rv.calibration.get(CALIBRATION_ACCURACY)
    calib = f"; its accuracy on the calibration controls was {_pct(calibration)}" if calibration is not None else ""
    if f.judge_alone:
        if not f.judged:
            return f"Validity rests on the string checks alone: no judge and no review ({f.judged_n} accepted cases)."
        return f"Validity is the judge's alone: no review of this run. {judge_reading(rv)}{calib}."
    text = f"{f.reviewed_n} reviewed case(s) by {reviewers(rv)}: {_pct(f.human_valid_rate)} valid by their majority."
    ppi, classical = f.accepted_valid_ppi, f.accepted_valid_classical
    if ppi is not None and ppi.defined:
        text += (
            f" Valid share of the {ppi.n_population} accepted cases: {_pct(ppi.estimate)} "
            f"[{_pct(ppi.low)}, {_pct(ppi.high)}] (prediction-powered; reviews alone: "
            f"[{_pct(classical.low)}, {_pct(classical.high)}])."
        )
    elif ppi is not None:
        text += f" Valid share of accepted cases: not identified ({ppi.note})."
    return text


def _row(figure: str, est: Estimate | None, **extra: Any) -> dict[str, Any]:
    if est is None:
        return {"figure": figure, "estimate": None, "low": None, "high": None, "n": None, "note": ""}
    return {
        "figure": figure,
        "estimate": est.estimate,
        "low": est.low,
        "high": est.high,
        "n": est.n_labelled,
        "note": est.note,
        **extra,
    }


def validity_rows(rv: RunValidity) -> list[dict[str, Any]]:
    """Rows {figure, estimate, low, high, n, note}; n is the number of reviewed cases used."""
    f = rv.figures
    rows = [
        {
            "figure": "judge acceptance (judged cases)" if f.judged else "accepted cases",
            "estimate": f.judge_acceptance if f.judged else None,
            "low": None,
            "high": None,
            "n": f.judged_n,
            "note": "",
        }
    ]
    if CALIBRATION_ACCURACY in rv.calibration:
        rows.append(
            {
                "figure": "judge accuracy on calibration controls",
                "estimate": rv.calibration[CALIBRATION_ACCURACY],
                "low": None,
                "high": None,
                "n": rv.calibration.get("judge_calibration.n"),
                "note": "",
            }
        )
    if f.judge_alone:
        return rows
    rows.append(
        {
            "figure": "reviewed-valid share of the reviewed sample (Wilson)",
            "estimate": f.human_valid_rate,
            "low": f.human_valid_low,
            "high": f.human_valid_high,
            "n": f.reviewed_n,
            "note": f"{f.undecided_n} without a majority" if f.undecided_n else "",
        }
    )
    if f.judged:
        rows.append(_row("judge precision (stratum-weighted)", f.judge_precision))
        rows.append(_row("judge recall (stratum-weighted)", f.judge_recall))
        rows.append(_row("judge Cohen's kappa (stratum-weighted)", f.judge_kappa))
    rows.append(_row("valid share of accepted cases — prediction-powered", f.accepted_valid_ppi))
    rows.append(_row("valid share of accepted cases — reviews only", f.accepted_valid_classical))
    for key, pair in f.attack_success.items():
        rows.append(_row(f"attack success on valid cases, {key} — prediction-powered", pair["ppi"]))
        rows.append(_row(f"attack success on valid cases, {key} — reviews only", pair["classical"]))
    return rows


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


COLUMNS = (("figure", "left"), ("estimate", "right"), ("95% CI", "right"), ("n", "right"), ("note", "left"))


def _cells(row: dict[str, Any]) -> list[str]:
    ci = "—" if row["low"] is None or math.isnan(row["low"]) else f"[{row['low']:.3f}, {row['high']:.3f}]"
    return [row["figure"], _fmt(row["estimate"]), ci, _fmt(row["n"]), row.get("note") or ""]


def rich_table(rv: RunValidity):
    from rich.table import Table

    table = Table(title=f"validity — {rv.run_id}")
    for column, justify in COLUMNS:
        # Figures name targets by label, and labels may differ only at their end (two servers of one model):
        # folded, a long figure stays whole; cut with an ellipsis, two could read the same.
        table.add_column(column, justify=justify, overflow="fold")
    for row in validity_rows(rv):
        table.add_row(*_cells(row))
    return table


def validity_section(rv: RunValidity) -> Section:
    """The figures' table under the statement, the notes after it."""
    rows = [_cells(row) for row in validity_rows(rv)]
    return Section("Validity", [c for c, _ in COLUMNS], rows, note=statement(rv), extra=list(rv.notes))


class ValidityPage(Report):
    """A run's validity as a page of its own (validity.md, validity.html)."""

    name = "validity"

    def __init__(self, rv: RunValidity):
        self.rv = rv
        self.title = f"validity — {rv.run_id}"

    def sections(self) -> list[Section]:
        return [validity_section(self.rv)]


def report_section(rv: RunValidity) -> dict[str, Any]:
    """What `experiments.report.write_report(validity=...)` shows: plain data, escaped there."""
    return {"run_id": rv.run_id, "statement": statement(rv), "rows": validity_rows(rv), "notes": rv.notes}
