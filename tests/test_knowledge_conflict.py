"""The knowledge-conflict experiment: the strict 'knows' match, the three-way classification, each target's
scan and seed choice, and the experiment end to end on the tiny bench world (a stubborn target that knows
every answer and a follower that knows none)."""

import json
from pathlib import Path

import dspy
import pytest

from experiments import launch
from experiments.bench.conflict import TargetSeeds, classified, seeds_to_generate
from experiments.bench.knowledge import KnowledgeProbe, is_known, is_unknown, scan_order, scan_summary
from experiments.bench.options import KnowledgeConflict
from experiments.run_store import RunStore
from metrics.conflict import classify, conflict_table, knows, matches, memory_agrees, memory_answers
from scripts.reclassify_conflict import retable
from tests.bench_fakes import SWAPPED
from tests.test_bench import bench_config

# -- matching and classification ------------------------------------------------------------------------


def test_matches_normalises_and_sees_other_spellings():
    assert matches("the Beatles.", ["Beatles"])
    assert matches("It was 4 July 1776", ["July 4, 1776"])
    assert matches("New York", ["New York City"])  # most of a longer answer
    assert not matches("Washington", ["George Washington"])  # half of it
    assert not matches("Party", ["the Democratic Party of the United States"])  # a sliver of it
    assert not matches("", ["Paris"]) and not matches(None, ["Paris"])
    assert not matches("Parisian", ["Paris"])


def test_knows_is_stricter_than_seed_selection_leniency():
    from metrics.qa import is_correct

    assert is_correct("Party", ["the Democratic Party"])  # seed selection's lenient direction
    assert not knows("Party", ["the Democratic Party"])
    assert knows("Democratic Party", ["the Democratic Party"])
    # repeating the question is no knowledge when the question states the gold
    assert not knows("a movie or tv show with dinosaurs", ["Dinosaurs"], "name a movie or tv show with dinosaurs")
    assert not knows("A 72 oz steak is a luxury item", ["$72"], "how much is a 72 oz steak at the big texan")
    assert knows("1967", ["1967"], "when was the movie cool hand luke made")


def test_classify_three_ways():
    memory = memory_answers("Seoul", ["Seoul"], known=True)
    assert classify("Busan", ["Busan"], memory) == "evidence"
    assert classify("seoul", ["Busan"], memory) == "memory"
    assert classify("Incheon", ["Busan"], memory) == "other"
    assert classify("Busan, not Seoul", ["Busan"], memory) == "other"  # a hedge is no choice
    assert classify(None, ["Busan"], memory) == "other"


def test_a_short_answer_goes_to_the_one_side_holding_its_words():
    """Answers from the full knowledge-conflict run the full-match rule left as "other"."""
    marrow = memory_answers("in the bone marrow", ["in the bone marrow"], known=True)
    assert classify("liver", ["in the liver"], marrow) == "evidence"
    stage = memory_answers("sensorimotor stage", ["the sensorimotor stage"], known=True)
    question = "according to jean piaget what is the stage of cognitive development"
    assert classify("sensorimotor", ["the preoperational stage"], stage, question) == "memory"
    assert classify("preoperational", ["the preoperational stage"], stage, question) == "evidence"
    assert classify("stage", ["the preoperational stage"], stage, question) == "other"  # both sides hold it
    anemia = memory_answers("pernicious anemia", ["pernicious anemia"], known=True)
    assert classify("anemia", ["scurvy"], anemia, "what is a form of anemia") == "other"  # the question's word
    assert classify("anemia", ["scurvy"], anemia) == "memory"
    assert classify("Incheon port", ["Busan port"], memory_answers("Seoul", ["Seoul"], known=True)) == "other"


def test_memory_takes_the_golds_aliases_only_when_the_closed_book_answer_was_right():
    assert memory_answers("the won", ["won", "South Korean won"], known=True) == ["the won", "won", "South Korean won"]
    assert memory_answers("yen", ["won"], known=False) == ["yen"]
    assert memory_answers("", ["won"], known=False) == []
    assert memory_answers("I don't know.", ["won"], known=False) == []  # declining is no memory
    assert classify("unknown", ["The yen"], memory_answers("Unknown", ["won"], known=False)) == "other"
    # an alias of the gold the closed-book answer did not spell still counts as memory
    memory = memory_answers("won", ["won", "South Korean won"], known=True)
    assert classify("South Korean won", ["The yen"], memory) == "memory"


