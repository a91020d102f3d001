"""task: optimize_compare with scripted LMs: known seeds from the knowledge scan, every variant on the same test
seeds, paired differences, the strength curve, prompt diffs, cases side by side, cost, resume."""

import json

import dspy
import pytest
import yaml

from experiments import launch, runner
from experiments.config import ConfigError, LMConfig
from experiments.config_loader import load_config
from experiments.lm.registry import ResolvedLM
from experiments.optimize_compare.changes import changed_excerpt, side_by_side
from experiments.optimize_compare.compare import comparison, fooled_outcome, validity_outcome
from experiments.review.sample import open_sample
from experiments.review.verdict_log import VerdictLog
from experiments.run_store import RunStore
from experiments.validity import run_validity
from programs.answer_kinds import KINDS
from tests.test_tasks_end_to_end import FORMAT_ANSWERS

KNOWN_SHARE = 3  # every seed but each third is known to the optimisation target

CLOSED_BOOK_TAIL = "\n\nRespond with a JSON object in the following order of fields: `answer`."


def scripted(examples, knows: bool) -> dspy.utils.DummyLM:
    """Open-book: right. Closed-book: right on the known questions (for a target that knows), else "no idea"."""
    answers = dict(FORMAT_ANSWERS)
    answers["`proposed_instruction`"] = {"proposed_instruction": "Propose a believable wrong answer of the same type."}
    for e in examples:
        answers[e.context[:200]] = {"answer": e.answers[0]}
    for i, e in enumerate(sorted(examples, key=lambda e: e.id)):
        if knows and i % KNOWN_SHARE:
            answers[f"[[ ## question ## ]]\n{e.question}{CLOSED_BOOK_TAIL}"] = {"answer": e.answers[0]}
    answers["`answer`."] = {"answer": "no idea"}
    return dspy.utils.DummyLM(answers, adapter=dspy.JSONAdapter())


@pytest.fixture
def roles(monkeypatch):
    """Each role its own scripted LM, counting its calls the way a local engine does."""

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        lms = {
            role: ResolvedLM(role, LMConfig(name=f"dummy/{role}"), scripted(examples, False), None)
            for role in ("pivot", "judge")
        }
        lms["targets"] = [
            ResolvedLM("target", t, scripted(examples, i == 0), None) for i, t in enumerate(run.config.models.targets)
        ]
        return lms

    monkeypatch.setattr(runner, "build_lms", build_lms)
    monkeypatch.setattr(ResolvedLM, "usage", lambda self: {"calls": len(self.lm.history)})
    # The comparison compiles the pivot's proposal step: as in tests/test_optimize.py, code makes no name (so the
    # pivot names the people) and the scripted swaps pass the kind, pronoun and head checks.
    monkeypatch.setattr("programs.answer_swap.kind_problem", lambda *args: None)
    monkeypatch.setattr("programs.answer_swap.person_gender", lambda *args: None)
    monkeypatch.setattr("programs.answer_swap.made_up_names", lambda *args: iter(()))
    monkeypatch.setattr("programs.answer_swap.heads_left", lambda *args, **kwargs: [])
    monkeypatch.setattr("programs.answer_swap.PIVOT_KINDS", KINDS)  # by default the pivot names no people


def compare_config(tmp_path, **options):
    path = tmp_path / "compare.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "cmp",
                "task": "optimize_compare",
                "data": {"source": "nq", "limit": 18, "max_evidence_words": 300},
                "models": {
                    "pivot": {"name": "qwen2.5-0.5b"},
                    "judge": {"name": "qwen2.5-1.5b"},
                    "targets": [{"name": "smollm2-135m"}, {"name": "gemma3-270m"}],
                },
                "validation": {"calibration_controls": 0},
                "options": {
                    "generator": "answer_swap",
                    "optimizers": ["bootstrap_fewshot", "mipro_v2"],
                    "train": 2,
                    "val": 2,
                    "test": 6,
                    "max_demos": 1,
                    "mipro_candidates": 2,
                    "mipro_trials": 1,
                    "strengths": [0.0, 0.5],
                    "scan": {"block": 4},
                    **options,
                },
            }
        )
    )
    return load_config(path)


