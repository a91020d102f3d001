"""The bench's parts without any LM: few-shot demonstrations, the sharing plan, setting effects, config errors."""

import json
import re

import dspy
import pytest
import yaml
from typer.testing import CliRunner

from experiments.bench.demos import DemoBook
from experiments.bench.options import BenchOptions
from experiments.bench.sharing import Ask, passage_order, plan
from experiments.bench.stages import Ledger, digest
from experiments.cli import app
from metrics.effects import paired_effect
from programs.target_reader import TargetReader, opinion_inputs


def case(task, seed, i=0):
    return dspy.Example(
        id=f"{seed}:{task}-{i}",
        seed_id=seed,
        task=task,
        generator="p",
        question=f"q {seed}",
        context=f"perturbed {task} {seed} {i}",
        answers=[f"new {seed}"],
        original_context=f"original {seed}",
        original_answers=[f"old {seed}"],
    )


def test_demonstrations_come_from_the_other_fold_and_pair_clean_with_adversarial():
    seeds = [f"s{i}" for i in range(7)]
    book = DemoBook({"answer_swap": [case("answer_swap", s) for s in seeds]}, k=2, seed=0)
    sizes = [sum(f == fold for f in book.folds["answer_swap"].values()) for fold in (0, 1)]
    assert sorted(sizes) == [3, 4]  # balanced, whatever the hashes
    for seed in seeds:
        clean = book.get(book.key("answer_swap", seed, "few_shot_clean"))
        adversarial = book.get(book.key("answer_swap", seed, "few_shot_adversarial"))
        assert len(clean) == len(adversarial) == 2
        assert all(seed not in d.question for d in clean + adversarial)  # never its own seed
        assert [d.question for d in clean] == [d.question for d in adversarial]  # the same seeds
        assert all(d.context.startswith("original") for d in clean)
        assert all(d.context.startswith("perturbed") and d.answer.startswith("new") for d in adversarial)
    # one seed: the other fold is empty, so there is nothing to show
    lonely = DemoBook({"answer_swap": [case("answer_swap", "only")]}, k=2)
    assert lonely.key("answer_swap", "only", "few_shot_clean") is None


def test_plan_shares_originals_and_counterfactual_twins_and_skips_few_shot_without_demos():
    cases = {
        "answer_swap": [case("answer_swap", "s1"), case("answer_swap", "s2")],
        "unanswerable": [case("unanswerable", "s1")],
        "context_enrich": [case("context_enrich", "s1", 0), case("context_enrich", "s1", 1)],
        "counterfactual": [
            dspy.Example(
                id="q1:counterfactual",
                seed_id="q1",
                task="counterfactual",
                generator="p",
                question="Q?\nA. x\nB. y",
                context="passage",
                answers=["y"],
                original_context="",
                original_answers=["x"],
            )
        ],
    }
    options = BenchOptions(
        tasks=["answer_swap", "unanswerable", "context_enrich", "counterfactual"],
        settings={
            "answer_swap": ["closed_book", "open_book", "few_shot_adversarial"],
            "unanswerable": ["open_book"],
            "context_enrich": ["open_book"],
            "counterfactual": ["closed_book", "open_book"],
        },
        sampled={"counterfactual": ["open_book"], "unanswerable": []},
        k_shots=1,
    )
    the_plan = plan(cases, options, ["t"], DemoBook({"answer_swap": cases["answer_swap"]}, k=1))
    asks = the_plan.asks.values()
    # (a task left out of `sampled` would keep the papers' sampled settings: unanswerable's is turned off)
    # open-book original of s1: one ask for swap, unanswerable and both enriched copies
    assert sum(a.setting == "open_book" and a.context == "original s1" for a in asks) == 1
    assert (
        sum(u.variant == "original" and u.setting == "open_book" and u.case.seed_id == "s1" for u in the_plan.uses) == 4
    )
    # the counterfactual twin: closed-book, asked once per decoding for every setting that pairs with it
    twins = [a for a in asks if a.question.startswith("Q?") and a.context == ""]
    assert sorted((a.setting, a.decoding) for a in twins) == [("closed_book", "greedy"), ("closed_book", "sampled")]
    # few-shot with two seeds: each is asked with the other's case, originals keyed by their demonstrations
    few = [u for u in the_plan.uses if u.setting == "few_shot_adversarial"]
    assert len(few) == 4 and not the_plan.skipped
    counts = the_plan.counts()
    assert counts["saved"] == counts["uses"] - counts["asks"] == 3 + 1  # s1 open-book x3, q1 twin x1
    lonely = plan(
        {"answer_swap": [case("answer_swap", "s1")]},
        options,
        ["t", "u"],
        DemoBook({"answer_swap": [case("answer_swap", "s1")]}, k=1),
    )
    assert lonely.skipped["answer_swap"] == 2