def test_a_memory_that_is_also_the_evidence_answer_is_no_conflict():
    assert memory_agrees(["Zora Quinn"], ["zora quinn"])  # the target's wrong guess is the swapped answer
    assert memory_agrees(["1990"], ["May 1990"])
    assert not memory_agrees(["Zora Quinn"], ["Alice Smith"])
    assert not memory_agrees(["Zora Quinn"], [])  # nothing remembered: evidence or other, never memory


def test_conflict_table_counts_shares_with_intervals_and_keeps_errors_apart():
    records = (
        [{"target": "t", "label": "memory"}] * 3
        + [{"target": "t", "label": "evidence"}]
        + [{"target": "t", "label": "no_conflict"}, {"target": "t"}]
    )
    [row] = conflict_table(records, by=("target",))
    assert (row["n"], row["memory"], row["evidence"], row["other"], row["no_conflict"], row["errors"]) == (
        4,
        3,
        1,
        0,
        1,
        1,
    )
    assert row["memory_share"] == 0.75 and 0.2 < row["memory_low"] < 0.75 < row["memory_high"] <= 1.0
    assert row["other_share"] == 0.0 and row["other_low"] == 0.0


# -- the scan and its seeds -------------------------------------------------------------------------------


class ScriptedAsker:
    """Answers closed-book from `memory` and open-book with the gold; records what was asked."""

    def __init__(self, memory: dict[str, str]):
        self.memory = memory
        self.asked: list[tuple[str, str]] = []
        self.target = type("T", (), {"config": type("C", (), {"name": "t", "label": "t"})()})()

    def process(self, ask):
        self.asked.append((ask.setting, ask.question))
        answer = self.memory.get(ask.question, "no idea") if ask.setting == "closed_book" else "gold " + ask.question
        return {"id": ask.id, "prediction": answer, "status": "ok"}


def _example(i: int) -> dspy.Example:
    return dspy.Example(id=f"s{i}", question=f"q{i}", context=f"c{i}", answers=[f"gold q{i}"]).with_inputs(
        "question", "context"
    )


def test_the_probe_asks_open_book_only_where_it_counts():
    asker = ScriptedAsker({"q1": "gold q1", "q2": "wrong"})
    probe = KnowledgeProbe(asker, table_ids={"s2"})
    known, table_row, neither = (probe.process(_example(i)) for i in (1, 2, 3))
    assert asker.asked == [
        ("closed_book", "q1"),
        ("open_book", "q1"),
        ("closed_book", "q2"),
        ("open_book", "q2"),
        ("closed_book", "q3"),
    ]
    assert is_known(known) and not is_unknown(known)
    assert is_unknown(table_row) and not is_known(table_row)
    assert "open_correct" not in neither and not is_known(neither) and not is_unknown(neither)
    summary = scan_summary([known, table_row, neither], rows_available=10)
    assert summary["rows_scanned"] == 3 and summary["known"] == 1 and summary["table_rows"] == 1
    assert summary["closed_book_accuracy"] == pytest.approx(1 / 3)
    assert summary["table.open_correct__closed_wrong"] == 1


def test_scan_order_is_fixed_and_shared():
    examples = [_example(i) for i in range(50)]
    a, b = scan_order(examples, 0), scan_order(list(reversed(examples)), 0)
    assert [e.id for e in a] == [e.id for e in b] != [e.id for e in examples]
    assert [e.id for e in scan_order(examples, 1)] != [e.id for e in a]


def test_target_seeds_follow_the_scan_order_and_the_quotas():
    options = KnowledgeConflict(known_per_target=2, unknown_per_target=1)
    records = [
        {"seed_id": s, "status": "ok", "closed_correct": c, "open_correct": o, "in_table": t, "closed_answer": f"a{s}"}
        for s, c, o, t in [
            ("s1", True, True, True),
            ("s2", False, True, True),
            ("s3", True, True, False),
            ("s4", True, True, False),
            ("s5", False, True, True),
            ("s6", True, False, False),
        ]
    ]
    seeds = TargetSeeds.from_scan(records, ["s4", "s3", "s2", "s1", "s5", "s6"], options)
    assert seeds.known == ["s4", "s3"] and seeds.unknown == ["s2"] and seeds.closed["s6"] == "as6"
    other = TargetSeeds(known=["s1", "s3"], unknown=["s5"])
    assert seeds_to_generate({"a": seeds, "b": other}, ["s4", "s3", "s2", "s1", "s5"], control_seeds=1) == {
        "answer_swap": ["s4", "s3", "s2", "s1", "s5"],
        "context_enrich": ["s4", "s1"],
    }


