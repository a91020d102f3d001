"""Hand-checked examples for metrics.evaluation and metrics.transfer (target evaluation)."""

import math

import pytest

from metrics import (
    accuracy_table,
    answer_position,
    average_ranks,
    breakdown,
    choice_of,
    normalised_accuracy,
    paired_drop,
    rank_changes,
    score_record,
    score_records,
    sycophancy,
    transfer_matrix,
)


def rec(**kw):
    """One evaluation record with defaults: answer_swap, target T, open_book, greedy."""
    base = {
        "case_id": "s1",
        "seed_id": "s1",
        "variant": "original",
        "task": "answer_swap",
        "generator": "",
        "target": "T",
        "setting": "open_book",
        "decoding": "greedy",
        "source": "nq",
        "question": "who wrote hamlet",
        "context": "Hamlet is a tragedy by William Shakespeare.",
        "answers": ["William Shakespeare"],
        "prediction": "",
        "status": "ok",
        "answer_position": None,
    }
    base.update(kw)
    if "case_id" not in kw:
        base["case_id"] = base["seed_id"] if base["variant"] == "original" else f"{base['seed_id']}:swap"
    return base


def right(**kw):
    return rec(prediction="William Shakespeare", **kw)


def wrong(**kw):
    return rec(prediction="Christopher Marlowe", **kw)


def err(**kw):
    return rec(prediction=None, status="error:parse", **kw)


def only(rows, **match):
    hits = [r for r in rows if all(r[k] == v for k, v in match.items())]
    assert len(hits) == 1, hits
    return hits[0]


# --- score_record -------------------------------------------------------------------------------------


def test_em_f1_correct_by_hand():
    s = score_record(rec(answers=["Barack Obama"], prediction="Obama"))
    assert s["em"] == 0.0
    assert s["f1"] == pytest.approx(2 / 3)  # precision 1, recall 1/2
    assert s["correct"] is True  # "obama" is contained in the gold
    assert s["task_correct"] is True
    assert s["keyword_strict"] is None and s["mc_correct"] is None and s["entailment"] is None
    s = score_record(rec(answers=["Barack Obama"], prediction="the Barack Obama."))
    assert (s["em"], s["f1"], s["correct"]) == (1.0, 1.0, True)


def test_score_record_copies_and_keeps_fields():
    r = wrong()
    s = score_record(r)
    assert "em" not in r and s["prediction"] == "Christopher Marlowe" and s["correct"] is False


@pytest.mark.parametrize(
    ("task", "kind", "prediction", "strict", "nonstrict"),
    [
        ("unanswerable", "unknown", "Unknown.", True, True),
        ("unanswerable", "unknown", "The context does not say.", False, True),
        ("unanswerable", "unknown", "William Shakespeare", False, False),
        ("inconsistent", "conflict", "conflict", True, True),
        ("inconsistent", "conflict", "The passages are contradictory.", False, True),
        ("inconsistent", "conflict", "unknown", False, False),
    ],
)
def test_keyword_scores_on_perturbed_verdict_tasks(task, kind, prediction, strict, nonstrict):
    s = score_record(rec(task=task, task_answer=kind, variant="perturbed", prediction=prediction))
    assert (s["keyword_strict"], s["keyword_nonstrict"]) == (strict, nonstrict)
    assert s["task_correct"] is nonstrict
    # EM is against the task constant, not the original answers.
    assert s["em"] == (1.0 if strict else 0.0)


def test_keywords_do_not_apply_to_originals_of_verdict_tasks():
    s = score_record(right(task="unanswerable", task_answer="unknown"))
    assert s["keyword_strict"] is None and s["keyword_nonstrict"] is None
    assert s["correct"] is True and s["task_correct"] is True


OPTIONS = ["photosynthesis", "respiration", "salt water", "water"]


@pytest.mark.parametrize(
    ("prediction", "chosen"),
    [
        ("B", "B"),
        ("B.", "B"),
        ("(B)", "B"),
        ("Answer: B", "B"),
        ("The answer is B.", "B"),
        ("b", "B"),
        ("B) respiration", "B"),
        ("respiration", "B"),
        ("It is respiration.", "B"),
        ("salt water", "C"),  # "water" inside "salt water" is not a second option
        ("A or B", None),
        ("B and C", None),
        ("Answer: (A) or (B)", None),
        ("photosynthesis and respiration", None),
        ("A cat sat", None),  # an article is not a choice
        ("", None),
    ],
)
def test_choice_of(prediction, chosen):
    assert choice_of(prediction, OPTIONS) == chosen


