"""The knowledge-conflict table by answer kind and the target's prior against following the passage."""

from __future__ import annotations

import itertools
import json
import math
from types import SimpleNamespace

import dspy
import pytest

from experiments import launch
from experiments.bench.conflict_kinds import kind_group, kind_table
from experiments.bench.conflict_prior import (
    PriorProbe,
    answer_prior,
    plot_prior_curve,
    prior_bins,
    scorer_for,
    with_priors,
)
from experiments.bench.conflict_run import ConflictResult, conflict_sections
from experiments.lm.token_scorer import ScoredToken
from experiments.run_store import RunStore
from programs.answer_kinds import KINDS, Typed
from tests.test_knowledge_conflict import kc_config

_CASES = itertools.count()


def swap(target="t", kind="person", label="evidence", seeds="known", setting="open_book", **extra) -> dict:
    return {
        "target": target,
        "task": "answer_swap",
        "seeds": seeds,
        "setting": setting,
        "answer_kind": kind,
        "label": label,
        "case_id": extra.pop("case_id", f"c{next(_CASES)}"),
        "seed_id": extra.pop("seed_id", "s"),
        **extra,
    }


# -- kinds -------------------------------------------------------------------------------------------------------


def test_the_groups_are_the_blind_sheets_groups():
    from scripts.measure_every_kind import group

    assert group is kind_group
    assert {k: kind_group(k) for k in KINDS} == {k: Typed(k, None, None, "").group for k in KINDS}
    assert kind_group("organisation") == "places and organisations"
    assert kind_group("quantity") == "dates and numbers"
    assert kind_group("thing") == "works and things"
    assert kind_group(None) == "untyped"


def test_the_table_by_kind_counts_known_seed_swaps_of_targets_with_enough():
    records = (
        # target a: 6 labelled known-seed swaps
        [swap("a", "person", "evidence") for _ in range(2)]
        + [swap("a", "person", "memory")]
        + [swap("a", "place", "evidence"), swap("a", "organisation", "other")]
        + [swap("a", None, "evidence")]
        # not counted as swaps: no conflict, an error (both kept apart in the row), unknown seeds, the control
        + [swap("a", "person", "no_conflict"), swap("a", "person", None)]
        + [swap("a", "person", "memory", seeds="unknown")]
        + [{**swap("a", "person", "memory"), "task": "context_enrich"}]
        # target b: 2 labelled swaps, too few
        + [swap("b", "date", "evidence") for _ in range(2)]
    )
    rows, left_out = kind_table(records, enough=5)
    assert left_out == ["b"]
    got = {
        r["answer_group"]: (r["n"], r["evidence"], r["memory"], r["other"], r["no_conflict"], r["errors"]) for r in rows
    }
    assert got == {
        "people": (3, 2, 1, 0, 1, 1),
        "places and organisations": (2, 1, 0, 1, 0, 0),
        "untyped": (1, 1, 0, 0, 0, 0),
    }
    people = next(r for r in rows if r["answer_group"] == "people")
    assert people["evidence_share"] == pytest.approx(2 / 3) and 0 < people["evidence_low"] < 2 / 3
    # restricted to the swaps read valid
    valid = {r["case_id"] for r in records if r["answer_kind"] == "place"}
    rows, left_out = kind_table(records, enough=1, valid=valid)
    assert [(r["target"], r["answer_group"], r["n"]) for r in rows] == [("a", "places and organisations", 1)]
    assert left_out == []  # no swap of b's was read valid


# -- the prior ---------------------------------------------------------------------------------------------------


def fake_scorer(probabilities: dict[str, float]):
    """A token scorer: the prompt as one token, then one token per word of the answer with the given probability."""

    def score(text: str) -> list[ScoredToken]:
        start = text.index("\nAnswer:") + len("\nAnswer:")
        tokens, at = [ScoredToken(0, start, -5.0)], start
        for word in text[start:].split():
            begin = text.index(word, at)
            tokens.append(ScoredToken(begin, begin + len(word), math.log(probabilities[word])))
            at = begin + len(word)
        return tokens

    return score


def test_the_prior_is_the_product_of_the_answers_token_probabilities():
    scorer = fake_scorer({"New": 0.5, "York": 0.8})
    assert answer_prior(scorer, "where?", "New York") == pytest.approx(0.4)
    built = []
    probe = PriorProbe("t", lambda: built.append(1) or scorer)
    example = dspy.Example(id="s1", seed_id="s1", question="where?", closed_answer="New York")
    record = probe.process(example)
    assert record["prior"] == pytest.approx(0.4) and record["status"] == "ok" and record["target"] == "t"
    probe.process(example)
    assert built == [1]  # one scorer for the stage


def test_a_provider_model_has_no_prior():
    provider = SimpleNamespace(is_local=False, config=SimpleNamespace(name="openai/gpt-4o-mini"))
    assert scorer_for(provider) is None
    local = SimpleNamespace(is_local=True, config=SimpleNamespace(name="qwen2.5-1.5b"))
    assert callable(scorer_for(local))  # built only when a seed is scored