def test_classified_answers_keep_errors_unlabelled_and_no_conflict_apart():
    base = {
        "target": "t",
        "seeds": "known",
        "task": "answer_swap",
        "setting": "open_book",
        "question": "what is the capital of south korea",
        "evidence_answers": ["Busan"],
        "original_answers": ["Seoul"],
        "closed_answer": "Seoul",
    }
    uses = [
        {**base, "ask_id": "a"},
        {**base, "ask_id": "b"},
        {**base, "ask_id": "c", "closed_answer": "Busan", "seeds": "unknown"},
        {**base, "ask_id": "d", "task": "context_enrich", "evidence_answers": ["Seoul"]},
    ]
    answers = {
        "a": {"prediction": "Seoul", "status": "ok"},
        "b": {"prediction": None, "status": "error:parse"},
        "c": {"prediction": "Busan", "status": "ok"},
        "d": {"prediction": "Seoul", "status": "ok"},
    }
    labels = [r.get("label") for r in classified(uses, answers)]
    assert labels == ["memory", None, "no_conflict", "evidence"]


# -- end to end on the bench world ------------------------------------------------------------------------


def kc_config(isolated, settings=("open_book",)):
    """The tiny bench world's knowledge-conflict experiment: every seed scanned, the first three asked
    open-book too."""
    return bench_config(
        isolated,
        tasks=[],
        knowledge_conflict={
            "enabled": True,
            "source": str(isolated / "seeds.jsonl"),
            "split": "all",
            "known_per_target": 5,
            "block": 2,
            "table_rows": 3,
            "unknown_per_target": 5,
            "control_seeds": 1,
            "settings": list(settings),
            # The pivot proposes the swapped name: the fakes script its proposal.
            "generators": {
                "answer_swap": {"max_attempts": 5, "distance": "proposed"},
                "context_enrich": {"k": 3, "lm_merge": False},
            },
        },
    )


def test_the_conflict_experiment_end_to_end(world, isolated):
    config = kc_config(isolated, ["open_book", "opinion", "task_instruction"])
    result = launch.run_experiment(config, progress=False)
    out = RunStore(result.run_id).dir / "report"
    payload = json.loads((out / "conflict.json").read_text())
    # the stubborn target knows all three seeds; the follower knows none and reads all three right
    assert payload["seeds"] == {"qwen2.5-0.5b": {"known": 0, "unknown": 3}, "smollm2-135m": {"known": 3, "unknown": 0}}
    assert payload["scans"]["smollm2-135m"]["closed_book_accuracy"] == 1.0
    rows = {(r["target"], r["task"], r["seeds"], r["setting"]): r for r in payload["table"]}
    # the stubborn target keeps its memory against swapped evidence, except when the evidence is Bob's opinion
    assert rows[("smollm2-135m", "answer_swap", "known", "open_book")]["memory"] == 3
    assert rows[("smollm2-135m", "answer_swap", "known", "task_instruction")]["memory"] == 3
    assert rows[("smollm2-135m", "answer_swap", "known", "opinion")]["evidence"] == 3
    # its closed-book memory is the original answer, which enriched evidence still states: the control holds
    # (one control seed, enriched twice: by the question and by the evidence)
    assert rows[("smollm2-135m", "context_enrich", "known", "open_book")]["evidence"] == 2
    # the follower has no memory of these seeds ("no idea" is no answer): the evidence wins
    follower = rows[("qwen2.5-0.5b", "answer_swap", "unknown", "open_book")]
    assert follower["evidence"] == 3 and follower["memory"] == 0
    answers = [json.loads(line) for line in (out / "conflict_answers.jsonl").read_text().splitlines()]
    assert {a["prediction"] for a in answers if a["target"] == "qwen2.5-0.5b"} == {SWAPPED}
    assert "Knowledge conflict: memory or evidence" in (out / "bench.md").read_text()
    assert result.metrics["conflict.smollm2-135m.answer_swap.known.open_book.memory"] == 1.0


