"""The attack metric, and the optimisation task end to end with scripted LMs."""

import json

import pytest
import yaml

from experiments import runner
from experiments.compiled import load_compiled
from experiments.config import LMConfig
from experiments.config_loader import load_config
from experiments.lm.registry import ResolvedLM
from experiments.run_store import RunStore
from metrics.attack import attack_score, attack_summary, is_valid, setting_score
from programs.answer_kinds import KINDS
from programs.answer_swap import AnswerSwap
from tests.test_tasks_end_to_end import FORMAT_ANSWERS, scripted_lm


def test_attack_score_rewards_only_valid_cases():
    assert attack_score(False, [True, True], 1.0) == 0.0
    assert attack_score(False, [True], 0.0) == 0.0
    assert attack_score(True, [False, False], 0.0) == 1.0  # strength 0: validity is all that counts
    assert attack_score(True, [False, False], 1.0) == 0.0  # strength 1: only target failure counts
    assert attack_score(True, [True, False], 1.0) == 0.5
    assert attack_score(True, [True, True], 0.5) == 1.0
    assert attack_score(True, [False, False], 0.5) == 0.5
    with pytest.raises(ValueError, match="strength"):
        attack_score(True, [], 1.5)


def test_validity_needs_checks_and_both_verdicts():
    assert is_valid({"status": "accepted"})  # no judge role: the checks decide
    assert is_valid({"status": "accepted", "judge": {"if": True, "only_if": True}})
    assert not is_valid({"status": "accepted", "judge": {"if": True, "only_if": None}})
    assert not is_valid({"status": "rejected:judge_if", "judge": {"if": False, "only_if": True}})
    assert not is_valid({"status": "rejected:proposal_is_gold"})


def test_attack_summary_counts_success_over_valid_cases_only():
    records = [
        {"status": "accepted", "targets": {"t": {"perturbed_correct": False, "original_correct": True}}},
        {"status": "accepted", "targets": {"t": {"perturbed_correct": True, "original_correct": True}}},
        {"status": "accepted", "targets": {"t": {"perturbed_correct": False, "original_correct": False}}},
        {"status": "rejected:old_answer_absent", "targets": {}},
        {"status": "error:timeout"},
    ]
    summary = attack_summary(records, ["t"])
    assert summary["generated"] == 4 and summary["validity"]["rate"] == 0.75
    assert summary["targets"]["t"]["success"]["rate"] == pytest.approx(2 / 3)
    assert summary["targets"]["t"]["flip"]["rate"] == pytest.approx(1 / 3)
    assert 0 <= summary["targets"]["t"]["success"]["low"] < summary["targets"]["t"]["success"]["high"] <= 1


@pytest.fixture
def scripted_roles(monkeypatch):
    answers = {
        **FORMAT_ANSWERS,
        "`proposed_instruction`": {"proposed_instruction": "Propose a believable wrong answer of the same type."},
    }
    monkeypatch.setattr("tests.test_tasks_end_to_end.FORMAT_ANSWERS", answers)
    # The scripted pivot proposes one made-up name for every seed, whatever its kind: the kind check
    # (tests/test_answer_kinds.py) would refuse most, and these tests are about compiling, not typing.
    monkeypatch.setattr("programs.answer_swap.kind_problem", lambda *args: None)
    # Nor the pronoun and head checks: the one scripted name has no first name the lists know, and a scripted
    # swap leaves the old head noun in its passage. And code makes no name, so that the pivot names the people
    # (answer_swap/30 makes them up in code where it can): its proposal step is what these tests compile.
    monkeypatch.setattr("programs.answer_swap.person_gender", lambda *args: None)
    monkeypatch.setattr("programs.answer_swap.passage_gender", lambda *args: None)
    monkeypatch.setattr("programs.answer_swap.category_problem", lambda *args: None)
    monkeypatch.setattr("programs.answer_swap.made_up_names", lambda *args: iter(()))
    monkeypatch.setattr("programs.answer_swap.made_up_parts", lambda *args: iter(()))
    monkeypatch.setattr("programs.answer_swap.heads_left", lambda *args, **kwargs: [])
    # The pivot writes for every kind here, people too (by default it names none: answer_swap/33).
    monkeypatch.setattr("programs.answer_swap.PIVOT_KINDS", KINDS)

    def build_lms(run):
        lm = scripted_lm(runner.load_data(run.config).examples, run.config.task)
        lms = {role: ResolvedLM(role, LMConfig(name=f"dummy/{role}"), lm, None) for role in ("pivot", "judge")}
        lms["targets"] = [ResolvedLM("target", t, lm, None) for t in run.config.models.targets]
        return lms

    monkeypatch.setattr(runner, "build_lms", build_lms)


