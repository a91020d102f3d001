"""Human review: export, verdict files, majority vote, agreement (hand-computed kappas), apply."""

import copy
import csv
import json
import logging

import pytest

from experiments.review import (
    ReviewFormatError,
    Verdict,
    VoteResult,
    _fleiss_kappa,
    agreement,
    apply_review,
    export_for_review,
    load_verdicts,
    majority_vote,
)


def _case(i, status="accepted", **extra):
    return {
        "id": f"c{i}",
        "task": "answer_swap",
        "question": f"Who wrote book {i}?",
        "context": f'Book {i} was written by Author {i}.\nIt sold well, "surprisingly", in 1990.',
        "answers": [f"Author {i}", f"A. {i}"],
        "status": status,
        **extra,
    }


def _v(case_id, annotator, label):
    return Verdict(id=case_id, annotator=annotator, verdict=label)


def _write_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --------------------------------------------------------------------------------------------
# Export


def test_export_writes_jsonl_and_identical_csv_twin(tmp_path):
    records = [
        _case(1, options=["A", "B"], judge={"if": "yes", "only_if": "no"}),
        _case(2),
        _case(3, status="rejected:judge"),
        _case(4, status="error:parse", context=None),
    ]
    before = copy.deepcopy(records)
    n = export_for_review(records, tmp_path / "review.jsonl")

    assert n == 2 and records == before
    rows = _read_jsonl(tmp_path / "review.jsonl")
    assert [r["id"] for r in rows] == ["c1", "c2"]
    assert list(rows[0]) == [
        "id",
        "task",
        "question",
        "context",
        "expected_answer",
        "options",
        "verdict",
        "note",
        "judge",
    ]
    assert rows[0]["expected_answer"] == "Author 1 | A. 1"
    assert rows[0]["verdict"] is None and rows[0]["note"] == ""
    assert rows[0]["judge"] == {"if": "yes", "only_if": "no"} and rows[1]["judge"] is None

    with open(tmp_path / "review.csv", encoding="utf-8-sig", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    assert list(csv_rows[0]) == list(rows[0])
    for jrow, crow in zip(rows, csv_rows, strict=True):
        for key, value in jrow.items():
            # Non-string cells are JSON in the CSV, None is an empty cell.
            expected = "" if value is None else value if isinstance(value, str) else json.dumps(value)
            assert crow[key] == expected, key
    assert csv_rows[0]["context"] == records[0]["context"]  # newline and quotes survive


def test_csv_cells_never_start_a_formula_and_ids_round_trip(tmp_path):
    records = [
        _case(1, id="-1180168003678804636", question='=HYPERLINK("http://x","click")', context="@SUM(A1:A9) +1 -2")
    ]
    export_for_review(records, tmp_path / "review.jsonl")
    with open(tmp_path / "review.csv", encoding="utf-8-sig", newline="") as f:
        row = next(csv.DictReader(f))
    assert row["question"].startswith("'=") and row["context"].startswith("'@") and row["id"].startswith("'-")
    with open(tmp_path / "review.csv", encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["verdict"] = "valid"
    with open(tmp_path / "alice.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    [verdict] = load_verdicts(tmp_path / "alice.csv")
    assert verdict.id == "-1180168003678804636" and verdict.verdict == "valid"


def test_export_without_options_or_judge_has_no_such_columns(tmp_path):
    export_for_review([_case(1)], tmp_path / "r.jsonl")
    assert list(_read_jsonl(tmp_path / "r.jsonl")[0]) == [
        "id",
        "task",
        "question",
        "context",
        "expected_answer",
        "verdict",
        "note",
    ]


def test_export_sample_is_seeded_and_keeps_input_order(tmp_path):
    records = [_case(i) for i in range(20)]
    ids = []
    for name in ("a", "b"):
        assert export_for_review(records, tmp_path / f"{name}.jsonl", sample=5, seed=3) == 5
        ids.append([r["id"] for r in _read_jsonl(tmp_path / f"{name}.jsonl")])
    assert ids[0] == ids[1]
    assert ids[0] == sorted(ids[0], key=lambda s: int(s[1:]))
    export_for_review(records, tmp_path / "c.jsonl", sample=5, seed=4)
    assert [r["id"] for r in _read_jsonl(tmp_path / "c.jsonl")] != ids[0]


def test_export_status_prefix_and_refuses_to_overwrite(tmp_path):
    records = [_case(1), _case(2, status="rejected:judge"), _case(3, status="rejected:dup")]
    path = tmp_path / "r.jsonl"
    assert export_for_review(records, path, statuses=("rejected",)) == 2
    with pytest.raises(FileExistsError, match="overwrite=True"):
        export_for_review(records, path)
    assert export_for_review(records, path, overwrite=True) == 1
    with pytest.raises(ValueError, match=".jsonl"):
        export_for_review(records, tmp_path / "r.csv")


# --------------------------------------------------------------------------------------------
# Loading verdicts


def test_load_csv_synonyms_stem_annotator_and_empty_skipped(tmp_path):
    path = _write_csv(
        tmp_path / "alice.csv",
        [
            ["id", "question", "verdict", "note"],
            ["c1", "multi\nline", " Yes ", "fine"],
            ["c2", "q", "REJECT", ""],
            ["c3", "q", "", ""],
            ["c4", "q", "1", ""],
            ["c5", "q", "False", ""],
            ["c6", "q"],  # a tool that drops trailing empty cells
        ],
    )
    verdicts = load_verdicts(path)
    assert [(v.id, v.annotator, v.verdict) for v in verdicts] == [
        ("c1", "alice", "valid"),
        ("c2", "alice", "invalid"),
        ("c4", "alice", "valid"),
        ("c5", "alice", "invalid"),
    ]
    assert verdicts[0].note == "fine" and verdicts[0].source == f"{path}:2"


def test_load_jsonl_with_annotator_column_and_json_types(tmp_path):
    path = tmp_path / "batch1.jsonl"
    rows = [
        {"id": "c1", "annotator": "bob", "verdict": True},
        {"id": "c2", "annotator": "bob", "verdict": 0},
        {"id": "c3", "annotator": "", "verdict": "accept"},
        {"id": "c4", "annotator": "bob", "verdict": None},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    got = [(v.id, v.annotator, v.verdict) for v in load_verdicts([path])]
    assert got == [("c1", "bob", "valid"), ("c2", "bob", "invalid"), ("c3", "batch1", "valid")]


def test_bad_verdict_names_file_line_and_field_past_multiline_cells(tmp_path):
    path = _write_csv(
        tmp_path / "alice.csv",
        [
            ["id", "context", "verdict"],
            ["c1", "two\nlines", "valid"],  # physical lines 2-3
            ["c2", "x", "maybe"],  # physical line 4
        ],
    )
    with pytest.raises(ReviewFormatError, match=r"alice\.csv:4: field 'verdict': 'maybe'"):
        load_verdicts(path)


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (
            '{"id": "c1", "verdict": "valid"}\n{"id": "c2", "verdict": "perhaps"}\n',
            r"x\.jsonl:2: field 'verdict': 'perhaps'",
        ),
        ('{"id": "c1", "verdict": "valid"}\n{"id": "c2", "verdict": 2}\n', r"x\.jsonl:2: field 'verdict': 2"),
        ('{"id": "c1", "verdict": "valid"}\n{"id": "c2"\n', r"x\.jsonl:2: invalid JSON"),
        ('["c1", "valid"]\n', r"x\.jsonl:1: expected a JSON object"),
        ('{"id": "", "verdict": "valid"}\n', r"x\.jsonl:1: field 'id'"),
        ('{"id": "c1"}\n', r"x\.jsonl:1: field 'verdict': missing"),
    ],
)
def test_malformed_jsonl_names_file_line_and_field(tmp_path, content, pattern):
    path = tmp_path / "x.jsonl"
    path.write_text(content)
    with pytest.raises(ReviewFormatError, match=pattern):
        load_verdicts(path)


def test_malformed_csv_header_and_unknown_format(tmp_path):
    path = _write_csv(tmp_path / "a.csv", [["id", "label"], ["c1", "valid"]])
    with pytest.raises(ReviewFormatError, match=r"a\.csv:1: field 'verdict': missing column"):
        load_verdicts(path)
    (tmp_path / "a.xlsx").write_bytes(b"")
    with pytest.raises(ReviewFormatError, match=r"a\.xlsx: unsupported"):
        load_verdicts(tmp_path / "a.xlsx")


def test_repeated_id_annotator_in_one_file_keeps_the_later_row(tmp_path):
    # The review page appends when an annotator changes a verdict: within one file the later row wins.
    path = _write_csv(tmp_path / "alice.csv", [["id", "verdict"], ["c1", "yes"], ["c2", "no"], ["c1", "no"]])
    verdicts = load_verdicts(path)
    assert [(v.id, v.verdict, v.source) for v in verdicts] == [
        ("c1", "invalid", f"{path}:4"),
        ("c2", "invalid", f"{path}:3"),
    ]


def test_duplicate_across_files_hints_at_annotator_column(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _write_csv(tmp_path / "a" / "review.csv", [["id", "verdict"], ["c1", "yes"]])
    second = _write_csv(tmp_path / "b" / "review.csv", [["id", "verdict"], ["c1", "no"]])
    with pytest.raises(ReviewFormatError, match="add an 'annotator' column"):
        load_verdicts([first, second])


# --------------------------------------------------------------------------------------------
# Majority vote


def test_majority_vote_with_ties_and_min_votes():
    verdicts = [
        _v("c1", "a", "valid"),
        _v("c1", "b", "valid"),
        _v("c1", "c", "invalid"),
        _v("c2", "a", "invalid"),
        _v("c2", "b", "invalid"),
        _v("c2", "c", "valid"),
        _v("c3", "a", "valid"),
        _v("c3", "b", "invalid"),
        _v("c4", "c", "valid"),
    ]
    votes = majority_vote(verdicts)
    assert votes["c1"] == VoteResult("valid", 2, 1, ("a", "b", "c"))
    assert votes["c2"] == VoteResult("invalid", 1, 2, ("a", "b", "c"))
    assert votes["c3"] == VoteResult("tie", 1, 1, ("a", "b"))
    assert votes["c4"].decision == "valid"

    strict = majority_vote(verdicts, min_votes=2)
    assert strict["c4"] == VoteResult("insufficient", 1, 0, ("c",))
    assert strict["c3"].decision == "tie" and strict["c1"].decision == "valid"
    with pytest.raises(ValueError, match="min_votes"):
        majority_vote(verdicts, min_votes=0)
    with pytest.raises(ValueError, match="duplicate"):
        majority_vote([_v("c1", "a", "valid"), _v("c1", "a", "invalid")])


# --------------------------------------------------------------------------------------------
# Agreement


def _two_annotator_table():
    # Hand-built 2x2 table over 10 cases: both valid 4, both invalid 3, a valid/b invalid 2,
    # a invalid/b valid 1.
    pairs = [("valid", "valid")] * 4 + [("invalid", "invalid")] * 3
    pairs += [("valid", "invalid")] * 2 + [("invalid", "valid")]
    verdicts = []
    for i, (x, y) in enumerate(pairs):
        verdicts += [_v(f"c{i}", "a", x), _v(f"c{i}", "b", y)]
    return verdicts


def test_cohen_kappa_matches_hand_computation():
    # p_o = 7/10; a says valid 6/10, b 5/10 -> p_e = .6*.5 + .4*.5 = .5; kappa = (.7-.5)/(1-.5) = .4
    p_o, p_e = 7 / 10, 0.6 * 0.5 + 0.4 * 0.5
    assert (p_o - p_e) / (1 - p_e) == pytest.approx(0.4)
    result = agreement(_two_annotator_table() + [_v("only-a", "a", "valid")])
    assert result["n_items"] == 11 and result["n_annotators"] == 2
    assert result["n_shared"] == {("a", "b"): 10}  # only-a is not shared, so not counted
    assert result["percent_agreement"][("a", "b")] == pytest.approx(0.7)
    assert result["overall_agreement"] == pytest.approx(0.7)
    assert result["cohen_kappa"][("a", "b")] == pytest.approx(0.4)
    assert result["fleiss_kappa"] is None


def test_kappa_undefined_when_one_label_throughout():
    verdicts = [_v(f"c{i}", name, "valid") for i in range(3) for name in ("a", "b")]
    result = agreement(verdicts)
    assert result["percent_agreement"][("a", "b")] == 1.0
    assert result["cohen_kappa"][("a", "b")] is None


def test_fleiss_kappa_three_annotators_hand_computed():
    # (valid, invalid) counts per case: (3,0) (2,1) (0,3) (1,2).
    # P_i = (sum n_ij^2 - 3) / 6 = 1, 1/3, 1, 1/3 -> P_bar = 2/3; p_valid = 6/12 -> P_e = .5;
    # kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3.
    labels = {
        "c1": ("valid", "valid", "valid"),
        "c2": ("valid", "valid", "invalid"),
        "c3": ("invalid", "invalid", "invalid"),
        "c4": ("invalid", "invalid", "valid"),
    }
    verdicts = [_v(cid, name, lab) for cid, labs in labels.items() for name, lab in zip("abc", labs, strict=True)]
    verdicts.append(_v("c5", "a", "valid"))  # not rated by all three: outside Fleiss
    result = agreement(verdicts)
    assert result["fleiss_kappa"] == pytest.approx(1 / 3)
    assert result["fleiss_n_items"] == 4 and result["n_items"] == 5
    assert set(result["cohen_kappa"]) == {("a", "b"), ("a", "c"), ("b", "c")}
    # a and b agree on all 4 shared cases, a-c and b-c on 2 of 4; pooled: 8 of 12 pair-cases.
    assert result["percent_agreement"][("a", "b")] == 1.0
    assert result["percent_agreement"][("a", "c")] == pytest.approx(0.5)
    assert result["overall_agreement"] == pytest.approx((4 + 2 + 2) / 12)


def test_fleiss_formula_against_published_example():
    # Fleiss (1971) style example from Wikipedia's "Fleiss' kappa": 10 items, 14 raters, 5 categories.
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert _fleiss_kappa(table) == pytest.approx(0.210, abs=5e-4)
    with pytest.raises(ValueError, match="same number"):
        _fleiss_kappa([[2, 1], [1, 1]])


# --------------------------------------------------------------------------------------------
# Applying decisions


def test_apply_review_sets_status_and_never_mutates(caplog):
    records = [
        _case(1),
        _case(2),
        _case(3),
        _case(4, status="rejected:judge"),
        _case(5, status="error:parse"),
        _case(6),
    ]
    before = copy.deepcopy(records)
    votes = {
        "c1": VoteResult("valid", 2, 1, ("a", "b", "c")),
        "c2": VoteResult("invalid", 0, 2, ("a", "b")),
        "c3": VoteResult("tie", 1, 1, ("a", "b")),
        "c4": VoteResult("valid", 2, 0, ("a", "b")),
        "c5": VoteResult("valid", 2, 0, ("a", "b")),
        "1.2E+18": VoteResult("valid", 1, 0, ("a",)),
    }
    with caplog.at_level(logging.WARNING, logger="experiments.review"):
        out = apply_review(records, votes)

    assert records == before
    assert [r["status"] for r in out] == [
        "accepted",
        "rejected:human_review",
        "accepted",
        "accepted",
        "error:parse",
        "accepted",
    ]
    assert out[1]["review"] == {
        "decision": "invalid",
        "valid": 0,
        "invalid": 2,
        "annotators": ["a", "b"],
        "previous_status": "accepted",
    }
    assert out[2]["review"]["decision"] == "tie"
    assert out[3]["review"]["previous_status"] == "rejected:judge"
    assert "review" not in out[5]
    out[0]["answers"].append("x")
    assert records[0]["answers"] == ["Author 1", "A. 1"]
    assert "match no case" in caplog.text and "1.2E+18" in caplog.text


def test_end_to_end_export_annotate_vote_apply(tmp_path):
    records = [_case(i) for i in range(3)]
    export_for_review(records, tmp_path / "review.jsonl")
    assert load_verdicts([tmp_path / "review.jsonl", tmp_path / "review.csv"]) == []  # nothing filled in

    with open(tmp_path / "review.csv", encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    for name, labels in {"alice": ["yes", "no", "yes"], "bob": ["yes", "no", "no"]}.items():
        with open(tmp_path / f"{name}.csv", "w", encoding="utf-8-sig", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({**row, "verdict": lab} for row, lab in zip(rows, labels, strict=True))
    carol = [{**r, "verdict": "valid"} for r in _read_jsonl(tmp_path / "review.jsonl")]
    (tmp_path / "carol.jsonl").write_text("\n".join(json.dumps(r) for r in carol))

    verdicts = load_verdicts(sorted(tmp_path.glob("[abc]*.*")))
    votes = majority_vote(verdicts, min_votes=3)
    assert {k: v.decision for k, v in votes.items()} == {"c0": "valid", "c1": "invalid", "c2": "valid"}
    out = apply_review(records, votes)
    assert [r["status"] for r in out] == ["accepted", "rejected:human_review", "accepted"]