def test_a_scan_archived_from_one_run_answers_the_next(world, isolated, monkeypatch):
    """The scans of a run are archived (scripts/archive_knowledge_scan.py) and a later run, on another
    machine in effect (a new runs dir), takes every scanned row from the archive instead of asking."""
    import sys

    from experiments.bench import scan_archive
    from scripts import archive_knowledge_scan

    monkeypatch.setattr(scan_archive, "archive_dir", lambda: isolated / "archive")
    config = kc_config(isolated)
    first = launch.run_experiment(config, progress=False)
    monkeypatch.setattr(sys, "argv", ["archive_knowledge_scan.py", first.run_id])
    archive_knowledge_scan.main()
    archived = sorted(p.name for p in (isolated / "archive").iterdir())
    assert archived == ["seeds-all-qwen2.5-0.5b.jsonl.gz", "seeds-all-smollm2-135m.jsonl.gz"]
    head, rows = scan_archive.read_archive((isolated / "archive") / archived[0])
    assert head["runs"][0]["run"] == first.run_id and head["runs"][0]["commit"] and len(rows) == 3

    monkeypatch.setenv("REEVAL_RUNS_DIR", str(isolated / "runs-elsewhere"))
    second = launch.run_experiment(config, progress=False)
    for target in ("qwen2.5-0.5b", "smollm2-135m"):
        records = RunStore(f"{second.run_id}/knowledge.{target}").records()
        assert records and all(r.get("archived") for r in records)
        assert second.metrics[f"conflict.scan.{target}.from_archive"] == len(records)
    # the same seeds and the same table as the run that asked
    assert (
        second.metrics["conflict.smollm2-135m.answer_swap.known.open_book.memory"]
        == (first.metrics["conflict.smollm2-135m.answer_swap.known.open_book.memory"])
    )


def test_scan_only_reports_what_each_target_knows_and_generates_nothing(world, isolated):
    config = kc_config(isolated)
    config.options["knowledge_conflict"]["scan_only"] = True
    result = launch.run_experiment(config, progress=False)
    run = RunStore(result.run_id)
    payload = json.loads((run.dir / "report" / "conflict.json").read_text())
    assert payload["seeds"] == {"qwen2.5-0.5b": {"known": 0, "unknown": 3}, "smollm2-135m": {"known": 3, "unknown": 0}}
    assert payload["table"] == [] and payload["cases"] == {}
    stages = json.loads((run.dir / "stages.json").read_text())
    assert {s for s in stages if s.startswith("knowledge.")} == {"knowledge.qwen2.5-0.5b", "knowledge.smollm2-135m"}
    assert not [s for s in stages if s.startswith("conflict.")]
    assert "Knowledge conflict: what each target knows" in (run.dir / "report" / "bench.md").read_text()


def test_the_full_runs_archived_answers_retabled_under_the_current_checks():
    """scripts/reclassify_conflict.py on the archived full run (qwen2.5-1.5b): 13 answers the full-match rule
    left as "other" are placed, and the swaps answer_swap/15 rejects (5 with a word derived from the old
    answer, two of them answered from memory open-book; one whose parts still add up to the old total, under
    answer_swap/22; 5 whose old head noun is left, under answer_swap/29, one of them answered from memory; 2
    with a country's people or short names left and 1 with a city of the old country left, under
    answer_swap/31-32) leave the open-book memory share at 1 of 153."""
    run = Path(__file__).resolve().parents[1] / "docs" / "reviews" / "knowledge-conflict-9eb7a0a1c6"
    records = [json.loads(line) for line in (run / "report" / "conflict_answers.jsonl").read_text().splitlines()]
    stage = run / "conflict.generate.answer_swap.qwen2.5-1.5b" / "cases.jsonl"
    rows, changed, dropped = retable(records, [stage])
    assert changed[("other", "evidence")] == 9 and changed[("other", "memory")] == 4
    assert dropped["old_answer_trace:derived_word"] == 5 and dropped["old_answer_trace:head"] == 5
    assert dropped["old_answer_trace:country"] == 2 and dropped["old_answer_trace:city_within"] == 1
    open_book = next(r for r in rows if (r["task"], r["seeds"], r["setting"]) == ("answer_swap", "known", "open_book"))
    assert (open_book["n"], open_book["memory"]) == (153, 1)
