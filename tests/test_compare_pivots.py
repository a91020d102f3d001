"""Pivot comparison: the generator's own options, the code-made row beside the pivots, the paired figures between
rows, the readers' share per pivot, one review sheet per pivot, and a provider pivot over HTTP."""

import json

import pytest
import yaml
from typer.testing import CliRunner

from experiments import runner
from experiments.config import ConfigError, LMConfig
from experiments.config_loader import load_config
from experiments.lm.registry import ResolvedLM, build_lm
from experiments.review.sheet import ACCEPTED_ONLY_DIR
from experiments.review.verdict_log import VerdictLog
from experiments.run_store import RunStore
from experiments.tasks.compare_pivots import CompareOptions, ComparePivotsTask, default_setting
from experiments.tasks.pivot_generators import RulesPivot, rules_options
from metrics.paired import mcnemar_exact
from metrics.pivot_pairs import identical_shares, paired_on_shared, pairwise
from tests.fake_openai import USAGE, FakeOpenAI, replies_from
from tests.test_tasks_end_to_end import FORMAT_ANSWERS, scripted_lm

# --------------------------------------------------------------------------------------------
# The paired figures


def test_paired_on_shared_counts_only_units_both_know_and_tests_the_discordant_ones():
    # 10 shared units: A alone fooled the target on 1, B alone on 6, both on 2, neither on 1.
    a = {f"u{i}": v for i, v in enumerate([True, False, False, False, False, False, False, True, True, False])}
    b = {f"u{i}": v for i, v in enumerate([False, True, True, True, True, True, True, True, True, False])}
    a |= {"a-only-1": True, "a-only-2": False, "unknown": None}  # units B never made, and one A errored on
    b |= {"b-only": True, "unknown": True}
    out = paired_on_shared(a, b)
    assert out["n"] == 10 and (out["a_only"], out["b_only"]) == (1, 6)
    assert out["a_rate"] == pytest.approx(0.3) and out["b_rate"] == pytest.approx(0.8)
    assert out["diff"] == pytest.approx(0.5)
    # Exact two-sided McNemar on 1 vs 6 discordant pairs: 2 * P(X <= 1), X ~ Binomial(7, 1/2) = 2 * 8/128.
    assert out["p"] == pytest.approx(0.125)
    assert out["low"] <= 0.5 <= out["high"] and out["low"] > 0  # B's lead is clear of zero on these ten
    assert (out["a_alone"], out["b_alone"]) == (2, 2)  # "unknown" is B's alone: A errored on it


def test_the_exact_mcnemar_p_agrees_with_statsmodels():
    contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
    for b, c in ((1, 6), (0, 5), (3, 3), (2, 11), (0, 0)):
        table = [[4, b], [c, 7]]
        expected = contingency.mcnemar(table, exact=True).pvalue if b + c else 1.0
        assert mcnemar_exact(b, c) == pytest.approx(min(1.0, expected))


def test_pairwise_pairs_every_two_rows_in_order():
    rows = pairwise({"rules": {"s1": True}, "p1": {"s1": False}, "p2": {"s1": True, "s2": True}})
    assert [(r["a"], r["b"], r["n"]) for r in rows] == [("rules", "p1", 1), ("rules", "p2", 1), ("p1", "p2", 1)]
    assert [r["diff"] for r in rows] == [-1.0, 0.0, 1.0]


def test_identical_shares_name_the_row_that_made_the_same_case():
    cases = {
        "rules": {"s1": "A", "s2": "B", "s3": "C"},
        "p1": {"s1": "A", "s2": "X", "s3": "C"},
        "p2": {"s1": "A", "s2": "Y"},
    }
    out = identical_shares(cases, among={"rules": ["s1", "s2", "s3"], "p1": ["s2", "s3"], "p2": ["s1", "s2"]})
    assert out["rules"] == {"n": 3, "identical": 2, "share": pytest.approx(2 / 3), "with": {"p1": 2, "p2": 1}}
    assert out["p1"]["identical"] == 1 and out["p1"]["with"] == {"rules": 1}
    assert out["p2"]["share"] == 0.5


# --------------------------------------------------------------------------------------------
# Options


