"""The blind sheet (reeval review --sheet / --import-sheet): what a reader sees, the key kept apart, and the
reader's verdict lines back into the run's verdict files, outside the validity figures for accepted-only draws."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from experiments.cli import app as cli_app
from experiments.review import load_verdicts
from experiments.review.sample import SAMPLE_FILE, read_sample
from experiments.review.sheet import (
    ACCEPTED_ONLY_DIR,
    DRAW_ACCEPTED_ONLY,
    DRAW_SAMPLE,
    SheetError,
    accepted_only_draw,
    import_sheet,
    key_path_for,
    parse_verdict_line,
    sample_draw,
    sheet_validity,
    write_sheet,
)
from experiments.run_store import RunStore
from experiments.validity.inputs import human_decisions
from metrics.intervals import wilson_interval
from tests.review_cases import ANDROID_ORIGINAL, POPULATION_IDS, SATURN_ORIGINAL, review_records, write_run

RUN = "review-fixture"
# Words and values that would tell a reader what the tool decided, or who made the case.
FORBIDDEN = (
    "status",
    "accepted",
    "rejected",
    "judge",
    "check",
    "p_valid",
    "0.91",
    "pivot",
    "program",
    "answer_swap/1",
    "qwen2.5-1.5b",
    "JUDGE-SECRET-REASON",
    "seed",
)


def _flat(text: str) -> str:
    """Whitespace-insensitive: the sheet wraps long lines."""
    return " ".join(text.split())


def _records(run_dir: Path) -> list[dict]:
    return RunStore(run_dir.name, root=run_dir.parent).records()


def _sample_sheet(run_dir: Path, out: Path) -> tuple[Path, Path]:
    draw = sample_draw(run_dir / "review", _records(run_dir), run_dir.name, None, None)
    return write_sheet(draw, run_dir.name, out)


def _many(n_accepted: int, n_rejected: int) -> list[dict]:
    base = review_records()[0]
    out = []
    for i in range(n_accepted + n_rejected):
        status = "accepted" if i < n_accepted else "rejected:judge_only_if"
        out.append(
            {**base, "id": f"s{i}:swap", "seed_id": f"s{i}", "status": status, "question": f"question number {i}?"}
        )
    return out


@pytest.fixture
def run_dir(tmp_path):
    return write_run(tmp_path / "runs", RUN)


# --------------------------------------------------------------------------------------------
# The sheet and its key


def test_sheet_holds_the_texts_and_nothing_that_gives_a_verdict_away(run_dir, tmp_path):
    sheet, key_path = _sample_sheet(run_dir, tmp_path / "out" / "sheet.md")
    text = sheet.read_text(encoding="utf-8")
    lowered = text.lower()
    for word in FORBIDDEN:
        assert word.lower() not in lowered, word
    for record in review_records():
        assert record["id"] not in text and record["seed_id"] not in text
    flat = _flat(text)
    for expected in (
        "what is the position of saturn in the solar system",
        _flat(SATURN_ORIGINAL),
        _flat(SATURN_ORIGINAL.replace("sixth planet from the Sun", "second planet from the Sun")),
        _flat(ANDROID_ORIGINAL),
        "`sixth planet from the Sun`",
        "`second planet from the Sun`",
        "`Leonardo da Vinci`",
        "should not answer the question",
        "A. luster",  # the options, lettered
        "NEW answer (the perturbed context should support it, and no other option): B. `mass`",
    ):
        assert expected in flat, expected
    # the multiple-choice question is shown without its option lines (they are listed once, below it)
    assert "Question: `Which property of a mineral can be determined just by looking at it?`" in text
    assert key_path == key_path_for(sheet) and key_path.name == "sheet.key.json"


def test_key_maps_every_number_in_the_sample_order(run_dir, tmp_path):
    sheet, key_path = _sample_sheet(run_dir, tmp_path / "sheet.md")
    key = json.loads(key_path.read_text(encoding="utf-8"))
    sample = read_sample(run_dir / "review" / SAMPLE_FILE)
    n = len(sample["cases"])
    assert key["run_id"] == RUN and key["draw"] == DRAW_SAMPLE
    assert list(key["cases"]) == [str(i) for i in range(1, n + 1)]
    assert [ids[0] for ids in key["cases"].values()] == [c["id"] for c in sample["cases"]]
    assert {i for ids in key["cases"].values() for i in ids} == POPULATION_IDS
    text = sheet.read_text(encoding="utf-8")
    assert [f"## Case {i} — " in text for i in range(1, n + 1)] == [True] * n
    assert f"## Case {n + 1} " not in text


def test_a_key_of_other_cases_is_not_overwritten(run_dir, tmp_path):
    out = tmp_path / "sheet.md"
    _sample_sheet(run_dir, out)
    _sample_sheet(run_dir, out)  # the same cases again: fine
    other = accepted_only_draw(_records(run_dir), RUN, 2, 5)
    with pytest.raises(SheetError, match="sheet.key.json exists and maps other cases"):
        write_sheet(other, RUN, out)


def test_cases_that_read_the_same_appear_once(tmp_path):
    records = review_records()
    twin = {**records[0], "id": "twin:swap", "seed_id": "twin"}
    run = write_run(tmp_path / "runs", RUN, [*records, twin])
    draw = accepted_only_draw(_records(run), RUN, 40, 0)
    sheet, key_path = write_sheet(draw, RUN, tmp_path / "sheet.md")
    key = json.loads(key_path.read_text(encoding="utf-8"))
    assert sheet.read_text(encoding="utf-8").count("what is the position of saturn") == 1
    (number,) = [n for n, ids in key["cases"].items() if "twin:swap" in ids]
    assert key["cases"][number] == ["-1012780730954675617:swap", "twin:swap"]
    verdicts = tmp_path / "verdicts.txt"
    verdicts.write_text(f"{number} | invalid | the old position is still implied\n", encoding="utf-8")
    done = import_sheet(verdicts, key_path, run / "review", RUN, "reader-1")
    assert done.appended == 2 and done.shared == 1
    assert sheet_validity(run, "reader-1").invalid == 2


# --------------------------------------------------------------------------------------------
# The accepted-only draw


def test_accepted_only_draws_only_accepted_cases_seeded(tmp_path):
    run = write_run(tmp_path / "runs", RUN, _many(30, 20))
    records = _records(run)
    status = {r["id"]: r["status"] for r in records}
    draw = accepted_only_draw(records, RUN, 12, 3)
    ids = [g[0]["id"] for g in draw.groups]
    assert draw.kind == DRAW_ACCEPTED_ONLY and len(ids) == 12 == len(set(ids))
    assert {status[i] for i in ids} == {"accepted"}
    assert ids == [g[0]["id"] for g in accepted_only_draw(records, RUN, 12, 3).groups]  # seeded
    assert ids != [g[0]["id"] for g in accepted_only_draw(records, RUN, 12, 4).groups]
    everything = accepted_only_draw(records, RUN, 40, 0)  # fewer accepted than asked: all of them
    assert sorted(g[0]["id"] for g in everything.groups) == sorted(i for i, s in status.items() if s == "accepted")
    assert not (run / "review" / SAMPLE_FILE).exists()  # the stratified sample is not drawn by it


def test_accepted_only_leaves_out_baselines(run_dir):
    ids = {g[0]["id"] for g in accepted_only_draw(_records(run_dir), RUN, 40, 0).groups}
    assert ids == {"-1012780730954675617:swap", "-1004168810822878148:swap", "Mercury_7175875:counterfactual"} | {
        "-88:unanswerable"
    }


def test_accepted_only_verdicts_stay_out_of_validity_and_have_their_own_figure(tmp_path):
    run = write_run(tmp_path / "runs", RUN, _many(10, 5))
    _, key_path = write_sheet(accepted_only_draw(_records(run), RUN, 6, 1), RUN, tmp_path / "acc.md")
    verdicts = tmp_path / "acc.txt"
    verdicts.write_text(
        "1 | valid | ok\n2 | valid | ok\n3 | invalid | old answer left\n4 | valid | ok\n5 | unsure | gold looks wrong\n"
        "6 | valid | ok\n\nvalid / invalid / unsure: 4 / 1 / 1\n",
        encoding="utf-8",
    )
    done = import_sheet(verdicts, key_path, run / "review", RUN, "reader-1")
    assert done.draw == DRAW_ACCEPTED_ONLY and done.path == run / "review" / ACCEPTED_ONLY_DIR / "reader-1.jsonl"
    assert human_decisions(run) == ({}, [])  # `reeval validity` reads review/*.jsonl only
    figure = sheet_validity(run, "reader-1")
    assert (figure.valid, figure.invalid, figure.unsure, figure.n) == (4, 1, 1, 5)
    assert (figure.low, figure.high) == wilson_interval(4, 5) and figure.rate == 0.8
    kinds = json.loads((run / "review" / "reviewers.json").read_text(encoding="utf-8"))
    assert kinds == {"reader-1": "independent reader, blind"}


# --------------------------------------------------------------------------------------------
# Reading verdicts back


@pytest.mark.parametrize(
    "line, expected",
    [
        ("3 | valid | fine", (3, "valid", "fine")),
        ("  - 12 | INVALID | 'July' is still there | twice  ", (12, "invalid", "'July' is still there | twice")),
        ("* **7** | Unsure | gold looks wrong", (7, "unsure", "gold looks wrong")),
        ("| 4 | valid | ok |", (4, "valid", "ok")),
        ("`5` | **invalid** | x", (5, "invalid", "x")),
        ("9 | valid", (9, "valid", "")),
        ("valid / invalid / unsure: 30 / 8 / 2", None),
        ("30 valid, 8 invalid", None),
        ("| N | verdict | reason |", None),
        ("|---|---|---|", None),
        ("Failure kinds: original answer left (5)", None),
    ],
)
def test_verdict_lines_are_read_leniently(line, expected):
    verdict = parse_verdict_line(line, "v.txt:1")
    assert (verdict and (verdict.number, verdict.verdict, verdict.reason)) == expected


def test_import_round_trips_to_verdict_records(run_dir, tmp_path):
    _, key_path = _sample_sheet(run_dir, tmp_path / "sheet.md")
    cases = json.loads(key_path.read_text(encoding="utf-8"))["cases"]
    verdicts = tmp_path / "verdicts.txt"
    verdicts.write_text(
        'Final report\n\n1 | valid | clean swap\n- 2 | Invalid | "July 2005" still implied\n'
        "| 3 | UNSURE | question ambiguous |\n* **4** | valid | fine\n5 | invalid | two answers\n6 | valid | ok\n\n"
        "Counts: valid 3 / invalid 2 / unsure 1\n- original answer left: 1\n",
        encoding="utf-8",
    )
    done = import_sheet(verdicts, key_path, run_dir / "review", RUN, "reader-1")
    assert done.draw == DRAW_SAMPLE and done.missing == [] and done.appended == 6
    got = {v.id: (v.verdict, v.note, v.annotator) for v in load_verdicts(run_dir / "review" / "reader-1.jsonl")}
    expected_labels = ["valid", "invalid", "unsure", "valid", "invalid", "valid"]
    expected_notes = ["clean swap", '"July 2005" still implied', "question ambiguous", "fine", "two answers", "ok"]
    assert got == {
        cases[str(n)][0]: (label, note, "reader-1")
        for n, label, note in zip(range(1, 7), expected_labels, expected_notes, strict=True)
    }
    line = json.loads((run_dir / "review" / "reader-1.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert set(line) == {"id", "annotator", "verdict", "note", "at"}
    decisions, annotators = human_decisions(run_dir)  # the sample's verdicts count for validity
    assert annotators == ["reader-1"] and decisions[cases["1"][0]] is True


@pytest.mark.parametrize(
    "text, where, message",
    [
        ("1 | valid | a\n7 | valid | b\n", ":2:", "case 7 is not on the sheet"),
        ("1 | valid | a\n2 | valid | b\n1 | invalid | c\n", ":3:", "case 1 has a verdict already"),
        ("intro\n2 | vaild | typo\n", ":2:", "'vaild' is not a verdict"),
        ("no verdicts here\n", "", "no verdict lines"),
    ],
)
def test_malformed_verdicts_name_file_and_line_and_write_nothing(run_dir, tmp_path, text, where, message):
    _, key_path = _sample_sheet(run_dir, tmp_path / "sheet.md")
    verdicts = tmp_path / "verdicts.txt"
    verdicts.write_text(text, encoding="utf-8")
    with pytest.raises(SheetError) as caught:
        import_sheet(verdicts, key_path, run_dir / "review", RUN, "reader-1")
    assert f"{verdicts}{where}" in str(caught.value) and message in str(caught.value)
    assert not (run_dir / "review" / "reader-1.jsonl").exists()
    assert not (run_dir / "review" / "reviewers.json").exists()


def test_a_key_of_another_run_is_refused(run_dir, tmp_path):
    other = write_run(tmp_path / "runs", "other-run")
    _, key_path = _sample_sheet(other, tmp_path / "sheet.md")
    verdicts = tmp_path / "verdicts.txt"
    verdicts.write_text("1 | valid | a\n", encoding="utf-8")
    with pytest.raises(SheetError, match=rf"{key_path}: the key of a sheet of run 'other-run', not of '{RUN}'"):
        import_sheet(verdicts, key_path, run_dir / "review", RUN, "reader-1")
    key_path.write_text("{}", encoding="utf-8")
    with pytest.raises(SheetError, match=f"{key_path}: not a sheet's key"):
        import_sheet(verdicts, key_path, run_dir / "review", RUN, "reader-1")


def test_a_name_recorded_as_another_kind_of_reviewer_is_refused(run_dir, tmp_path):
    _, key_path = _sample_sheet(run_dir, tmp_path / "sheet.md")
    (run_dir / "review" / "reviewers.json").write_text(json.dumps({"reviewer-1": "maintainer, blind"}))
    verdicts = tmp_path / "verdicts.txt"
    verdicts.write_text("1 | valid | a\n", encoding="utf-8")
    with pytest.raises(SheetError, match="records 'reviewer-1' as 'maintainer, blind'"):
        import_sheet(verdicts, key_path, run_dir / "review", RUN, "reviewer-1")
    assert not (run_dir / "review" / "reviewer-1.jsonl").exists()
    import_sheet(verdicts, key_path, run_dir / "review", RUN, "reader-2", "student, blind")
    kinds = json.loads((run_dir / "review" / "reviewers.json").read_text(encoding="utf-8"))
    assert kinds == {"reviewer-1": "maintainer, blind", "reader-2": "student, blind"}


# --------------------------------------------------------------------------------------------
# End to end through the CLI


def _invoke(*args: str):
    return CliRunner().invoke(cli_app, ["review", *args])


@pytest.fixture
def cli_run(isolated):
    return write_run(isolated / "runs", RUN)


def test_cli_sheet_and_import_end_to_end(cli_run, tmp_path):
    out = tmp_path / "blind" / "sheet.md"
    result = _invoke(RUN, "--sheet", str(out), "--log-level", "WARNING")
    assert result.exit_code == 0, result.output
    key = json.loads(key_path_for(out).read_text(encoding="utf-8"))
    assert {i for ids in key["cases"].values() for i in ids} == POPULATION_IDS  # the page's sample
    assert str(key_path_for(out)) in _flat(result.output)
    verdicts = tmp_path / "verdicts.txt"
    verdicts.write_text("1 | valid | ok\n2 | invalid | old answer implied\n\nvalid 1 / invalid 1\n", encoding="utf-8")
    result = _invoke(RUN, "--import-sheet", str(verdicts), "--key", str(key_path_for(out)), "--annotator", "reader-1")
    assert result.exit_code == 0, result.output
    assert "not answered: 3, 4, 5, 6" in result.output
    got = {v.id: v.verdict for v in load_verdicts(cli_run / "review" / "reader-1.jsonl")}
    assert got == {key["cases"]["1"][0]: "valid", key["cases"]["2"][0]: "invalid"}
    kinds = json.loads((cli_run / "review" / "reviewers.json").read_text(encoding="utf-8"))
    assert kinds == {"reader-1": "independent reader, blind"}


def test_cli_accepted_only_sheet_prints_its_own_figure(cli_run, tmp_path):
    out = tmp_path / "acc.md"
    result = _invoke(
        RUN, "--sheet", str(out), "--accepted-only", "--sample", "3", "--seed", "1", "--log-level", "ERROR"
    )
    assert result.exit_code == 0, result.output
    assert "accepted" not in out.read_text(encoding="utf-8").lower()
    verdicts = tmp_path / "acc.txt"
    verdicts.write_text("1 | valid | a\n2 | valid | b\n3 | invalid | c\n", encoding="utf-8")
    result = _invoke(
        RUN,
        "--import-sheet",
        str(verdicts),
        "--key",
        str(key_path_for(out)),
        "--annotator",
        "reader-1",
        "--log-level",
        "ERROR",
    )
    assert result.exit_code == 0, result.output
    flat = _flat(result.output)
    assert "2 valid, 1 invalid, 0 unsure; valid share 67% [21%, 94%] (Wilson 95%) over n=3" in flat
    assert (cli_run / "review" / ACCEPTED_ONLY_DIR / "reader-1.jsonl").exists()
    assert not (cli_run / "review" / "reader-1.jsonl").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sheet", "s.md", "--import-sheet", "v.txt"], "--sheet and --import-sheet are separate steps"),
        (["--accepted-only"], "--accepted-only chooses the cases of a --sheet"),
        (["--import-sheet", "v.txt", "--annotator", "reader-1"], "needs the sheet's --key"),
    ],
)
def test_cli_option_mistakes_exit_2(cli_run, args, message):
    result = _invoke(RUN, *args)
    assert result.exit_code == 2 and message in result.stderr, result.output


def test_cli_malformed_verdicts_exit_2_naming_file_and_line(cli_run, tmp_path):
    out = tmp_path / "sheet.md"
    assert _invoke(RUN, "--sheet", str(out)).exit_code == 0
    verdicts = tmp_path / "verdicts.txt"
    verdicts.write_text("1 | valid | a\n99 | invalid | b\n", encoding="utf-8")
    result = _invoke(RUN, "--import-sheet", str(verdicts), "--key", str(key_path_for(out)), "--annotator", "r")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{verdicts}:2: case 99 is not on the sheet" in _flat(result.stderr)