def optimize_config(tmp_path, **options):
    path = tmp_path / "optimize.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "opt",
                "task": "optimize",
                "data": {"source": "nq", "limit": 9, "max_evidence_words": 300},
                "models": {
                    "pivot": {"name": "qwen2.5-0.5b"},
                    "judge": {"name": "qwen2.5-1.5b"},
                    "targets": [{"name": "smollm2-135m"}, {"name": "gemma3-270m"}],
                },
                "validation": {"calibration_controls": 0},
                "options": {
                    "generator": "answer_swap",
                    "train": 3,
                    "val": 2,
                    "test": 3,
                    "max_demos": 2,
                    "mipro_candidates": 2,
                    "mipro_trials": 2,
                    **options,
                },
            }
        )
    )
    return load_config(path)


def test_optimisation_run_compiles_splits_and_evaluates_held_out(isolated, scripted_roles):
    config = optimize_config(isolated)
    result = runner.run_experiment(config, progress=False)
    records = RunStore(result.run_id).records()
    splits = json.loads((RunStore(result.run_id).dir / "splits.json").read_text())
    train, val, test = set(splits["train"]), set(splits["val"]), set(splits["test"])
    assert len(train) == 3 and len(val) == 2 and len(test) == 3 and not (train & val or train & test or val & test)
    assert splits["optimisation_targets"] == ["smollm2-135m"] and splits["held_out_targets"] == ["gemma3-270m"]
    evaluated = [r for r in records if r.get("split") == "test"]
    assert {r["seed_id"] for r in evaluated} == test
    assert {r["variant"] for r in evaluated} == {"uncompiled", "bootstrap_fewshot", "mipro_v2"}
    for record in evaluated:  # every valid test case was put to both targets, the held-out one too
        assert record["valid"] and set(record["targets"]) == {"smollm2-135m", "gemma3-270m"}
    assert {r["status"] for r in records if r.get("split") != "test"} == {"split:train", "split:val", "split:unused"}
    for variant in ("uncompiled", "bootstrap_fewshot", "mipro_v2"):
        assert result.metrics[f"test.{variant}.validity.rate"] == 1.0
        assert f"test.{variant}.gemma3-270m.success.low" in result.metrics
        assert f"val.{variant}.score" in result.metrics

    compiled = RunStore(result.run_id).dir / "compiled"
    assert {p.name for p in compiled.glob("*.json")} >= {"bootstrap_fewshot.json", "mipro_v2.json", "best.json"}
    bootstrapped = AnswerSwap()
    meta = load_compiled(bootstrapped, f"run:{result.run_id}:bootstrap_fewshot", "answer_swap")
    assert meta["optimizer"] == "bootstrap_fewshot" and bootstrapped.propose_kind.demos  # demos came from traces
    assert set(meta["splits"]["train"]) == train
    with pytest.raises(ValueError, match="compiled for 'answer_swap'"):
        load_compiled(AnswerSwap(), f"run:{result.run_id}", "unanswerable")

    import mlflow

    artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(result.mlflow_run_id, "compiled")}
    assert "compiled/best.json" in artifacts


def test_compiled_program_is_found_through_mlflow_without_the_local_run(isolated, scripted_roles):
    import shutil

    result = runner.run_experiment(optimize_config(isolated, optimizers=["bootstrap_fewshot"]), progress=False)
    shutil.rmtree(RunStore(result.run_id).dir)
    program = AnswerSwap()
    meta = load_compiled(program, f"run:{result.run_id}", "answer_swap")
    assert meta["generator"] == "answer_swap" and "val_scores" in meta
    with pytest.raises(FileNotFoundError, match="no-such-run"):
        load_compiled(AnswerSwap(), "run:no-such-run", "answer_swap")