def test_the_generators_own_options_are_validated_and_named_in_the_error():
    with pytest.raises(ValueError, match="generator_options.distance"):
        CompareOptions(generator="answer_swap", generator_options={"distance": "galactic"})
    with pytest.raises(ValueError, match="generator_options.removal"):
        CompareOptions(generator="unanswerable", generator_options={"removal": "shred"})
    with pytest.raises(ValueError, match="generator with a pivot step"):
        CompareOptions(generator="evaluate")
    with pytest.raises(ValueError, match="context_enrich has no code-made setting"):
        CompareOptions(generator="context_enrich", rules=True)


def test_pivots_write_the_swaps_unless_told_and_the_rules_row_makes_them_in_code():
    options = CompareOptions(generator="answer_swap", generator_options={"distance": "proposed"}, rules=True)
    assert options.resolved() == {"writer": "pivot", "distance": "proposed"}
    assert rules_options("answer_swap", options.resolved()) == {"writer": "rules", "distance": "near", "seeds": "all"}
    mid = CompareOptions(generator="answer_swap", generator_options={"strength": 0.5, "writer": "rules"}).resolved()
    assert mid == {"writer": "rules", "strength": 0.5}
    assert rules_options("unanswerable", {"removal": "rewrite", "background": 2}) == {
        "removal": "drop",
        "background": 2,
        "seeds": "all",
    }
    # The generator's strength reads its ladder as in a single-task run: every row's program runs at it.
    pivots = [ResolvedLM("pivot", LMConfig(name=n), None, None) for n in ("qwen2.5-0.5b", "qwen2.5-1.5b")]
    task = ComparePivotsTask(
        {"pivots": pivots, "targets": []},
        CompareOptions(generator="answer_swap", generator_options={"strength": 0.5}, rules=True),
    )
    assert {name: row.program.distance for name, (_, row) in task.rows.items()} == {
        "qwen2.5-0.5b": "mid",
        "qwen2.5-1.5b": "mid",
        "rules": "mid",
    }
    assert {name: row.program.writer for name, (_, row) in task.rows.items()}["rules"] == "rules"
    # Every generator with a pivot step is comparable, and its targets answer where its cases can be resisted.
    for generator in ("answer_swap", "unanswerable", "context_enrich", "inconsistent", "counterfactual"):
        CompareOptions(generator=generator)
    assert [default_setting(g) for g in ("answer_swap", "unanswerable", "inconsistent", "counterfactual")] == [
        "open_book",
        "task_instruction",
        "task_instruction",
        "open_book",
    ]


# --------------------------------------------------------------------------------------------
# Runs with scripted models


def compare_config(tmp_path, options, pivots=("qwen2.5-0.5b", "qwen2.5-1.5b"), limit=4, extra_pivots=()):
    path = tmp_path / "compare.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "cmp",
                "task": "compare_pivots",
                "data": {"source": "nq", "limit": limit, "max_evidence_words": 300},
                "models": {
                    "pivots": [{"name": p} for p in pivots] + list(extra_pivots),
                    "judge": {"name": "qwen2.5-1.5b"},
                    "targets": [{"name": "smollm2-135m"}],
                },
                "validation": {"calibration_controls": 0},
                "options": options,
            }
        )
    )
    return load_config(path)


@pytest.fixture
def scripted(monkeypatch):
    """Every model a DummyLM; the second pivot proposes nothing, so it has code-made cases only."""

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        good, judge = scripted_lm(examples, "answer_swap"), scripted_lm(examples, "answer_swap")
        silent = scripted_lm(examples, "answer_swap")
        silent.answers = {**silent.answers, "`wrong_answer`.": {"answer_type": "t", "wrong_answer": ""}}
        silent.answers["`answers`"] = {"answers": []}
        pivots = []
        for config, lm in zip(run.config.models.pivots, (good, silent), strict=False):
            lm.model = f"dummy/{config.label}"
            pivots.append(ResolvedLM("pivot", config, lm, None))
        judge.model = "dummy/judge"
        target = scripted_lm(examples, "answer_swap")
        return {
            "pivots": pivots,
            "judge": ResolvedLM("judge", LMConfig(name="dummy/judge"), judge, None),
            "targets": [ResolvedLM("target", t, target, None) for t in run.config.models.targets],
        }

    monkeypatch.setattr(runner, "build_lms", build_lms)
    monkeypatch.setattr("programs.answer_swap.kind_problem", lambda *args: None)