LIST_OPTIONS = [
    "sun, water, clay, and sand.",
    "sand, clay, wind, and pebbles.",
    "sand, clay, dead plants, and dead animals.",
    "high runoff, low evaporation",
]


@pytest.mark.parametrize(
    ("prediction", "chosen"),
    [
        ("clay, sand, dead plants, dead animals", "C"),  # a list answer in another order (bench, qwen2.5-1.5b)
        ("sand, clay, wind, pebbles", "B"),
        ("sand and clay and wind and pebbles", "B"),
        ("low runoff, high evaporation", None),  # words moved inside an item: another answer
        ("clay, sand", None),  # part of a list is not the option
        ("sand, clay, wind, pebbles, dead plants", None),
    ],
)
def test_choice_of_list_options_in_another_order(prediction, chosen):
    assert choice_of(prediction, LIST_OPTIONS) == chosen


def test_mc_correct_in_score_record_and_dict_labels():
    cf = {
        "task": "counterfactual",
        "task_answer": "choice",
        "variant": "perturbed",
        "options": OPTIONS,
        "answer_label": "B",
    }
    assert score_record(rec(prediction="(B)", **cf))["mc_correct"] is True
    assert score_record(rec(prediction="A", **cf))["mc_correct"] is False
    s = score_record(rec(prediction="A or B", **cf))
    assert s["mc_correct"] is False and s["task_correct"] is False
    opts = [{"label": "1", "text": "iron"}, {"label": "2", "text": "copper"}]
    assert choice_of("Answer: 2", opts) == "2" and choice_of("copper", opts) == "2"


def test_entailment_with_injected_nli():
    calls = []

    def nli(premise, hypothesis):
        calls.append((premise, hypothesis))
        return 0.9 if hypothesis.endswith("Will Shakespeare") else 0.2

    r = rec(answers=["William Shakespeare", "Will Shakespeare"], prediction="Shakespeare wrote it")
    s = score_record(r, nli=nli)
    assert s["entailment"] is True  # max over golds
    assert calls == [
        ("who wrote hamlet Shakespeare wrote it", "who wrote hamlet William Shakespeare"),
        ("who wrote hamlet Shakespeare wrote it", "who wrote hamlet Will Shakespeare"),
    ]
    assert score_record(r, nli=lambda p, h: 0.49)["entailment"] is False
    assert score_record(r)["entailment"] is None


def test_error_records_get_no_scores_and_are_counted_apart():
    s = score_record(err())
    assert s["error"] is True
    assert all(s[k] is None for k in ("em", "f1", "correct", "task_correct", "entailment"))
    rows = accuracy_table(score_records([right(), wrong(seed_id="s2"), err(seed_id="s3")]))
    row = only(rows, variant="original")
    assert (row["rate"], row["n"], row["errors"]) == (0.5, 2, 1)
    assert row["low"] <= 0.5 <= row["high"]


def test_errors_count_only_where_the_metric_applies():
    scored = score_records(
        [
            err(),
            rec(task="unanswerable", task_answer="unknown", variant="perturbed", prediction="unknown"),
            err(task="unanswerable", task_answer="unknown", variant="perturbed", seed_id="s2"),
        ]
    )
    rows = accuracy_table(scored, metric="keyword_strict", by=("task",))
    assert rows == [
        {"task": "unanswerable", "metric": "keyword_strict", "rate": 1.0, "n": 1, "low": 1.0, "high": 1.0, "errors": 1}
    ]


def test_unscored_records_are_refused():
    with pytest.raises(KeyError, match="score_record"):
        accuracy_table([right()])


# --- answer position ---------------------------------------------------------------------------------