def test_the_comparison_end_to_end(isolated, roles):
    # Train is two of the first four known seeds; the scripted pivot's swap is rejected on two of them, and split
    # seed 1 puts an accepted one in train, so BootstrapFewShot has a demonstration to keep.
    config = compare_config(isolated, split_seed=1)
    result = launch.run_experiment(config, progress=False)
    store = RunStore(result.run_id)
    ledger = json.loads((store.dir / "stages.json").read_text())
    assert set(ledger) == {"knowledge.smollm2-135m", "optimize.strength_0.5", "sweep.strength_0"}

    scan = RunStore(f"{result.run_id}/knowledge.smollm2-135m").records()
    known = {r["seed_id"] for r in scan if r.get("closed_correct") and r.get("open_correct")}
    main = RunStore(f"{result.run_id}/optimize.strength_0.5")
    splits = json.loads((main.dir / "splits.json").read_text())
    chosen = set(splits["train"]) | set(splits["val"]) | set(splits["test"])
    assert len(splits["test"]) == 6 and chosen <= known  # only seeds the optimisation target knows
    assert ledger["knowledge.smollm2-135m"]["metrics"]["rows_scanned"] < 18  # the scan stopped once enough were known
    sweep = json.loads((RunStore(f"{result.run_id}/sweep.strength_0").dir / "splits.json").read_text())
    assert sweep["test"] == splits["test"]  # the curve's points are on the same test seeds

    test = [r for r in main.records() if r.get("split") == "test"]
    for variant in ("uncompiled", "bootstrap_fewshot", "mipro_v2"):
        assert sorted(r["seed_id"] for r in test if r["variant"] == variant) == sorted(splits["test"])

    m = result.metrics
    assert m["test_seeds"] == 6
    assert m["compare.uncompiled.validity.n"] == 6
    for variant in ("bootstrap_fewshot", "mipro_v2"):
        for measure in ("validity", "optimised", "held_out"):
            assert 0 <= m[f"compare.{variant}.vs_uncompiled.{measure}.p"] <= 1
            assert m[f"compare.{variant}.vs_uncompiled.{measure}.n"] > 0
    assert {"strength.0.validity.rate", "strength.0.5.validity.rate", "strength.0.optimised.per_seed.high"} <= set(m)
    assert m["cost.bootstrap_fewshot.compile_calls"] > 0 and m["cost.uncompiled.test_calls"] > 0
    assert m["cost.uncompiled.compile_calls"] == 0
    printed = result.task.summary_metrics(m)  # the CLI's table: the paired differences, not every figure
    assert "compare.mipro_v2.vs_uncompiled.validity.p" in printed and not any(k.startswith("cost.") for k in printed)

    report = store.dir / "report"
    page = (report / "comparison.md").read_text()
    assert "exact McNemar p" in page and "held-out targets" in page
    assert "### bootstrap_fewshot" in page and "```diff" in page
    assert "+++ compiled.propose_kind" in page  # the bootstrapped demos are in the compiled prompt
    assert page.count("**") >= 2 * 3  # three seeds side by side
    assert f"reeval review {result.run_id}/optimize.strength_0.5" in page
    assert (report / "strength_curve.png").stat().st_size > 1000
    payload = json.loads((report / "comparison.json").read_text())
    assert [p["strength"] for p in payload["curve"]] == [0.0, 0.5]

    import mlflow

    artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(result.mlflow_run_id, "report")}
    assert "report/strength_curve.png" in artifacts

    assert "compare.uncompiled.validity_reviewed.rate" not in m

    # A blind review of the test cases, then the run resumed: each variant's review-based validity in the report.
    sample, _ = open_sample(main.dir / "review", main.records(), f"{result.run_id}/optimize.strength_0.5", size=8)
    grouped = [c for c in sample["cases"] if c.get("same")]
    assert grouped  # the variants wrote identical cases for some seeds: drawn once, read once
    log = VerdictLog(main.dir / "review", "reviewer-1")
    for i, case in enumerate(sample["cases"]):
        log.append(case["id"], "invalid" if i == 0 else "valid", "")
    read = {c["id"] for c in sample["cases"]} | {i for c in grouped for i in c["same"]}
    again = launch.run_experiment(config, progress=False)  # resumed: every stage reused, nothing asked again
    assert again.new_cases == 0 and again.metrics["compare.mipro_v2.vs_uncompiled.validity.diff"] == pytest.approx(
        m["compare.mipro_v2.vs_uncompiled.validity.diff"]
    )
    reviewed = json.loads((report / "comparison.json").read_text())["review"]["figures"]["variants"]
    for variant, figures in reviewed.items():
        own = {r["id"] for r in test if r["variant"] == variant and r["status"] == "accepted"}
        assert figures["n"] == len(own & read) and figures["accepted"] == len(own)
    first = next(r for r in test if r["id"] == sample["cases"][0]["id"])
    assert reviewed[first["variant"]]["rate"] < 1  # the one invalid verdict counts against its variant
    assert again.metrics[f"compare.{first['variant']}.validity_reviewed.rate"] < 1
    assert "valid share of accepted" in (report / "comparison.md").read_text()
    curve = {p["strength"]: p for p in json.loads((report / "comparison.json").read_text())["curve"]}
    assert curve[0.5]["reviewed"] == reviewed["mipro_v2"]  # the main stage's point is its MIPROv2 row
    sweep = RunStore(f"{result.run_id}/sweep.strength_0").dir / "review"
    carried = [json.loads(line) for line in (sweep / "reviewer-1.jsonl").read_text().splitlines()]
    assert carried and all("carried" in v["note"] or v["note"] == "" for v in carried)  # identical cases keep theirs
    assert (curve[0.0]["reviewed"] or {}).get("n", 0) > 0
    whole = run_validity(f"{result.run_id}/optimize.strength_0.5")  # the stage as a whole says its copies
    assert any("share its verdict" in note for note in whole.notes)


