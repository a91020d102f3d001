"""The bench end to end on a tiny world (3 NQ-like seeds, 3 ARC-like questions, 2 scripted targets, 2
settings per task): the main table's numbers, shared seed selection and originals, resume after a kill
between and within stages, a cached re-run with no LM call, and one stage's models in memory at a time."""

import json

import mlflow
import pytest
import yaml

from experiments import launch
from experiments.config_loader import load_config
from experiments.run_store import RunStore
from tests.bench_fakes import CONFLICTING, SWAPPED, write_data

TASKS = ["answer_swap", "context_enrich", "unanswerable", "inconsistent", "counterfactual"]


def bench_config(folder, *, cache=True, **options):
    nq, arc = write_data(folder)
    lm = {"temperature": 0.0, "max_tokens": 64, "seed": 0, "cache": cache}
    raw = {
        "name": "bench-test",
        "task": "bench",
        "data": {"source": nq, "limit": 3, "max_evidence_words": 300},
        "models": {
            "pivot": {"name": "qwen2.5-1.5b", **lm},
            "judge": {"name": "qwen2.5-1.5b", **lm},
            "targets": [{"name": "qwen2.5-0.5b", **lm}, {"name": "smollm2-135m", **lm}],
        },
        "validation": {"calibration_controls": 0, "judge_params": "reasoned"},
        "options": {
            "tasks": TASKS,
            "counterfactual_data": {"source": arc},
            # The pivot proposes the swapped name: the fakes script its proposal.
            "generators": {
                "context_enrich": {"seeds": "open_correct_closed_wrong", "lm_merge": False},
                "answer_swap": {"distance": "proposed"},
            },
            "settings": {
                "answer_swap": ["open_book", "opinion"],
                "context_enrich": ["open_book", "opinion"],
                "unanswerable": ["open_book", "task_instruction"],
                "inconsistent": ["open_book", "task_instruction"],
                "counterfactual": ["closed_book", "open_book"],
            },
            "sampled": {t: [] for t in TASKS},
            **options,
        },
    }
    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_config(path)