def test_answer_position_thirds():
    ctx = "x" * 30  # thirds at offsets 10 and 20
    assert answer_position(ctx, "xx", 0) == "first"
    assert answer_position(ctx, "xx", 9) == "first"
    assert answer_position(ctx, "xx", 10) == "middle"
    assert answer_position(ctx, "xx", 19) == "middle"
    assert answer_position(ctx, "xx", 20) == "last"
    text = "Paris is nice. " + "filler " * 10 + "The capital is Lyon."
    assert answer_position(text, "paris") == "first"  # found case-insensitively
    assert answer_position(text, "Lyon") == "last"
    assert answer_position(text, "Lyon", answer_start=10_000) == "last"  # bad offset: search
    assert answer_position(text, "Berlin") is None
    assert answer_position("", "x") is None


# --- seed-level tables -------------------------------------------------------------------------------


def _pert(fn, seed, **kw):
    return fn(seed_id=seed, variant="perturbed", generator="G", **kw)


def test_normalised_accuracy_by_hand():
    records = [
        right(seed_id="s1"),
        _pert(wrong, "s1"),
        right(seed_id="s2"),
        _pert(right, "s2"),
        wrong(seed_id="s3"),
        _pert(right, "s3"),  # never known: left out
        right(seed_id="s4"),
        _pert(err, "s4"),  # errored: counted, not scored
    ]
    scored = score_records(records)
    row = only(normalised_accuracy(scored, "correct"), target="T")
    assert (row["rate"], row["n"], row["errors"]) == (0.5, 2, 1)
    assert (row["originals"], row["originals_right"]) == (4, 3)
    plain = only(accuracy_table(scored), variant="perturbed")
    assert plain["rate"] == pytest.approx(2 / 3) and plain["errors"] == 1


def test_paired_drop_by_hand():
    records = [
        right(seed_id="s1"),
        _pert(wrong, "s1"),
        right(seed_id="s2"),
        _pert(right, "s2"),
        right(seed_id="s3"),
        _pert(wrong, "s3"),
        _pert(wrong, "s4"),  # no original: not a pair
        right(seed_id="s5"),
        _pert(err, "s5"),  # errored pair
    ]
    row = only(paired_drop(score_records(records), "correct"), target="T")
    assert row["original"] == 1.0
    assert row["perturbed"] == pytest.approx(1 / 3)
    assert row["drop"] == pytest.approx(2 / 3)
    assert (row["n"], row["errors"]) == (3, 1)
    assert 0.0 <= row["low"] <= row["drop"] <= row["high"] <= 1.0


def test_context_enrich_counts_a_seed_right_only_if_both_copies_are():
    def copy(fn, seed, kind):
        return _pert(fn, seed, task="context_enrich", case_id=f"{seed}:enrich-{kind}")

    records = [
        copy(right, "a", "question"),
        copy(wrong, "a", "evidence"),  # one wrong: wrong
        copy(right, "b", "question"),
        copy(right, "b", "evidence"),  # both right: right
        copy(right, "c", "question"),
        copy(err, "c", "evidence"),  # unknown: error
        copy(wrong, "d", "question"),
        copy(err, "d", "evidence"),  # known wrong despite error
    ]
    records += [right(seed_id=s, task="context_enrich") for s in "abcd"]
    scored = score_records(records)
    row = only(accuracy_table(scored), variant="perturbed")
    assert (row["rate"], row["n"], row["errors"]) == (pytest.approx(1 / 3), 3, 1)
    drop = only(paired_drop(scored, "correct"), task="context_enrich")
    assert (drop["original"], drop["n"], drop["errors"]) == (1.0, 3, 1)
    assert drop["perturbed"] == pytest.approx(1 / 3)
    # F1 takes the minimum over the copies.
    f1 = only(accuracy_table(scored[:2], metric="f1"), variant="perturbed")
    assert (f1["rate"], f1["n"]) == (0.0, 1)


def test_sycophancy_on_original_contexts():
    records = [
        right(seed_id="s1"),
        right(seed_id="s2"),
        right(seed_id="s1", setting="task_instruction"),
        rec(seed_id="s2", setting="task_instruction", prediction="unknown"),
        right(seed_id="s3", setting="task_instruction"),  # no open-book partner
        _pert(wrong, "s1", setting="task_instruction"),  # perturbed: ignored
    ]
    row = only(sycophancy(score_records(records)), target="T")
    assert (row["open_book"], row["task_instruction"], row["change"], row["n"]) == (1.0, 0.5, -0.5, 2)