def test_a_record_without_a_prior_carries_none_not_zero():
    records = [swap(seed_id="s1"), swap(seed_id="s2"), swap(target="p", seed_id="s1")]
    out = with_priors(records, {"t": {"s1": 0.3}})
    assert out[0]["closed_prior"] == 0.3
    assert "closed_prior" not in out[1] and "closed_prior" not in out[2]


def test_prior_bins_count_each_answer_once_and_leave_out_those_without_a_prior():
    records = [
        swap(label="evidence", closed_prior=0.05),
        swap(label="memory", closed_prior=0.1),
        swap(label="evidence", closed_prior=0.2),  # a bin's lower edge belongs to it
        swap(label="evidence", closed_prior=0.5),
        swap(label="other", closed_prior=0.59),
        swap(label="other", closed_prior=0.8),
        swap(label="evidence", closed_prior=1.0),  # the last bin is closed
        swap(label="evidence"),  # no prior: counted apart
        swap(label="memory"),
        swap(label="no_conflict", closed_prior=0.9),  # no choice to make
        swap(label=None, closed_prior=0.9),  # an error
        {**swap(label="evidence", closed_prior=0.9), "task": "context_enrich"},  # the control
        swap(label="evidence", closed_prior=0.3, seeds="unknown"),
    ]
    rows, missing = prior_bins(records)
    known = [(r["low"], r["n"], r["evidence"]) for r in rows if r["seeds"] == "known"]
    assert known == [(0.0, 2, 1), (0.2, 1, 1), (0.4, 2, 1), (0.6, 0, 0), (0.8, 2, 1)]
    assert [(r["low"], r["n"]) for r in rows if r["seeds"] == "unknown" and r["n"]] == [(0.2, 1)]
    assert missing == {("t", "known", "open_book"): 2, ("t", "unknown", "open_book"): 0}
    first = rows[0]
    assert first["evidence_share"] == 0.5 and first["evidence_low"] < 0.5 < first["evidence_high"]
    assert math.isnan(next(r for r in rows if r["seeds"] == "known" and r["low"] == 0.6)["evidence_share"])


def test_the_curve_is_drawn_where_a_bin_holds_an_answer(tmp_path):
    rows, _ = prior_bins([swap(closed_prior=0.1), swap(label="memory", closed_prior=0.9)])
    assert plot_prior_curve(rows, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    rows, _ = prior_bins([swap()])
    assert not plot_prior_curve(rows, tmp_path / "none.png") and not (tmp_path / "none.png").exists()


def test_the_report_sections_name_what_was_left_out():
    records = [swap(closed_prior=0.9), swap(label="memory", kind="date"), swap(target="b")]
    result = ConflictResult(records=records)
    result.kind_rows, result.kinds_left_out = kind_table(records, enough=2)
    result.prior_rows, result.no_prior = prior_bins(records)
    sections = {s.title: s for s in conflict_sections(result)}
    by_kind = sections["Knowledge conflict: by answer kind"]
    assert [row[:4] for row in by_kind.rows] == [
        ["t", "open_book", "dates and numbers", "1"],
        ["t", "open_book", "people", "1"],
    ]
    assert by_kind.extra == ["Too few known-seed swaps for the table: b."]
    prior = sections["Knowledge conflict: the target's prior"]
    assert prior.rows[-1][3:6] == ["[0.8, 1.0]", "1", "1"]
    assert "t · known · open_book: 1 answers without a prior, left out of the bins" in prior.extra
    assert "b · known · open_book: 1 answers without a prior, left out of the bins" in prior.extra


# -- on the bench world ------------------------------------------------------------------------------------------


def test_the_bench_writes_the_kind_table_the_prior_bins_and_the_curve(world, isolated):
    result = launch.run_experiment(kc_config(isolated), progress=False)
    run = RunStore(result.run_id)
    out = run.dir / "report"
    payload = json.loads((out / "conflict.json").read_text())
    answers = [json.loads(line) for line in (out / "conflict_answers.jsonl").read_text().splitlines()]
    swaps = [a for a in answers if a["task"] == "answer_swap"]
    # the world's scorer gives every closed-book answer 0.9; each target's seeds scored once, in their own stage
    assert swaps and all(a["closed_prior"] == pytest.approx(0.9) for a in swaps)
    priors = {t: RunStore(f"{result.run_id}/conflict.prior.{t}").records() for t in ("smollm2-135m", "qwen2.5-0.5b")}
    assert {t: len(r) for t, r in priors.items()} == {"smollm2-135m": 3, "qwen2.5-0.5b": 3}
    # the stubborn target keeps its memory on its three known seeds: all in the top bin, none from the passage
    top = next(
        r for r in payload["prior_bins"] if r["target"] == "smollm2-135m" and r["seeds"] == "known" and r["low"] == 0.8
    )
    assert (top["n"], top["evidence"]) == (3, 0)
    assert all(n["n"] == 0 for n in payload["no_prior"])
    assert (out / "prior_curve.png").exists()
    # three known-seed swaps are too few for a table by kind
    assert payload["by_kind"] == [] and payload["kinds_left_out"] == ["smollm2-135m"]
    assert all(a.get("answer_kind") for a in swaps)
    text = (out / "bench.md").read_text()
    assert "Knowledge conflict: by answer kind" in text and "Knowledge conflict: the target's prior" in text