def test_the_rules_row_runs_beside_the_pivots_with_its_settings_named(isolated, scripted):
    config = compare_config(
        isolated, {"generator": "answer_swap", "generator_options": {"distance": "near"}, "rules": True}
    )
    result = runner.run_experiment(config, progress=False)
    records = RunStore(result.run_id).records()
    by_row = {name: [r for r in records if r["pivot"] == name] for name in ("qwen2.5-0.5b", "qwen2.5-1.5b", "rules")}
    assert all(len(rows) == 4 for rows in by_row.values())  # one case slot per seed and row
    rules = by_row["rules"]
    # No pivot: nothing errored for want of an LM, no seed was selected by anyone, and it spent no tokens.
    assert not [r for r in rules if r["status"].startswith("error:")]
    assert not any("pivot_open_answer" in r for r in rules)
    assert sum(r.get("pivot_tokens", 0) for r in rules) == 0
    assert {r["case_key"] for r in rules} == {r["case_key"] for r in by_row["qwen2.5-0.5b"]}
    assert all(r["id"] == f"{r['case_key']}:rules" for r in rules)
    m = result.metrics
    assert m["pivot.rules.selected"] == 4 and m["pivot.rules.tokens"] == 0

    report = RunStore(result.run_id).dir / "report"
    payload = json.loads((report / "comparison.json").read_text())
    settings = payload["settings"]
    assert settings["options"] == {"writer": "pivot", "distance": "near"}
    assert settings["rules"] == {"writer": "rules", "distance": "near", "seeds": "all"}
    # In full, defaults included: what a reader needs to reproduce either row.
    assert settings["resolved"]["name_distance"] == "made_up" and settings["resolved"]["seeds"] == "open_correct"
    assert settings["rules_resolved"]["writer"] == "rules" and settings["rules_resolved"]["seeds"] == "all"
    assert settings["versions"] and all(v.startswith("answer_swap/") for v in settings["versions"])
    assert list(payload["pivots"]) == ["qwen2.5-0.5b", "qwen2.5-1.5b", "rules"]
    table = (report / "comparison.md").read_text()
    assert "Row `rules`" in table and '"writer": "rules"' in table and settings["versions"][0] in table
    assert "| rules | 4 |" in table
    assert (report / "validity_x_success.png").stat().st_size > 1000

    # Pairs: every two rows, success and flips on the one target, each its McNemar p from its own discordant pairs.
    pairs = payload["pairs"]
    assert {(p["a"], p["b"]) for p in pairs} == {
        ("qwen2.5-0.5b", "qwen2.5-1.5b"),
        ("qwen2.5-0.5b", "rules"),
        ("qwen2.5-1.5b", "rules"),
    }
    assert {p["measure"] for p in pairs} == {"success", "flip"}
    for p in pairs:
        assert p["p"] == pytest.approx(mcnemar_exact(p["a_only"], p["b_only"]))
    # The rules row and the pivots move a year or number the same way: those cases are identical word for word.
    same = payload["pivots"]["rules"]["identical"]
    assert same["n"] == m["pivot.rules.valid"]
    silent = payload["pivots"]["qwen2.5-1.5b"]["identical"]
    # The silent pivot's only valid cases are years and numbers code moved: the rules row made each of them too.
    assert silent["n"] >= 1 and silent["identical"] == silent["n"] == silent["with"]["rules"]
    assert m["pivot.qwen2.5-1.5b.identical_share"] == 1.0


def test_a_pivots_cost_leaves_out_what_the_judge_spent_on_the_same_model():
    import dspy

    from experiments.tasks.pivot_generators import MeteredJudge, pivot_cost

    def call(model, prompt, completion):  # what one live call leaves with DSPy's usage tracker
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        dspy.settings.usage_tracker.add_usage(model, usage)

    def case(judge):
        call("m", 8, 2)  # seed selection
        call("m", 15, 5)  # the proposal
        return judge(question="q")

    same = MeteredJudge(lambda **kwargs: call("m", 90, 10) or "verdict", "m")
    result, cost = pivot_cost("m", "m", lambda: case(same))
    assert result == "verdict"
    assert (cost["tokens"], cost["prompt_tokens"], cost["completion_tokens"]) == (30, 23, 7)
    other = MeteredJudge(lambda **kwargs: call("j", 90, 10) or "verdict", "j")
    _, cost = pivot_cost("m", "j", lambda: case(other))
    assert (cost["tokens"], cost["cached_calls"]) == (30, 0)
    # A judge called outside a pivot's block (calibration) spends on nobody's account.
    assert same(question="q") == "verdict"


