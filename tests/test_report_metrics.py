"""Every figure of an evaluation report is also an MLflow metric of the run, under the documented name."""

import json

import dspy
import mlflow
import pytest
import yaml
from mlflow.utils.validation import _validate_metric_name, _validate_param_name

from experiments import runner
from experiments.config import LMConfig
from experiments.config_loader import load_config
from experiments.lm.registry import ResolvedLM
from experiments.report_metrics import is_detail
from experiments.run_store import RunStore
from experiments.tracking import metric_name

FAITHFUL, FAITHFUL_IN_NAMES = "dummy/faith@ful", "dummy/faith_ful"  # '@' is not allowed in a metric name
STUBBORN = "dummy/stubborn"


def case(i, generator):
    return {
        "id": f"s{i}:swap",
        "seed_id": f"s{i}",
        "task": "answer_swap",
        "pivot": generator,
        "status": "accepted",
        "source": "nq" if i % 2 else "squad",
        "question": f"who built tower {i}",
        "original_context": f"Tower {i} was built by Alice Smith in town {i}, long ago.",
        "context": f"Tower {i} was built by Bob Jones in town {i}, long ago.",
        "original_answers": ["Alice Smith"],
        "answers": ["Bob Jones"],
    }


def lm(name, role, replies):
    return ResolvedLM(role, LMConfig(name=name), dspy.utils.DummyLM(replies, adapter=dspy.JSONAdapter()), None)


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory):
    """One evaluation run (its own run store and sqlite MLflow store) shared by this module's tests."""
    isolated = tmp_path_factory.mktemp("report-metrics")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("REEVAL_RUNS_DIR", str(isolated / "runs"))
        monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{isolated / 'mlflow.db'}")
        monkeypatch.setenv("REEVAL_CACHE_DIR", str(isolated / "cache"))
        yield _evaluate(isolated, monkeypatch)


def _evaluate(isolated, monkeypatch):
    store = RunStore("gen-run")
    store.write_config({"name": "gen"})
    for i in range(6):  # two generators, one of which is also a target: a self-attack cell
        store.append(case(i, FAITHFUL if i < 3 else "qwen2.5-1.5b"))
    store.close()
    faithful = lm(
        FAITHFUL,
        "target",
        {
            "Bob Jones in town": {"answer": "Bob Jones"},
            "Alice Smith in town": {"answer": "Alice Smith"},
            "who built": {"answer": "no idea"},
        },
    )
    # stubborn knows the original answer; tower 5 it cannot answer at all (an error:<kind> record)
    stubborn = lm(STUBBORN, "target", {f"who built tower {i}": {"answer": "Alice Smith"} for i in range(5)})
    judge = lm(
        "dummy/judge", "judge", {"no idea": {"verdict": "not_entailment"}, "who built": {"verdict": "entailment"}}
    )
    monkeypatch.setattr(runner, "build_lms", lambda run: {"targets": [faithful, stubborn], "judge": judge})
    path = isolated / "eval.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "eval-metrics",
                "task": "evaluate",
                "data": {"source": "run:gen-run"},
                "models": {"targets": [{"name": "qwen2.5-0.5b"}], "judge": {"name": "qwen2.5-0.5b"}},
                "validation": {"calibration_controls": 0},
                "run": {"error_budget": 1.0},
                "options": {"settings": ["closed_book", "open_book", "task_instruction"], "k_shots": 0, "nli": "judge"},
            }
        )
    )
    result = runner.run_experiment(load_config(path), progress=False)
    tables = json.loads((RunStore(result.run_id).dir / "report" / "report_tables.json").read_text())
    return result, tables


def name(*parts):
    return ".".join(str(p).replace(FAITHFUL, FAITHFUL_IN_NAMES) for p in parts)