def test_the_judge_is_the_one_measured_for_the_generator(isolated, roles, monkeypatch):
    """Not OptimizeTask's default reasoned judge: the method validation.judge_method picks for the generator's
    cases (for the shipped qwen2.5-1.5b judge, extraction on answer swaps, stacked on unanswerable cases)."""
    from experiments.optimize_compare import driver
    from programs.judge import CaseJudge

    asked, built = [], []
    params = {"method": "reasoned", "source": "measured for answer_swap (test)"}
    monkeypatch.setattr(driver, "resolve_params", lambda lm, spec, task, method: asked.append(task) or params)
    real = driver.build_task

    def spy(config, lms, judge_params):
        task, judge = real(config, lms, judge_params)
        built.append(task.scorer.judge)
        return task, judge

    monkeypatch.setattr(driver, "build_task", spy)
    result = launch.run_experiment(compare_config(isolated, optimizers=["bootstrap_fewshot"]), progress=False)
    assert asked == ["answer_swap"]
    assert built and all(isinstance(j, CaseJudge) and j.params == {"method": "reasoned"} for j in built)
    page = (RunStore(result.run_id).dir / "report" / "comparison.md").read_text()
    assert "(reasoned (measured for answer_swap (test)))" in page


def test_too_few_known_seeds_is_a_config_error(isolated, roles):
    with pytest.raises(ConfigError, match="seeds needed"):
        launch.run_experiment(compare_config(isolated, test=12), progress=False)