def scored(task, seed, setting, value, decoding="greedy", variant="perturbed", status="ok"):
    return {
        "task": task,
        "seed_id": seed,
        "generator": "p",
        "target": "t",
        "setting": setting,
        "decoding": decoding,
        "variant": variant,
        "status": status,
        "task_correct": None if status != "ok" else value,
    }


def test_paired_effect_pairs_cases_scored_in_both_settings():
    records = [
        scored("answer_swap", "a", "open_book", 0.0),
        scored("answer_swap", "a", "opinion", 1.0),
        scored("answer_swap", "b", "open_book", 0.0),
        scored("answer_swap", "b", "opinion", 0.0),
        scored("answer_swap", "c", "open_book", 1.0),  # no opinion answer: not paired
        scored("answer_swap", "d", "open_book", 1.0),
        scored("answer_swap", "d", "opinion", 0, status="error:parse"),
        scored("answer_swap", "a", "opinion", 1.0, variant="original"),
    ]
    [row] = paired_effect(records, ("open_book", "greedy"), ("opinion", "greedy"))
    assert (row["base_rate"], row["alt_rate"], row["change"], row["n"], row["errors"]) == (0.0, 0.5, 0.5, 2, 1)
    assert row["low"] <= 0.5 <= row["high"]
    assert paired_effect(records, ("open_book", "greedy"), ("opinion", "greedy"), variant="original") == []


def test_ledger_counts_a_stage_finished_only_for_its_inputs(tmp_path):
    ledger = Ledger(tmp_path / "stages.json")
    ledger.finish("seeds.p", digest(["a", "b"]), {"lm.calls": 4.0})
    again = Ledger(tmp_path / "stages.json")  # what a resumed bench reads
    assert again.finished("seeds.p", digest(["a", "b"]))["metrics"] == {"lm.calls": 4.0}
    assert again.finished("seeds.p", digest(["a", "b", "c"])) is None


@pytest.mark.parametrize(
    "change, message",
    [
        ({"models": {"pivot": {"name": "qwen2.5-1.5b"}}}, "models.targets: the bench needs at least one target"),
        ({"models": {"targets": [{"name": "smollm2-135m"}]}}, "models.pivot: the bench needs a pivot"),
        ({"options": {"generators": {"answer_swap": {"seedz": "all"}}}}, "options.generators.answer_swap.seedz"),
        (
            {"options": {"settings": {"counterfactual": ["few_shot_clean"]}}},
            "options.settings.counterfactual: few-shot",
        ),
        ({"options": {"setings": {}}}, "options.setings: unknown key (did you mean 'settings'?)"),
    ],
)
def test_bench_config_errors_name_the_field(tmp_path, change, message):
    raw = {
        "name": "b",
        "task": "bench",
        "data": {"source": "nq", "limit": 3},
        "models": {"pivot": {"name": "qwen2.5-1.5b"}, "targets": [{"name": "smollm2-135m"}]},
        **change,
    }
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_shipped_bench_config_is_valid():
    result = CliRunner().invoke(app, ["validate", "experiments/configs/bench_local.yaml"])
    assert result.exit_code == 0, result.output


def test_validity_beside_each_task_is_review_based_when_the_cases_were_reviewed(isolated):
    from experiments.bench.summary import validity_figure
    from experiments.paths import runs_dir
    from tests.test_validity_run import make_generation_run

    make_generation_run(runs_dir(), run="bench/generate.answer_swap.p")
    reviewed = validity_figure("bench/generate.answer_swap.p", {})
    # 24 of the 30 accepted cases are valid (every 5th is not); the estimate rests on 22 reviewed cases
    estimate = re.fullmatch(r"(\d+)% valid \[(\d+)%, (\d+)%\] \(review of 22, prediction-powered\)", reviewed)
    assert estimate and int(estimate[2]) <= 80 <= int(estimate[3]), reviewed
    make_generation_run(runs_dir(), run="bench/generate.unanswerable.p", reviews=False)
    alone = validity_figure("bench/generate.unanswerable.p", {"judge_calibration.accuracy": 0.75})
    assert alone == "judge accepted 30/50 (60%); judge right on 75% of calibration controls"