def test_bench_end_to_end_then_rerun_and_fresh_run(world, isolated):
    config = bench_config(isolated)
    result = launch.run_experiment(config, progress=False)
    tables = result.task.tables
    main = tables["main"]

    def cell(target, task):
        row = main[target][task]
        return row["original"], row["perturbed"], row["drop"], row["n"]

    # every seed / question made an accepted case of every task
    info = {
        row["task"]: row
        for row in json.loads((RunStore(result.run_id).dir / "report" / "bench_tables.json").read_text())["tasks"]
    }
    assert {t: info[t]["evaluated"] for t in TASKS} == {
        "answer_swap": 3,
        "context_enrich": 6,
        "unanswerable": 3,
        "inconsistent": 3,
        "counterfactual": 3,
    }
    assert info["answer_swap"]["validity"] == "judge accepted 3/3 (100%)"
    # context enriching is left to the string checks, as nq_context_enrich.yaml leaves it: no verdict, and
    # its stage reads as an unjudged run to `reeval review` / `validity`
    enrich = RunStore(f"{result.run_id}/generate.context_enrich.qwen2.5-1.5b")
    assert enrich.records() and not any(r.get("judge") for r in enrich.records())
    assert enrich.experiment_config().models.judge is None
    assert info["context_enrich"]["validity"] == "string checks only: 6 accepted, no judge"
    assert all(r.get("judge") for r in RunStore(f"{result.run_id}/generate.unanswerable.qwen2.5-1.5b").records())
    # the follower reads the evidence: nothing drops, except counterfactual, where it knew nothing closed-book
    for task in TASKS[:4]:
        assert cell("qwen2.5-0.5b", task) == (1.0, 1.0, 0.0, 3), task
    assert cell("qwen2.5-0.5b", "counterfactual") == (0.0, 1.0, -1.0, 3)
    # the stubborn target answers what it knows: every perturbation that changes the answer breaks it
    for task in ("answer_swap", "unanswerable", "inconsistent", "counterfactual"):
        assert cell("smollm2-135m", task) == (1.0, 0.0, 1.0, 3)
    assert cell("smollm2-135m", "context_enrich") == (1.0, 1.0, 0.0, 3)  # enriching keeps the answer
    assert main["smollm2-135m"]["answer_swap"]["low"] == 1.0

    # the opinion prompt makes the stubborn target read the evidence: +1 on swapped cases
    effects = {(r["effect"], r["variant"], r["task"], r["target"]): r for r in tables["effects"]}
    opinion = effects[("opinion prompt", "perturbed", "answer_swap", "smollm2-135m")]
    assert (opinion["base_rate"], opinion["alt_rate"], opinion["change"], opinion["n"]) == (0.0, 1.0, 1.0, 3)
    assert effects[("task instruction", "perturbed", "unanswerable", "qwen2.5-0.5b")]["change"] == 0.0
    # transfer: one pivot row; qwen2.5-1.5b is not a target here, so no self-attack cell
    transfer = tables["transfer"]["answer_swap"]
    assert transfer["rows"] == ["qwen2.5-1.5b"] and transfer["cells"]["qwen2.5-1.5b"]["smollm2-135m"]["value"] == 1.0
    # what a cell is made of: the follower says "unknown" to every unanswerable case
    assert tables["answers"]["unanswerable|qwen2.5-0.5b|perturbed"]["top"] == [("unknown", 1.0)]
    ranks = {(r["task"], r["target"]): r for r in tables["ranks"]}
    assert ranks[("answer_swap", "smollm2-135m")]["change"] == 0.5  # tied for first (1.5), then last (2)

    # seed selection once per seed: 3 seeds x 2 calls, for four generators
    pivot = world["qwen2.5-1.5b"]
    assert pivot.seed_selection_calls() == 6
    assert result.metrics["seed_selection.calls"] == 6 and result.metrics["seed_selection.calls_per_seed"] == 2.0
    assert result.metrics["seed_selection.calls_saved_by_sharing"] == 18
    # identical target calls once: every prompt a target saw is distinct, and originals were shared
    for name in ("qwen2.5-0.5b", "smollm2-135m"):
        prompts = [c["prompt"] for c in world[name].calls]
        assert len(prompts) == len(set(prompts))
    asks = json.loads((RunStore(result.run_id).dir / "report" / "bench_tables.json").read_text())["sharing"]["asks"]
    # per target, original uses: 2 settings x (3 swapped + 6 enriched copies + 3 + 3 + 3 counterfactual) = 36;
    # original asks: open-book on 3 seeds (shared by the 4 NQ tasks), opinion on 3 (swap, enrich), task
    # instruction on 3 (unanswerable, inconsistent), closed-book on 3 questions (both counterfactual settings)
    assert asks["original_uses"] == 2 * 36 and asks["original_asks"] == 2 * 12
    assert result.metrics["target_asks"] == len(world["qwen2.5-0.5b"].calls) + len(world["smollm2-135m"].calls)
    assert asks["saved"] == asks["uses"] - asks["asks"] > 0

    # a stage is a run of its own for `reeval review`/`validity`: its id finds its nested MLflow run
    from experiments.tracking import find_runs

    stage_id = f"{result.run_id}/generate.answer_swap.qwen2.5-1.5b"
    assert RunStore(stage_id).records() and find_runs(stage_id)
    assert find_runs(stage_id)[0].data.tags["reeval.stage"] == "generate.answer_swap.qwen2.5-1.5b"

    # the report: markdown printed by the CLI, HTML, the detailed evaluation report, all in MLflow
    report = RunStore(result.run_id).dir / "report"
    assert "| smollm2-135m | 1.00 → 0.00 · drop +1.00 [+1.00, +1.00] · n=3" in result.task.markdown
    assert "| unanswerable | smollm2-135m | +1.00 [+1.00, +1.00] · n=3 | drops |" in result.task.markdown
    assert "| context enrich | smollm2-135m | +0.00 [+0.00, +0.00] · n=3 | does not drop |" in result.task.markdown
    html = (report / "bench.html").read_text()
    assert "Main table" in html and "&lt;" not in result.task.markdown
    assert (report / "details" / "report.html").exists()
    artifacts = {a.path for a in mlflow.artifacts.list_artifacts(run_id=result.mlflow_run_id, artifact_path="report")}
    assert {"report/bench.md", "report/bench.html", "report/bench_tables.json", "report/scores.jsonl"} <= artifacts
    # every evaluation record with its scores, the evidence left to the stages
    scores = [json.loads(line) for line in (report / "scores.jsonl").read_text().splitlines()]
    assert len(scores) == len(result.records) and not any("context" in r for r in scores)
    stubborn = [
        r for r in scores if (r["task"], r["target"], r["variant"]) == ("unanswerable", "smollm2-135m", "perturbed")
    ]
    assert stubborn and all(r["task_correct"] is False and r["keyword_strict"] is False for r in stubborn)
    children = mlflow.search_runs(
        filter_string=f"tags.mlflow.parentRunId = '{result.mlflow_run_id}'",
        search_all_experiments=True,
        output_format="list",
    )
    stages = {c.data.tags["reeval.stage"] for c in children}
    assert stages == {
        "seeds.qwen2.5-1.5b",
        *(f"generate.{t}.qwen2.5-1.5b" for t in TASKS),
        "evaluate.qwen2.5-0.5b",
        "evaluate.smollm2-135m",
    }
    parent = mlflow.get_run(result.mlflow_run_id)
    assert parent.data.metrics["main.answer_swap.smollm2-135m.drop"] == 1.0

    # a generation stage's store is an ordinary run: the swapped answer and the inconsistent pair are there
    swap = RunStore(f"{result.run_id}/generate.answer_swap.qwen2.5-1.5b").records()
    assert {r["answers"][0] for r in swap if r["status"] == "accepted"} == {SWAPPED}
    pair = RunStore(f"{result.run_id}/generate.inconsistent.qwen2.5-1.5b").records()
    assert {r["answers"][0] for r in pair if r["status"] == "accepted"} == {"conflict", CONFLICTING}

    # the same config again reuses every stage; a fresh run (new id) runs every stage from the call cache
    first, calls = result, {name: len(model.calls) for name, model in world.items()}

    again = launch.run_experiment(config, progress=False)
    assert again.run_id == first.run_id and again.metrics["stages_run"] == 0
    assert again.metrics["lm.calls"] == 0 and again.new_cases == 0
    assert again.task.tables["main"] == first.task.tables["main"]

    fresh = launch.run_experiment(config, fresh=True, progress=False)  # a new run: every stage runs, from the cache
    assert fresh.run_id != first.run_id and fresh.metrics["stages_reused"] == 0
    assert fresh.metrics["lm.calls"] == 0
    assert {name: len(model.calls) for name, model in world.items()} == calls
    assert fresh.task.tables["main"] == first.task.tables["main"]