def test_more_test_seeds_leave_train_and_validation_as_they_were(isolated, roles):
    """Runs that differ only in options.test compile on the same seeds, so their results stay comparable."""
    splits = []
    for test in (2, 6):
        config = compare_config(
            isolated,
            test=test,
            val=3,
            optimizers=[],
            sweep_optimizer="dials",
            strengths=[1.0],
            strength=1.0,
            dials={"distance": ["proposed"]},
        )
        result = launch.run_experiment(config, progress=False)
        splits.append(json.loads((RunStore(f"{result.run_id}/optimize.strength_1").dir / "splits.json").read_text()))
    fewer, more = splits
    assert fewer["train"] == more["train"] and fewer["val"] == more["val"]
    assert len(fewer["test"]) == 2 and more["test"][:2] == fewer["test"]


def test_the_scan_starts_from_a_shipped_archive(isolated, roles, monkeypatch):
    """The knowledge-conflict bench's archived scans answer this scan too (same asks, same order): on a new
    machine (another runs dir, an empty call cache) no row is asked again."""
    import sys

    from experiments.bench import scan_archive
    from scripts import archive_knowledge_scan

    monkeypatch.setattr(scan_archive, "archive_dir", lambda: isolated / "archive")
    config = compare_config(isolated, test=12)  # more than the 18 rows hold: the whole scan, then the error
    with pytest.raises(ConfigError):
        launch.run_experiment(config, progress=False)
    (run_id,) = [p.name for p in (isolated / "runs").iterdir()]
    monkeypatch.setattr(sys, "argv", ["archive_knowledge_scan.py", run_id])
    archive_knowledge_scan.main()
    assert [p.name for p in (isolated / "archive").iterdir()] == ["nq-all-smollm2-135m.jsonl.gz"]

    monkeypatch.setenv("REEVAL_RUNS_DIR", str(isolated / "runs-elsewhere"))
    monkeypatch.setenv("REEVAL_CACHE_DIR", str(isolated / "cache-elsewhere"))
    with pytest.raises(ConfigError):
        launch.run_experiment(config, progress=False)
    records = RunStore(f"{run_id}/knowledge.smollm2-135m").records()
    assert len(records) == 18 and all(r.get("archived") for r in records)


def test_unanswerable_takes_any_seeds_and_the_task_instruction(isolated, roles):
    with pytest.raises(ValueError, match="seeds: known is for generators whose cases contradict"):
        compare_config(isolated, generator="unanswerable", seeds="known")
    from experiments.tasks.optimize import OptimizeOptions, OptimizeTask

    lms = {"pivot": None, "judge": None, "targets": []}
    task = OptimizeTask(lms, OptimizeOptions(generator="unanswerable"))
    assert task.scorer.setting == "task_instruction" and task.scorer.judge_lm is None  # no judge LM given
    assert OptimizeTask(lms, OptimizeOptions(generator="answer_swap")).scorer.setting == "open_book"


def _case(seed, variant, status="accepted", **targets):
    return {
        "seed_id": seed,
        "variant": variant,
        "split": "test",
        "status": status,
        "targets": {t: {"perturbed_correct": c} for t, c in targets.items()},
    }


def test_paired_outcomes_count_an_invalid_case_as_fooling_nobody():
    assert fooled_outcome(_case("s", "v", t=False), "t") is True
    assert fooled_outcome(_case("s", "v", status="rejected:old_answer_left"), "t") is False
    assert fooled_outcome(_case("s", "v", status="error:timeout"), "t") is None
    assert fooled_outcome(_case("s", "v", t=None), "t") is None
    assert validity_outcome(None) is None and validity_outcome(_case("s", "v")) is True


def test_comparison_pairs_by_seed_and_keeps_groups_apart():
    records = []
    for i in range(6):  # uncompiled fools the optimisation target on s0, compiled on s0-s4; held-out never
        records.append(_case(f"s{i}", "uncompiled", a=i != 0, h=True))
        records.append(_case(f"s{i}", "compiled", a=i == 5, h=True))
    records.append(_case("s6", "compiled", status="error:timeout"))  # unpaired: left out
    rows = comparison(records, ["uncompiled", "compiled"], {"optimised": ["a"], "held_out": ["h"]})
    base, compiled = rows
    assert base["optimised"]["per_seed"]["rate"] == pytest.approx(1 / 6) and "vs_uncompiled" not in base
    d = compiled["vs_uncompiled"]["optimised"]
    assert (d["n"], d["a_only"], d["b_only"]) == (6, 0, 4) and d["diff"] == pytest.approx(4 / 6)
    assert d["p"] == pytest.approx(2 / 16)  # 2 * P(X <= 0), X ~ Bin(4, 1/2)
    assert compiled["vs_uncompiled"]["held_out"]["diff"] == 0
    assert compiled["errors"] == 1 and compiled["validity"]["n"] == 6