def test_breakdown_by_source_and_position():
    records = [
        right(seed_id="s1", source="nq", answer_position="first"),
        wrong(seed_id="s2", source="nq", answer_position="last"),
        right(seed_id="s3", source="squad", answer_position="last"),
    ]
    scored = score_records(records)
    by_source = breakdown(scored, "source")
    assert only(by_source, source="nq")["rate"] == 0.5 and only(by_source, source="squad")["rate"] == 1.0
    by_pos = breakdown(scored, "answer_position")
    got = [(r["answer_position"], r["rate"], r["n"]) for r in by_pos]
    assert got == [("first", 1.0, 1), ("last", 0.5, 2)]
    with pytest.raises(ValueError):
        breakdown(scored, "target")


# --- transfer and ranks --------------------------------------------------------------------------------


def test_transfer_matrix_marks_self_attack_on_the_diagonal():
    records = []
    for target in ("qwen", "smol"):
        for seed in ("s1", "s2"):
            records.append(right(seed_id=seed, target=target))
    # qwen made cases for s1, s2; "mini" (not a target) made cases for s1.
    records += [
        wrong(seed_id="s1", variant="perturbed", generator="qwen", target="qwen"),
        right(seed_id="s2", variant="perturbed", generator="qwen", target="qwen"),
        wrong(seed_id="s1", variant="perturbed", generator="qwen", target="smol"),
        wrong(seed_id="s2", variant="perturbed", generator="qwen", target="smol"),
        right(seed_id="s1", variant="perturbed", generator="mini", target="smol"),
    ]
    scored = score_records(records)
    m = transfer_matrix(scored, "correct")
    assert m["rows"] == ["qwen", "mini"] and m["cols"] == ["qwen", "smol"]
    assert m["diagonal"] == ["qwen"]
    assert m["cells"]["qwen"]["qwen"]["self_attack"] is True
    assert m["cells"]["qwen"]["smol"]["self_attack"] is False
    assert (m["cells"]["qwen"]["qwen"]["value"], m["cells"]["qwen"]["qwen"]["n"]) == (0.5, 2)
    assert m["cells"]["qwen"]["smol"]["value"] == 0.0
    assert m["cells"]["mini"]["smol"]["value"] == 1.0
    assert m["cells"]["mini"]["qwen"]["n"] == 0 and math.isnan(m["cells"]["mini"]["qwen"]["value"])
    d = transfer_matrix(scored, "correct", value="drop")
    assert d["cells"]["qwen"]["smol"]["value"] == 1.0 and d["cells"]["mini"]["smol"]["value"] == 0.0
    assert transfer_matrix(scored, "correct", setting="cot")["rows"] == []


def test_average_ranks_with_ties():
    assert average_ranks({"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.1}) == {"a": 1, "b": 2.5, "c": 2.5, "d": 4}
    assert average_ranks({"x": 0.1 + 0.2, "y": 0.3}) == {"x": 1.5, "y": 1.5}


def test_rank_changes_with_a_tie():
    records = []
    # Original accuracy A 1.0, B 0.5, C 0.5 (B and C tie); perturbed A 0.0, B 0.5, C 1.0.
    plan = {"A": ([1, 1], [0, 0]), "B": ([1, 0], [1, 0]), "C": ([0, 1], [1, 1])}
    for target, (orig, pert) in plan.items():
        for i, (o, p) in enumerate(zip(orig, pert, strict=True)):
            seed = f"s{i}"
            records.append((right if o else wrong)(seed_id=seed, target=target))
            pert = right if p else wrong
            records.append(pert(seed_id=seed, target=target, variant="perturbed", generator="G"))
    rows = rank_changes(score_records(records), "correct")
    got = {r["target"]: (r["rank_original"], r["rank_perturbed"], r["change"]) for r in rows}
    assert got == {"A": (1, 3, 2), "B": (2.5, 2, -0.5), "C": (2.5, 1, -1.5)}
    assert {r["setting"] for r in rows} == {"open_book"}