def test_a_later_config_uses_the_compiled_program(isolated, scripted_roles, monkeypatch):
    result = runner.run_experiment(optimize_config(isolated, optimizers=["bootstrap_fewshot"]), progress=False)
    path = isolated / "swap.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "swap",
                "task": "answer_swap",
                "data": {"source": "nq", "limit": 2, "max_evidence_words": 300},
                "models": {"pivot": {"name": "qwen2.5-0.5b"}},
                "validation": {"calibration_controls": 0},
                "options": {"program": f"run:{result.run_id}:bootstrap_fewshot"},
            }
        )
    )
    from experiments.tasks.answer_swap import AnswerSwapTask

    task = AnswerSwapTask({"pivot": None}, AnswerSwapTask.Options.model_validate(load_config(path).options))
    assert task.program.propose_kind.demos


def test_unanswerable_generator_compiles_and_is_loaded_by_its_task(isolated, scripted_roles, monkeypatch):
    import programs.faitheval
    import tests.test_tasks_end_to_end as scripted

    # The scripted rewrite is one sentence for every sentence it replaces; the topic check (tested in
    # test_faitheval) would drop it everywhere and leave no trace to bootstrap a demonstration from.
    monkeypatch.setattr(programs.faitheval, "shares_topic", lambda rewrite, sentence, answers: True)
    # the judge must find the rewritten context unanswerable and the old answer unsupported
    monkeypatch.setattr(
        scripted,
        "FORMAT_ANSWERS",
        {**scripted.FORMAT_ANSWERS, "Literal['yes', 'no']": {"reason": "r", "verdict": "no"}},
    )
    result = runner.run_experiment(
        # `removal: rewrite`: the default drops sentences in code, and only a rewrite leaves a trace to learn from
        optimize_config(
            isolated, generator="unanswerable", optimizers=["bootstrap_fewshot"], dials={"removal": ["rewrite"]}
        ),
        progress=False,
    )
    assert result.metrics["test.bootstrap_fewshot.validity.rate"] > 0
    from experiments.tasks.faitheval import UnanswerableTask

    task = UnanswerableTask({"pivot": None}, UnanswerableTask.Options(program=f"run:{result.run_id}:bootstrap_fewshot"))
    assert task.program.rewrite.demos
    with pytest.raises(ValueError, match="compiled for 'unanswerable'"):
        load_compiled(AnswerSwap(), f"run:{result.run_id}", "answer_swap")


def test_optimisation_needs_enough_seeds_and_known_targets(isolated, scripted_roles):
    with pytest.raises(ValueError, match="needs train\\+val\\+test"):
        runner.run_experiment(optimize_config(isolated, train=8), progress=False)
    with pytest.raises(ValueError, match="not among models.targets"):
        runner.run_experiment(optimize_config(isolated, optimisation_targets=["qwen2.5-0.5b"]), progress=False)


def test_gepa_compiles_from_the_metric_feedback(isolated, scripted_roles, monkeypatch):
    import tests.test_tasks_end_to_end as scripted

    reflection = {"new_instruction": "Given the question and its answer, propose a wrong answer of the same type."}
    monkeypatch.setattr(scripted, "FORMAT_ANSWERS", {**scripted.FORMAT_ANSWERS, "```": reflection})
    result = runner.run_experiment(
        optimize_config(isolated, optimizers=["gepa"], gepa_metric_calls=12, strength=1.0), progress=False
    )
    assert "compile.gepa.failed" not in result.metrics
    assert {r["variant"] for r in RunStore(result.run_id).records() if r.get("split") == "test"} == {
        "uncompiled",
        "gepa",
    }


def compare_config(tmp_path, pivots=("qwen2.5-0.5b", "smollm2-135m")):
    path = tmp_path / "compare.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "cmp",
                "task": "compare_pivots",
                "data": {"source": "nq", "limit": 3, "max_evidence_words": 300},
                "models": {
                    "pivots": [{"name": p} for p in pivots],
                    "judge": {"name": "qwen2.5-1.5b"},
                    "targets": [{"name": "smollm2-135m"}, {"name": "gemma3-270m"}],
                },
                "validation": {"calibration_controls": 0},
                "options": {"generator": "answer_swap"},
            }
        )
    )
    return load_config(path)