def test_kill_between_and_within_stages_resumes_without_redoing(world, isolated):
    config = bench_config(isolated, cache=False)  # no call cache: anything redone would call the models again
    follower_model = world["qwen2.5-0.5b"]
    follower_model.interrupt_after = 2  # killed while asking the first target, after two answers
    with pytest.raises(KeyboardInterrupt):
        launch.run_experiment(config, progress=False)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    ledger = json.loads((store.dir / "stages.json").read_text())
    assert set(ledger) == {"seeds.qwen2.5-1.5b", *(f"generate.{t}.qwen2.5-1.5b" for t in TASKS)}
    pivot_calls = len(world["qwen2.5-1.5b"].calls)
    answered = len(RunStore(f"{store.run_id}/evaluate.qwen2.5-0.5b").records())
    assert answered == 2

    follower_model.interrupt_after = None
    result = launch.run_experiment(config, progress=False)
    assert len(world["qwen2.5-1.5b"].calls) == pivot_calls  # no seed selection, generation or judging again
    assert result.metrics["stages_reused"] == 6 and result.metrics["stages_run"] == 2
    asks = [r for r in RunStore(f"{store.run_id}/evaluate.qwen2.5-0.5b").records()]
    assert len(follower_model.calls) == len(asks) == len({r["id"] for r in asks})  # the two answers were kept
    assert result.task.tables["main"]["smollm2-135m"]["answer_swap"]["drop"] == 1.0
    cost = {row["stage"]: row for row in json.loads((store.dir / "report" / "bench_tables.json").read_text())["stages"]}
    assert cost["seeds.qwen2.5-1.5b"]["ran"] is False and cost["seeds.qwen2.5-1.5b"]["calls"] == 6
    assert cost["evaluate.qwen2.5-0.5b"]["ran"] is True