def test_the_read_share_per_pivot_is_prediction_powered_from_the_pivot_sheets(isolated, scripted):
    config = compare_config(isolated, {"generator": "answer_swap", "rules": True})
    result = runner.run_experiment(config, progress=False)
    store = RunStore(result.run_id)
    records = store.records()

    out = isolated / "sheets" / "read.md"
    cli = CliRunner().invoke(
        __import__("experiments.cli", fromlist=["app"]).app, ["review", result.run_id, "--sheet", str(out)]
    )
    assert cli.exit_code == 0, cli.output
    accepted = {
        row: [r["id"] for r in records if r["pivot"] == row and r["status"] == "accepted"]
        for row in ("qwen2.5-0.5b", "qwen2.5-1.5b", "rules")
    }
    for row, ids in accepted.items():
        sheet = out.with_name(f"read.{row}.md")
        if not ids:
            assert not sheet.exists()
            continue
        key = json.loads(out.with_name(f"read.{row}.key.json").read_text())
        assert key["draw"] == "accepted-only"
        assert sorted(i for group in key["cases"].values() for i in group) == sorted(ids)  # that row's only
        assert row not in sheet.read_text()

    # A reader reads the first pivot's accepted cases: all but one valid.
    ids = accepted["qwen2.5-0.5b"]
    assert len(ids) >= 2
    log = VerdictLog(store.dir / "review" / ACCEPTED_ONLY_DIR, "reader-a")
    for i, case_id in enumerate(ids):
        log.append(case_id, "invalid" if i == 0 else "valid", "")
    task = result.task
    per_row, _ = task.figures(records, store.dir)
    read = per_row["qwen2.5-0.5b"]["read"]
    assert (read["read"], read["valid"], read["accepted"]) == (len(ids), len(ids) - 1, len(ids))
    # The judge accepted every case it was shown, so its prediction is constant: PPI is the read share itself.
    assert read["estimate"] == pytest.approx((len(ids) - 1) / len(ids))
    assert read["low"] < read["estimate"] < read["high"] <= 1.0
    assert per_row["rules"]["read"] is None
    # The same config run again has no case left to do and writes the report again, the reading in it.
    again = runner.run_experiment(config, progress=False)
    assert again.run_id == result.run_id
    assert f"({len(ids) - 1}/{len(ids)} read)" in (store.dir / "report" / "comparison.md").read_text()
    assert again.metrics["pivot.qwen2.5-0.5b.read_valid.estimate"] == pytest.approx(read["estimate"])


def test_an_unanswerable_comparison_runs_its_own_dials_and_targets_answer_with_the_task_instruction(
    isolated, monkeypatch
):
    examples_seen = {}

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        examples_seen["n"] = len(examples)
        lm = scripted_lm(examples, "unanswerable")
        return {
            "pivots": [ResolvedLM("pivot", c, lm, None) for c in run.config.models.pivots],
            "judge": ResolvedLM("judge", LMConfig(name="dummy/judge"), lm, None),
            "targets": [ResolvedLM("target", t, lm, None) for t in run.config.models.targets],
        }

    monkeypatch.setattr(runner, "build_lms", build_lms)
    config = compare_config(
        isolated, {"generator": "unanswerable", "generator_options": {"removal": "window"}, "rules": True}, limit=3
    )
    result = runner.run_experiment(config, progress=False)
    records = RunStore(result.run_id).records()
    assert {r["task"] for r in records} == {"unanswerable"}
    assert {r["case_key"].split(":")[-1] for r in records} == {"unanswerable"}
    payload = json.loads((RunStore(result.run_id).dir / "report" / "comparison.json").read_text())
    assert payload["settings"]["setting"] == "task_instruction"
    assert payload["settings"]["options"] == {"removal": "window"}
    assert payload["settings"]["rules"] == {"removal": "drop", "seeds": "all"}
    windowed = [r for r in records if r["pivot"] != "rules" and r.get("edits")]
    assert windowed and all(e.get("why") in ("window", "lure") for r in windowed for e in r["edits"])