def expected(tables) -> dict[str, float]:
    """The documented names of every number in the report's tables (None: shown as "—", not logged)."""
    out = {}

    def put(key, value):
        if value is not None:
            out[key] = value

    def rate(prefix, row, *keys):
        base = name(prefix, *(row[k] if row[k] is not None else "none" for k in keys))
        for suffix, field in (("", "rate"), (".lo", "low"), (".hi", "high"), (".n", "n"), (".errors", "errors")):
            put(base + suffix, row[field])
        return base

    for row in tables["accuracy"]:
        rate("acc", row, "target", "setting", "decoding", "variant")
    for metric, rows in tables["per_metric"].items():
        for row in rows:
            rate(metric, row, "task", "target", "setting", "decoding", "variant")
    for row in tables["by_source"]:
        rate("by_source", row, "source", "target", "setting", "decoding", "variant")
    for row in tables["by_position"]:
        rate("by_position", row, "answer_position", "target", "setting", "decoding", "variant")
    for row in tables["normalised"]:
        base = rate("norm_acc", row, "task", "target", "setting", "decoding")
        put(base + ".originals", row["originals"])
        put(base + ".originals_right", row["originals_right"])
    for row in tables["paired_drop"]:
        base = name("drop", row["task"], row["target"], row["setting"], row["decoding"])
        for suffix, field in (
            ("", "drop"),
            (".lo", "low"),
            (".hi", "high"),
            (".n", "n"),
            (".errors", "errors"),
            (".original", "original"),
            (".perturbed", "perturbed"),
        ):
            put(base + suffix, row[field])
    for row in tables["sycophancy"]:
        base = name("task_instruction", row["task"], row["target"], row["decoding"])
        for suffix, field in (
            ("", "change"),
            (".lo", "low"),
            (".hi", "high"),
            (".n", "n"),
            (".errors", "errors"),
            (".open_book", "open_book"),
            (".task_instruction", "task_instruction"),
        ):
            put(base + suffix, row[field])
    for row in tables["ranks"]:
        base = name("rank", row["target"], row["setting"], row["decoding"])
        put(base, row["change"])
        for field in ("original", "perturbed", "n_original", "n_perturbed", "rank_original", "rank_perturbed"):
            put(f"{base}.{field}", row[field])
    for row in tables["errors"]:
        base = name("errors", row["target"], row["setting"], row["decoding"])
        put(base, row["errors"])
        put(base + ".records", row["records"])
        for kind, count in row["kinds"].items():
            put(f"{base}.{kind}", count)
    for table in ("transfer", "transfer_drop"):
        matrix = tables[table]
        for generator, cells in matrix["cells"].items():
            for target, cell in cells.items():
                base = name(table, generator, target, matrix["setting"], matrix["decoding"])
                for suffix, field in (
                    ("", "value"),
                    (".lo", "low"),
                    (".hi", "high"),
                    (".n", "n"),
                    (".errors", "errors"),
                ):
                    put(base + suffix, cell[field])
    return out


def test_every_report_number_is_a_metric_of_the_run_with_the_same_value(evaluation):
    result, tables = evaluation
    logged = mlflow.get_run(result.mlflow_run_id).data.metrics
    want = expected(tables)
    # the run exercised every table: paired drops, every score, transfer with a self-attack, ranks, errors
    assert {"em", "f1", "correct", "entailment", "task_correct"} <= set(tables["per_metric"])
    assert tables["paired_drop"] and tables["sycophancy"] and tables["ranks"] and tables["normalised"]
    assert tables["transfer"]["diagonal"] == [FAITHFUL] and any(r["kinds"] for r in tables["errors"])
    missing = sorted(k for k in want if k not in logged)
    assert not missing, missing[:10]
    assert {k: logged[k] for k in want} == want
    assert len(want) > 300
    # names a user filters on: per target (sanitised), setting, decoding, variant
    assert logged[f"em.answer_swap.{FAITHFUL_IN_NAMES}.open_book.greedy.perturbed"] == 1.0
    assert logged[f"drop.answer_swap.{STUBBORN}.open_book.greedy"] == 1.0
    assert logged[f"drop.answer_swap.{STUBBORN}.open_book.greedy.lo"] == 1.0
    assert logged[f"entailment.answer_swap.{FAITHFUL_IN_NAMES}.closed_book.greedy.original"] == 0.0


def test_each_target_run_holds_its_own_figures(evaluation):
    result, _ = evaluation
    children = mlflow.search_runs(
        search_all_experiments=True,
        output_format="list",
        filter_string=f"tags.mlflow.parentRunId = '{result.mlflow_run_id}'",
    )
    by_name = {run.info.run_name: run.data.metrics for run in children}
    mine = by_name[f"target/{FAITHFUL}"]
    assert mine[f"drop.answer_swap.{FAITHFUL_IN_NAMES}.open_book.greedy"] == 0.0
    # the other target's figures only where this model made the cases it answered
    assert all(key.startswith(("transfer.", "transfer_drop.")) for key in mine if STUBBORN in key)


def test_the_console_shows_headlines_and_leaves_the_rest_to_mlflow(evaluation):
    result, _ = evaluation
    shown = result.task.summary_metrics(result.metrics)
    assert f"acc.{STUBBORN}.open_book.greedy.perturbed" in shown and "evaluations" in shown
    assert not any(is_detail(k) for k in shown) and len(shown) < len(result.metrics) / 10


def test_metric_names_keep_to_what_mlflow_accepts():
    assert metric_name("acc", "openai/gpt-4o@2024-08", "open_book") == "acc.openai/gpt-4o_2024-08.open_book"
    assert metric_name("hosted_vllm//x/", "ü") == "hosted_vllm/_/x/._"
    assert metric_name("ollama_chat/llama3:8b instruct") == "ollama_chat/llama3:8b instruct"
    long = metric_name("em", "m" * 400)
    assert len(long) == 250 and long != metric_name("em", "m" * 401)
    for parts in (("/abs", "x"), ("a/./b",), ("a/../b",), ("..",), ("x/",), ("tab\tnew\nline",), ("m" * 300,)):
        _validate_metric_name(metric_name(*parts))  # raises on a name MLflow refuses
        _validate_param_name(metric_name(*parts))