def test_a_bench_resumed_on_an_edited_data_file_is_refused_and_keeps_what_it_made(world, isolated):
    """A stage's own inputs name its seeds by id: without the run's data check, a stage left unfinished would
    take the edited rows beside the old ones."""
    from experiments.run_store import RunStoreError

    config = bench_config(isolated, cache=False)
    world["qwen2.5-0.5b"].interrupt_after = 2
    with pytest.raises(KeyboardInterrupt):
        launch.run_experiment(config, progress=False)
    store = RunStore(RunStore.new_id(config.name, config.digest()))
    inputs = json.loads((store.dir / "inputs.json").read_text())
    assert set(inputs) == {"config", "config_sha256", "data", "options.counterfactual_data"}
    asked = RunStore(f"{store.run_id}/evaluate.qwen2.5-0.5b").cases_path.read_bytes()
    world["qwen2.5-0.5b"].interrupt_after = None
    for name in ("seeds.jsonl", "questions.jsonl"):
        path = isolated / name
        kept = path.read_text()
        path.write_text(kept.replace("who", "which person", 1).replace("Which", "What", 1))
        with pytest.raises(RunStoreError) as refused:
            launch.run_experiment(config, progress=False)
        message = str(refused.value)
        assert message.startswith(f"{store.dir / 'inputs.json'}: the data changed since run {store.run_id!r} started")
        assert f"{path} has sha256 " in message and "--fresh" in message
        assert RunStore(f"{store.run_id}/evaluate.qwen2.5-0.5b").cases_path.read_bytes() == asked
        path.write_text(kept)
    result = launch.run_experiment(config, progress=False)  # put back as it was: the bench resumes
    assert result.metrics["stages_reused"] == 6


class Tracked:
    """A fake model's context that writes its loads' calls and its close into the bench's event list."""

    def __init__(self, model, name: str, events: list):
        self.model, self.name, self.events = model, name, events

    def create_chat_completion(self, messages, **kwargs):
        self.events.append(("call", self.name))
        return self.model.create_chat_completion(messages, **kwargs)

    def close(self):
        self.events.append(("close", self.name))


def test_a_model_is_released_when_its_stages_end_and_loaded_again_when_needed(world, isolated, monkeypatch):
    """Peak memory is one stage's models: qwen2.5-1.5b (pivot and judge) is released when the generation
    stages end, qwen2.5-0.5b when its evaluation ends, and qwen2.5-1.5b, a target too, is loaded again for
    its evaluation; every model is released before the report."""
    events: list[tuple[str, str]] = []

    def new_llama(name, n_ctx, n_threads, cache):
        events.append(("load", name))
        return Tracked(world[name], name, events)

    monkeypatch.setattr("experiments.lm.engine.new_llama", new_llama)
    config = bench_config(isolated, cache=False, tasks=["answer_swap", "unanswerable"])
    follower = config.models.targets[0]
    targets = [follower, follower.model_copy(update={"name": "qwen2.5-1.5b"})]
    config = config.model_copy(update={"models": config.models.model_copy(update={"targets": targets})})
    result = launch.run_experiment(config, progress=False)

    loaded, peak = set(), 0
    for event, name in events:
        if event == "load":
            loaded.add(name)
        elif event == "close":
            loaded.discard(name)
        else:
            assert name in loaded
        peak = max(peak, len(loaded))
    assert peak == 1 and not loaded
    assert [e for e in events if e[0] != "call"] == [
        ("load", "qwen2.5-1.5b"),  # seeds and generation
        ("close", "qwen2.5-1.5b"),
        ("load", "qwen2.5-0.5b"),  # evaluate.qwen2.5-0.5b
        ("close", "qwen2.5-0.5b"),
        ("load", "qwen2.5-1.5b"),  # evaluate.qwen2.5-1.5b: loaded again
        ("close", "qwen2.5-1.5b"),  # before the report
    ]
    main = result.task.tables["main"]
    assert main["qwen2.5-1.5b"]["answer_swap"]["n"] == 3 and main["qwen2.5-0.5b"]["answer_swap"]["drop"] == 0.0