def test_a_pivot_the_rules_row_would_share_a_name_with_is_refused():
    pivot = ResolvedLM("pivot", LMConfig(name="qwen2.5-0.5b", label="rules"), None, None)
    with pytest.raises(ConfigError, match="name one row twice"):
        ComparePivotsTask({"pivots": [pivot], "targets": []}, CompareOptions(generator="answer_swap", rules=True))
    assert RulesPivot().config.label == "rules" and RulesPivot().lm is None


# --------------------------------------------------------------------------------------------
# A provider pivot beside a local one


def test_a_provider_pivot_is_compared_unchanged_against_a_fake_openai_server(provider_env, monkeypatch):
    monkeypatch.setattr("programs.answer_swap.kind_problem", lambda *args: None)
    # A model LiteLLM's cost map prices, served by the fake server: the report prices the pivot's tokens.
    provider = {"name": "openai/gpt-4o-mini", "temperature": 0.0, "max_tokens": 64}
    config = None

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        local = scripted_lm(examples, "answer_swap")
        local.model = "dummy/local"
        pivots = [
            build_lm(c, "pivot") if c.name.startswith("openai/") else ResolvedLM("pivot", c, local, None)
            for c in run.config.models.pivots
        ]
        judge = scripted_lm(examples, "answer_swap")
        judge.model = "dummy/judge"
        return {
            "pivots": pivots,
            "judge": ResolvedLM("judge", LMConfig(name="dummy/judge"), judge, None),
            "targets": [ResolvedLM("target", t, local, None) for t in run.config.models.targets],
        }

    monkeypatch.setattr(runner, "build_lms", build_lms)
    config_dir = provider_env
    examples = None
    with FakeOpenAI(reply=lambda prompt: "{}") as server:
        config = compare_config(
            config_dir,
            {"generator": "answer_swap", "rules": True},
            pivots=("qwen2.5-0.5b",),
            extra_pivots=[{**provider, "api_base": server.api_base}],
            limit=3,
        )
        examples = runner.load_data(config).examples
        answers = dict(FORMAT_ANSWERS)
        answers.update({e.context[:200]: {"answer": e.answers[0]} for e in examples})
        answers["`answer`."] = {"answer": "no idea"}
        server.reply = replies_from(answers)
        result = runner.run_experiment(config, progress=False)
        requests = len(server.seen)
    label = config.models.pivots[1].label
    assert label == "openai/gpt-4o-mini"  # named as the config names it: the only entry of that name
    records = RunStore(result.run_id).records()
    mine = [r for r in records if r["pivot"] == label]
    assert len(mine) == 3 and not [r for r in mine if r["status"].startswith("error:")]
    assert requests >= 2 * 3  # closed- and open-book answers per seed at least, all over HTTP
    assert any(r["status"] == "accepted" for r in mine) and server.requests_with("`wrong_answer`")
    # Every pivot call went to the server and its usage block is what the pivot's cost counts, judge left out.
    assert sum(r.get("pivot_tokens", 0) for r in mine) == USAGE["total_tokens"] * requests
    m = result.metrics
    assert m[f"pivot.{label}.tokens"] == USAGE["total_tokens"] * requests
    assert sum(r.get("pivot_prompt_tokens", 0) for r in mine) == USAGE["prompt_tokens"] * requests
    import litellm

    per_call = sum(litellm.cost_per_token(model=label, prompt_tokens=11, completion_tokens=5))
    assert m[f"pivot.{label}.dollars"] == pytest.approx(per_call * requests)
    valid = m[f"pivot.{label}.valid"]
    table = (RunStore(result.run_id).dir / "report" / "comparison.md").read_text()
    assert f"{per_call * requests / valid:.6f}" in table
    rows = {}  # the main table: each row's first line
    for line in table.splitlines():
        if line.startswith("| "):
            rows.setdefault(line.split(" | ")[0].strip("| "), line)
    # A local pivot runs here: no dollars, as the rules row.
    assert rows["qwen2.5-0.5b"].endswith(("| 0.000000 |", "| — |")) and rows["rules"].endswith("| 0.000000 |")
    # The Cost section: the run's own cost metrics per model and in total, with the process's CPU seconds.
    cost = table.split("## Cost", 1)[1]
    spent = m[f"lm.pivot/{label}.cost_usd"]
    assert spent == pytest.approx(per_call * requests) and m["cost_usd"] == pytest.approx(spent)
    assert f"| pivot/{label} | {requests} | 0 | {USAGE['prompt_tokens'] * requests} |" in cost
    assert cost.count(f"| ${spent:.4f} |") == 2  # the provider's row and the total
    total = next(line for line in cost.splitlines() if line.startswith("| total ("))
    assert "CPU seconds)" in total and float(total.split("(")[1].split()[0]) > 0
    spend = json.loads((RunStore(result.run_id).dir / "report" / "comparison.json").read_text())["spend"]
    assert spend["dollars"] == pytest.approx(m["cost_usd"]) and spend["cpu_seconds"] > 0
    assert {
        p for p in json.loads((RunStore(result.run_id).dir / "report" / "comparison.json").read_text())["pivots"]
    } == {
        "qwen2.5-0.5b",
        label,
        "rules",
    }