@pytest.fixture
def scripted_pivots(monkeypatch):
    """Two pivots that differ: the second proposes nothing, so its cases never pass the checks."""
    import dspy

    from tests.test_tasks_end_to_end import FORMAT_ANSWERS

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        good = scripted_lm(examples, run.config.task)
        bad = scripted_lm(examples, run.config.task)
        # nothing on the first try, nothing in a retry's list (answer_swap/13)
        bad.answers = {
            **bad.answers,
            "`wrong_answer`.": {"answer_type": "t", "wrong_answer": ""},
            "`answers`": {"answers": []},
        }
        assert "`wrong_answer`." in FORMAT_ANSWERS
        pivots = [ResolvedLM("pivot", c, lm, None) for c, lm in zip(run.config.models.pivots, (good, bad), strict=True)]
        for resolved in pivots:
            resolved.lm.model = f"dummy/{resolved.config.name}"
        return {
            "pivots": pivots,
            "judge": ResolvedLM("judge", LMConfig(name="dummy/judge"), good, None),
            "targets": [ResolvedLM("target", t, good, None) for t in run.config.models.targets],
        }

    monkeypatch.setattr(runner, "build_lms", build_lms)
    # Every seed code does not make is the pivot's to write, whatever its kind (the silent pivot writes none).
    monkeypatch.setattr("programs.answer_swap.PIVOT_KINDS", KINDS)
    return dspy


def test_pivot_comparison_reports_each_pivot_against_each_target(isolated, scripted_pivots):
    result = runner.run_experiment(compare_config(isolated), progress=False)
    records = RunStore(result.run_id).records()
    assert {r["pivot"] for r in records} == {"qwen2.5-0.5b", "smollm2-135m"}
    assert len(records) == 6  # 3 seeds x 2 pivots
    m = result.metrics
    assert m["pivot.qwen2.5-0.5b.validity.rate"] > 0 and m["pivot.qwen2.5-0.5b.judge_if"] == 1.0
    # A year or number is moved in code whoever the pivot is; every other seed of the silent pivot has no case.
    empty = [r for r in records if r["pivot"] == "smollm2-135m"]
    written = [r for r in empty if not any(p["answer_type"].startswith("distance:") for p in r["proposals"])]
    assert written and {r["status"] for r in written} == {"rejected:empty_proposal"}
    assert m["pivot.smollm2-135m.valid"] == len(empty) - len(written)
    for target in ("smollm2-135m", "gemma3-270m"):
        assert f"pivot.qwen2.5-0.5b.{target}.success.rate" in m
    report = RunStore(result.run_id).dir / "report"
    table = (report / "comparison.md").read_text()
    assert "success on gemma3-270m" in table and "tokens / valid" in table
    per_pivot = json.loads((report / "comparison.json").read_text())["pivots"]
    # a first run: no pivot call came from the cache, and the table does not say any did
    assert {name: row["cached_calls"] for name, row in per_pivot.items()} == {"qwen2.5-0.5b": 0, "smollm2-135m": 0}
    # (the Cost section has a column of its own for them)
    assert "calls from the cache" not in table
    assert (report / "generator_x_target.png").stat().st_size > 1000

    import mlflow

    children = mlflow.search_runs(
        filter_string=f"tags.mlflow.parentRunId = '{result.mlflow_run_id}'",
        search_all_experiments=True,
        output_format="list",
    )
    pivot_runs = {r.data.tags["mlflow.runName"]: r for r in children if r.data.tags.get("reeval.role") == "pivot"}
    assert set(pivot_runs) == {"pivot/qwen2.5-0.5b", "pivot/smollm2-135m"}
    own = pivot_runs["pivot/qwen2.5-0.5b"].data.metrics
    assert own["pivot.qwen2.5-0.5b.validity.rate"] == m["pivot.qwen2.5-0.5b.validity.rate"]
    assert not any("smollm2-135m.validity" in k for k in own)


def test_pivot_comparison_refuses_a_pivot_listed_twice(isolated, scripted_pivots):
    with pytest.raises(ValueError, match="qwen2.5-0.5b is listed twice with the same settings"):
        runner.run_experiment(compare_config(isolated, pivots=("qwen2.5-0.5b", "qwen2.5-0.5b")), progress=False)


