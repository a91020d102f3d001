"""Spreadsheet safety of the review CSV: no exported cell starts a formula (OWASP's rule: a single quote
before =, +, -, @, tab, carriage return), and what was exported reads back unchanged."""

import csv
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from experiments.review import export_for_review, load_verdicts
from experiments.review.verdicts import _csv_cell, _uncell

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
LEGITIMATE = ["-3 degrees", "+44 20 7946 0958", "@home", "=", "'quoted'", "'=not a formula'", "''", "\tindented", "-"]
HOSTILE = ['=HYPERLINK("http://evil.example","click")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=2+2"]


@given(st.text())
@example("'=1+1")  # found: a value opening with a quote before a formula sign lost its quote on reading
@example("'")
def test_a_cell_is_neutralised_and_reads_back_as_it_was(value):
    cell = _csv_cell(value)
    assert not cell.startswith(FORMULA_START)
    assert _uncell(cell) == value


def _annotate(exported: Path, annotated: Path, notes: dict[str, str]) -> None:
    """An annotator's spreadsheet: every cell kept as it was read, a verdict and a note typed in."""
    with open(exported, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    for row in rows[1:]:
        row[header.index("verdict")] = "valid"
        row[header.index("note")] = notes[row[header.index("id")]]
    with open(annotated, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)


def test_hostile_cells_are_neutralised_and_legitimate_ones_round_trip(tmp_path):
    values = LEGITIMATE + HOSTILE
    records = [
        {"id": v, "task": "answer_swap", "question": h, "context": h, "answers": [h], "status": "accepted"}
        for v, h in zip(values, HOSTILE * 3, strict=False)
    ]
    export_for_review(records, tmp_path / "review.jsonl")
    with open(tmp_path / "review.csv", encoding="utf-8-sig", newline="") as f:
        cells = [cell for row in csv.reader(f) for cell in row]
    assert not [c for c in cells if c.startswith(FORMULA_START)]
    assert "'-3 degrees" in cells and '\'=HYPERLINK("http://evil.example","click")' in cells
    notes = {_csv_cell(v): "-3 degrees, as typed" for v in values}
    _annotate(tmp_path / "review.csv", tmp_path / "alice.csv", notes)
    verdicts = load_verdicts(tmp_path / "alice.csv")
    assert [v.id for v in verdicts] == [v.strip() for v in values]  # load_verdicts strips ids, as documented
    assert {v.note for v in verdicts} == {"-3 degrees, as typed"}


# Ids as the review sample writes them: no surrounding blanks (load_verdicts strips those by design).
ids = st.text(st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=12).filter(
    lambda s: s == s.strip() and s
)


@given(st.lists(ids, min_size=1, max_size=5, unique=True), st.text(max_size=40))
@example(["-3 degrees", "'=1+1", "@x"], "=cmd")
def test_exported_ids_read_back_unchanged(tmp_path_factory, case_ids, text):
    folder = tmp_path_factory.mktemp("csv")
    records = [{"id": i, "question": text, "context": text, "answers": [text], "status": "accepted"} for i in case_ids]
    export_for_review(records, folder / "review.jsonl")
    with open(folder / "review.csv", encoding="utf-8-sig", newline="") as f:
        assert not [c for row in csv.reader(f) for c in row if c.startswith(FORMULA_START)]
    _annotate(folder / "review.csv", folder / "bob.csv", {_csv_cell(i): "" for i in case_ids})
    assert [v.id for v in load_verdicts(folder / "bob.csv")] == case_ids