@pytest.mark.parametrize("server", [{"max_requests": 0}, {"report_usage": False}], ids=["refused", "uncounted"])
def test_a_pivot_whose_calls_left_no_token_count_has_none_not_zero(provider_env, monkeypatch, server):
    """Refused: every request to the pivot's server fails, so nothing replied. Uncounted: it replies with no usage
    block. Either way the pivot's tokens are unknown: absent from its records and metrics, "—" in the table."""
    monkeypatch.setattr("programs.answer_swap.kind_problem", lambda *args: None)
    provider = {"name": "openai/gpt-4o-mini", "temperature": 0.0, "max_tokens": 64, "num_retries": 0}

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        local = scripted_lm(examples, "answer_swap")
        local.model = "dummy/local"
        return {
            "pivots": [build_lm(c, "pivot") for c in run.config.models.pivots],
            "judge": ResolvedLM("judge", LMConfig(name="dummy/judge"), local, None),
            "targets": [ResolvedLM("target", t, local, None) for t in run.config.models.targets],
        }

    monkeypatch.setattr(runner, "build_lms", build_lms)
    with FakeOpenAI(reply=lambda prompt: "{}", **server) as fake:
        config = compare_config(
            provider_env,
            {"generator": "answer_swap", "rules": True},
            pivots=(),
            extra_pivots=[{**provider, "api_base": fake.api_base}],
            limit=2,
        )
        config = config.model_copy(update={"run": config.run.model_copy(update={"error_budget": 1.0})})
        answers = dict(FORMAT_ANSWERS)
        answers.update({e.context[:200]: {"answer": e.answers[0]} for e in runner.load_data(config).examples})
        fake.reply = replies_from(answers)
        result = runner.run_experiment(config, progress=False)
        assert fake.seen  # the pivot was asked
    label = config.models.pivots[0].label
    mine = [r for r in RunStore(result.run_id).records() if r["pivot"] == label]
    assert mine and not [r for r in mine if "pivot_tokens" in r or "pivot_prompt_tokens" in r]
    answered = [r for r in mine if not r["status"].startswith("error:")]
    assert bool(answered) == ("report_usage" in server)  # the uncounted pivot made cases: its seconds are kept
    assert all("pivot_seconds" in r for r in answered)
    m = result.metrics
    assert f"pivot.{label}.tokens" not in m and f"pivot.{label}.tokens_per_valid" not in m
    assert f"pivot.{label}.dollars" not in m  # no count, no bill: unknown, not $0
    assert m["pivot.rules.tokens"] == 0  # no LM at all: nothing spent, a true zero
    payload = json.loads((RunStore(result.run_id).dir / "report" / "comparison.json").read_text())
    assert payload["pivots"][label]["tokens"] is None and payload["pivots"][label]["tokens_per_valid"] is None
    table = (RunStore(result.run_id).dir / "report" / "comparison.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith(f"| {label} |"))
    assert row.endswith("| — |") and "no price" not in row
    assert row.split(" | ")[-3] == "—"  # tokens / valid


@pytest.mark.parametrize(
    "generator, source, made",
    [
        ("context_enrich", "nq", {"enrich-question", "enrich-evidence", "enrich"}),
        ("inconsistent", "nq", {"inconsistent"}),
        ("counterfactual", "arc_challenge", {"counterfactual"}),
    ],
)
def test_every_generator_with_a_pivot_step_is_compared_on_its_own_cases(isolated, monkeypatch, generator, source, made):
    from tests.test_context_enrich import FakeRetriever

    def build_lms(run):
        examples = runner.load_data(run.config).examples
        lm = scripted_lm(examples, generator)
        return {
            "pivots": [ResolvedLM("pivot", c, lm, None) for c in run.config.models.pivots],
            "judge": ResolvedLM("judge", LMConfig(name="dummy/judge"), lm, None),
            "targets": [ResolvedLM("target", t, lm, None) for t in run.config.models.targets],
        }

    monkeypatch.setattr(runner, "build_lms", build_lms)
    monkeypatch.setattr("experiments.corpus.default_retriever", lambda embedder, **options: FakeRetriever())
    config = compare_config(isolated, {"generator": generator}, limit=2)
    config = config.model_copy(update={"data": config.data.model_copy(update={"source": source})})
    result = runner.run_experiment(config, progress=False)
    records = RunStore(result.run_id).records()
    assert {r["task"] for r in records} == {generator}
    assert not [r for r in records if r["status"].startswith("error:")]
    payload = json.loads((RunStore(result.run_id).dir / "report" / "comparison.json").read_text())
    attacks = {r["case_key"].split(":")[-1] for r in records} - {"closed-book", "inconsistent-modified"}
    assert attacks <= made
    # The helper records a generator writes beside its cases are no attack: no target is asked them.
    assert not [
        r for r in records if r["case_key"].endswith(("closed-book", "inconsistent-modified")) and "targets" in r
    ]
    if generator != "counterfactual":  # the scripted passage names every option: the checks refuse it
        assert all(row["valid"] >= 1 for row in payload["pivots"].values())
    for name, row in payload["pivots"].items():
        attack_records = [r for r in records if r["pivot"] == name and r["case_key"].split(":")[-1] in made]
        assert row["valid"] == sum(r["status"] == "accepted" for r in attack_records)
        assert row["summary"]["targets"]["smollm2-135m"]["success"]["n"] == sum(
            r["status"] == "accepted" and r["targets"]["smollm2-135m"]["perturbed_correct"] is not None
            for r in attack_records
        )


def test_a_multiple_choice_case_is_scored_by_option_against_its_closed_book_original():
    import dspy

    from experiments.target_panel import TargetPanel

    case = {
        "task": "counterfactual",
        "question": "Which conducts heat best?\nA. iron\nB. wood\nC. glass\nD. water",
        "context": "Glass, as every smith knows, carries heat faster than any metal.",
        "answers": ["glass"],
        "answer_label": "C",
        "options": ["iron", "wood", "glass", "water"],
        "choice_labels": ["A", "B", "C", "D"],
        "original_answer_label": "A",
    }
    # The target keeps to what it knows (iron, option A) with the passage and without it.
    answers = {"Glass, as every smith": {"answer": "A"}, "Which conducts": {"answer": "A. iron"}}
    lm = dspy.utils.DummyLM(answers, adapter=dspy.JSONAdapter())
    target = ResolvedLM("target", LMConfig(name="smollm2-135m"), lm, None)
    asked = TargetPanel([target], "open_book").ask(case)["smollm2-135m"]
    assert asked["perturbed"] == "A" and asked["perturbed_correct"] is False  # the attack failed to move it
    assert asked["original_correct"] is True  # closed-book, its original option


def test_the_rows_share_one_retrieval_pool(monkeypatch):
    from tests.test_context_enrich import FakeRetriever

    made = []

    def default_retriever(*args, **kwargs):
        made.append((args, kwargs))
        return FakeRetriever()

    monkeypatch.setattr("experiments.corpus.default_retriever", default_retriever)
    pivots = [ResolvedLM("pivot", LMConfig(name=n), None, None) for n in ("qwen2.5-0.5b", "qwen2.5-1.5b")]
    task = ComparePivotsTask(
        {"pivots": pivots, "targets": []},
        CompareOptions(generator="unanswerable", generator_options={"background": 2}, rules=True),
    )
    retrievers = {id(row.program.retriever) for _, row in task.rows.values()}
    assert len(made) == 1 and len(retrievers) == 1 and len(task.rows) == 3
    enrich = ComparePivotsTask({"pivots": pivots, "targets": []}, CompareOptions(generator="context_enrich"))
    assert len(made) == 2 and len({id(row.retriever) for _, row in enrich.rows.values()}) == 1
    import experiments.corpus

    assert experiments.corpus.default_retriever is default_retriever  # put back once the rows are built