def test_a_stage_whose_inputs_changed_runs_again_and_keeps_verdicts_only_of_unchanged_cases(tmp_path, monkeypatch):
    """A generator or reader changed since a stage finished: its old cases are stale (gemma3-270m's
    answers made with a demonstration it parroted), so the stage runs again; verdicts follow only
    cases that read the same."""
    import json

    import mlflow

    from experiments.bench.stages import StageRunner
    from experiments.run_store import RunStore

    monkeypatch.setattr(mlflow, "log_metrics", lambda *a, **k: None)
    monkeypatch.setattr("experiments.tracking.nested_run", lambda *a, **k: __import__("contextlib").nullcontext())
    runner = StageRunner(RunStore("bench-x", root=tmp_path), {}, "bench-x")

    def work(cases):
        def write(store):
            store.dir.mkdir(parents=True, exist_ok=True)
            with open(store.cases_path, "w") as handle:
                for case_id, context in cases:
                    handle.write(
                        json.dumps({"id": case_id, "status": "accepted", "context": context, "seconds": len(case_id)})
                        + "\n"
                    )
            return {"items": len(cases)}

        return write

    stage_dir = tmp_path / "bench-x" / "generate.t.p"
    runner.run("generate.t.p", digest(["v1"]), work([("a", "one"), ("b", "two")]))
    (stage_dir / "review").mkdir()
    (stage_dir / "review" / "alice.jsonl").write_text('{"id": "a", "verdict": "valid"}\n')
    # the same inputs: reused, nothing runs
    assert runner.run("generate.t.p", digest(["v1"]), lambda store: pytest.fail("ran again"))["items"] == 2
    # a new version that makes the same cases: runs again, the reviews follow
    runner.run("generate.t.p", digest(["v2"]), work([("a", "one"), ("b", "two")]))
    assert (stage_dir / "review" / "alice.jsonl").exists()
    assert (tmp_path / "bench-x" / f"generate.t.p.superseded-{digest(['v1'])}" / "cases.jsonl").exists()
    # a version whose cases differ: a new sample over the new cases; "a" reads as before and keeps its
    # verdict, "c" is new and waits for `reeval review`
    runner.run("generate.t.p", digest(["v3"]), work([("a", "one"), ("c", "three")]))
    sample = json.loads((stage_dir / "review" / "sample.json").read_text())
    assert sorted(c["id"] for c in sample["cases"]) == ["a", "c"]
    kept = [json.loads(line) for line in (stage_dir / "review" / "alice.jsonl").read_text().splitlines()]
    assert [(v["id"], v["verdict"]) for v in kept] == [("a", "valid")] and "carried" in kept[0]["note"]
    assert (tmp_path / "bench-x" / f"generate.t.p.superseded-{digest(['v2'])}" / "review" / "alice.jsonl").exists()
    # a case whose text changed keeps nothing
    runner.run("generate.t.p", digest(["v4"]), work([("a", "changed"), ("c", "three")]))
    assert not (stage_dir / "review" / "alice.jsonl").exists()


def test_a_passages_asks_are_asked_together_open_book_first_and_the_prefix_sharers_last():
    settings = ["task_instruction", "few_shot", "opinion", "open_book", "cot"]
    asks = [Ask("t", s, "greedy", "q", passage) for passage in ("passage one", "passage two") for s in settings]
    ordered = passage_order(reversed(asks))
    passages = [a.context for a in ordered]
    assert passages[:5] == [passages[0]] * 5 and passages[5:] == [passages[5]] * 5 != passages[:5]
    for block in (ordered[:5], ordered[5:]):
        assert block[0].setting == "open_book" and block[-1].setting == "opinion"


def test_the_opinion_prompt_opens_with_the_open_book_prompt_up_to_the_passage():
    """target_reader/3: what llama.cpp restores for a passage's opinion ask after its open-book one. The task
    instruction keeps the papers' layout (moved after the passage it cost accuracy on originals)."""
    reader, adapter = TargetReader(), dspy.JSONAdapter()
    passage = "The Permanent Fund is invested by the Alaska Permanent Fund Corporation ."
    prompts = {
        setting: "".join(m["role"] + m["content"] for m in adapter.format(predict.signature, [], inputs))
        for setting, predict, inputs in (
            ("open_book", reader.open_book, {"question": "q?", "context": passage}),
            ("opinion", reader.opinion, opinion_inputs("q?", passage)),
            ("task_instruction", reader.task_instruction, {"question": "q?", "context": passage}),
        )
    }
    prefix = prompts["open_book"][: prompts["open_book"].index(passage) + len(passage)]
    assert prompts["opinion"].startswith(prefix) and "Bob said" in prompts["opinion"]
    assert not prompts["task_instruction"].startswith(prefix) and '"unknown"' in prompts["task_instruction"]


def test_a_verdict_serves_a_case_of_another_id_that_reads_the_same(tmp_path):
    """A comparison's sweep stage writes the main stage's cases under its own variant's ids."""
    from experiments.review.carry import carry_reviews

    def stage(name, cases):
        folder = tmp_path / "run" / name
        folder.mkdir(parents=True)
        rows = [{"id": i, "seed_id": i, "status": "accepted", "context": c, "judge": {"if": True}} for i, c in cases]
        (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return folder

    main = stage("optimize", [("s1:mipro", "one"), ("s2:mipro", "two")])
    (main / "review").mkdir()
    (main / "review" / "alice.jsonl").write_text('{"id": "s1:mipro", "verdict": "invalid"}\n')
    sweep = stage("sweep", [("s1:uncompiled", "one"), ("s2:uncompiled", "other")])
    assert carry_reviews(main, sweep) == 1
    kept = [json.loads(line) for line in (sweep / "review" / "alice.jsonl").read_text().splitlines()]
    assert [(v["id"], v["verdict"]) for v in kept] == [("s1:uncompiled", "invalid")]