def test_success_on_seeds_valid_in_both_pairs_only_those_seeds():
    records = []
    for i in range(8):  # the compiled program makes fewer valid cases (s0-s3), and fools the target on all of them
        records.append(_case(f"s{i}", "uncompiled", a=i % 2 == 0))
        records.append(_case(f"s{i}", "compiled", status="accepted" if i < 4 else "rejected:judge", a=False))
    _, compiled = comparison(records, ["uncompiled", "compiled"], {"optimised": ["a"]})
    both = compiled["vs_uncompiled"]["optimised.valid_both"]
    assert (both["n"], both["a_only"], both["b_only"]) == (4, 0, 2) and both["diff"] == pytest.approx(0.5)
    per_seed = compiled["vs_uncompiled"]["optimised"]
    assert per_seed["n"] == 8 and per_seed["b_only"] == 2 and per_seed["a_only"] == 2  # s5, s7 lost to validity


def test_changed_excerpt_shows_the_swap_in_its_words():
    original = " ".join(f"w{i}" for i in range(60)) + " Paris is the capital ."
    perturbed = original.replace("Paris", "Lyon")
    excerpt = changed_excerpt(original, perturbed, width=3)
    assert excerpt == "… w58 w59 Lyon is the capital …" or excerpt.startswith("… w57 w58 w59 Lyon")
    assert changed_excerpt("same words", "same words") == "(context unchanged)"


def test_side_by_side_needs_every_variant_on_the_seed():
    records = [_case("s1", "a"), _case("s1", "b"), _case("s2", "a")]
    for r in records:
        r.update(question="q?", original_answers=["x"], original_context="one two", context="one three")
    shown = side_by_side(records, ["a", "b"], ["t"], 3)
    assert [s["seed_id"] for s in shown] == ["s1"] and set(shown[0]["cases"]) == {"a", "b"}
    assert "three" in shown[0]["cases"]["b"]["excerpt"]


def test_the_curve_of_the_dial_search_alone(isolated, roles):
    with pytest.raises(ValueError, match="give the dials to search"):
        compare_config(isolated, sweep_optimizer="dials")
    config = compare_config(
        isolated,
        optimizers=[],
        sweep_optimizer="dials",
        strengths=[0.0, 1.0],
        strength=1.0,
        dials={"distance": ["proposed", "far"]},
    )
    result = launch.run_experiment(config, progress=False)
    stages = json.loads((RunStore(result.run_id).dir / "stages.json").read_text())
    # the main stage (strength 1) serves its own point of the curve; strength 0 searches again, nothing compiled
    assert {"optimize.strength_1", "sweep.strength_0"} <= set(stages)
    for stage in ("optimize.strength_1", "sweep.strength_0"):
        variants = {r["variant"] for r in RunStore(f"{result.run_id}/{stage}").records() if r.get("split") == "test"}
        assert variants == {"uncompiled", "dials"}
        chosen = json.loads((RunStore(f"{result.run_id}/{stage}").dir / "compiled" / "dial_search.json").read_text())
        assert chosen["chosen"] in ({"distance": "proposed"}, {"distance": "far"})
    # the dial search's variant is compared with the uncompiled program, paired, and each strength is a point
    assert result.metrics["compare.dials.validity.n"] == 6
    assert "compare.dials.vs_uncompiled.validity.p" in result.metrics
    assert {"strength.0.validity.rate", "strength.1.validity.rate"} <= set(result.metrics)