def test_a_trace_with_a_reply_the_program_threw_away_is_no_demonstration():
    """BootstrapFewShot passes the trace and may take any call of a predictor as the demo: a case whose
    program dropped a rewrite that still named the answer must not be bootstrapped; evaluation (no trace)
    and GEPA's feedback metric score it as usual."""
    import dspy

    from experiments.attack import AttackMetric
    from experiments.task_registry import get

    class Scorer:
        asked = 0

        def assess(self, case, targets):
            Scorer.asked += 1
            return {**case, "attack_score": 0.5, "valid": True, "targets": {}}

    example = dspy.Example(id="s1", question="q", context="c", answers=["a"]).with_inputs("question")
    dropped = dspy.Prediction(
        rejection=None, context="rest", edits=[{"from": "a sentence with a", "to": None}], checks={}
    )
    kept = dspy.Prediction(rejection=None, context="rest", edits=[{"from": "x a", "to": "x"}], checks={})
    metric = AttackMetric(get("unanswerable").attack, Scorer(), [])
    assert metric(example, dropped, trace=[("step",)]) == 0.0 and Scorer.asked == 0
    assert metric(example, kept, trace=[("step",)]) == 0.5
    assert metric(example, dropped) == 0.5  # evaluation: the case is what it is
    gepa = AttackMetric(get("unanswerable").attack, Scorer(), [], feedback=True)
    assert gepa(example, dropped, trace=[("step",)]).score == 0.5
    refused = dspy.Prediction(
        rejection=None, context="c2", new_answer="b", checks={}, edit="code",
        proposals=[{"proposal": "a", "problem": "proposal_is_gold"}, {"proposal": "b", "problem": None}],
    )  # fmt: skip
    assert AttackMetric(get("answer_swap").attack, Scorer(), [])(example, refused, trace=[("step",)]) == 0.0


def test_a_dial_setting_is_scored_whole_so_the_strengths_can_choose_apart():
    # The unanswerable background dial on 40 validation seeds, roughly as measured: background 0 makes more
    # valid cases, background 4 fewer that fool the target more often.
    gentle = ([True] * 12 + [False] * 28, [1.0] * 6 + [0.0] * 6)
    hard = ([True] * 9 + [False] * 31, [1.0] * 8 + [0.0] * 1)
    assert setting_score(*gentle, 0.0) > setting_score(*hard, 0.0)  # strength 0: the larger yield
    assert setting_score(*hard, 1.0) > setting_score(*gentle, 1.0)  # strength 1: the harder cases
    lucky = ([True] * 2 + [False] * 38, [1.0, 1.0])
    assert setting_score(*lucky, 1.0) < setting_score(*hard, 1.0)  # two lucky cases do not win
    assert setting_score([False] * 5, [], 1.0) == 0.0 and setting_score([], [], 0.5) == 0.0
    with pytest.raises(ValueError):
        setting_score([True], [1.0], 1.5)


def test_the_dials_are_searched_on_validation_and_a_later_config_loads_them(isolated, scripted_roles, monkeypatch):
    from experiments.tasks import optimize
    from experiments.tasks.answer_swap import AnswerSwapTask

    # Validation prefers the far swaps: the search must choose them and compile at them.
    monkeypatch.setattr(
        optimize.OptimizeTask, "_dial_score", lambda self, program, val: 1.0 if program.distance == "far" else 0.5
    )
    config = optimize_config(isolated, optimizers=["bootstrap_fewshot"], dials={"distance": ["proposed", "far"]})
    result = runner.run_experiment(config, progress=False)
    assert result.metrics["dials.val_score.distance-far"] == 1.0
    assert result.metrics["dials.val_score.distance-proposed"] == 0.5
    variants = {r["variant"] for r in RunStore(result.run_id).records() if r.get("split") == "test"}
    assert variants == {"uncompiled", "dials", "bootstrap_fewshot"}
    meta = load_compiled(program := AnswerSwap(), f"run:{result.run_id}:bootstrap_fewshot", "answer_swap")
    assert meta["dials"] == {"distance": "far"} and program.distance == "far"
    task = AnswerSwapTask({"pivot": None}, AnswerSwapTask.Options(program=f"run:{result.run_id}:bootstrap_fewshot"))
    assert task.program.distance == "far"


def test_a_dial_grid_reads_strength_as_its_ladder_and_refuses_unknown_dials():
    from experiments.tasks.optimize import OptimizeOptions, dial_grid

    assert dial_grid("unanswerable", {"strength": [0.0, 1.0]}) == [
        {"removal": "drop", "lures": "remove", "background": 0},
        {"removal": "drop", "lures": "remove", "background": 8},
    ]
    assert dial_grid("unanswerable", {"removal": ["drop", "rewrite"], "lures": ["keep"]}) == [
        {"removal": "drop", "lures": "keep"},
        {"removal": "rewrite", "lures": "keep"},
    ]
    with pytest.raises(ValueError, match="dials"):
        OptimizeOptions(generator="unanswerable", dials={"removal": ["shred"]})
    with pytest.raises(ValueError, match="dials"):
        OptimizeOptions(generator="answer_swap", dials={"nonsense": [1]})
