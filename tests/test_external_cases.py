"""Benchmark files made elsewhere, evaluated as given: every row, answers unchanged, paired when the
rows carry their original context (ReEval- and FaithEval-shaped fixtures, scripted targets)."""

import json
from pathlib import Path

import dspy
import mlflow
import pytest
import yaml

from experiments import runner
from experiments.config import ExperimentConfig, LMConfig
from experiments.config_loader import load_config
from experiments.data.errors import DataError
from experiments.external_cases import load_external_cases
from experiments.lm.registry import ResolvedLM
from experiments.run_store import RunStore

FIXTURES = Path(__file__).parent / "fixtures"
PUBLISHED = FIXTURES / "reeval_answer_swap_published.jsonl"
UNANSWERABLE = FIXTURES / "faitheval_unanswerable_style.jsonl"
INCONSISTENT = FIXTURES / "faitheval_inconsistent_style.jsonl"
COUNTERFACTUAL = FIXTURES / "faitheval_counterfactual_style.jsonl"


def rows_of(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def scripted(name, replies_by_text):
    """A target that replies by the first key its prompt contains (DSPy's DummyLM)."""
    lm = dspy.utils.DummyLM(replies_by_text, adapter=dspy.JSONAdapter())
    return ResolvedLM("target", LMConfig(name=f"dummy/{name}"), lm, None)


def faithful_and_stubborn(rows, perturbed_reply=None):
    """`faithful` answers from whichever context it is shown (nothing without one); `stubborn` gives
    the original answer whatever the context says."""
    faithful, stubborn = {}, {}
    for r in rows:
        faithful[r["context"]] = {"answer": perturbed_reply or r["answers"][0]}
        if r.get("original_context"):
            faithful[r["original_context"]] = {"answer": r["original_answers"][0]}
    for r in rows:
        faithful[r["question"]] = {"answer": "no idea"}
        stubborn[r["question"]] = {"answer": (r.get("original_answers") or ["no idea"])[0]}
    return [scripted("faithful", faithful), scripted("stubborn", stubborn)]


def evaluate(tmp_path, monkeypatch, source, targets, settings=("closed_book", "open_book"), data=None):
    monkeypatch.setattr(runner, "build_lms", lambda run: {"targets": targets})
    path = tmp_path / "eval.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "external",
                "task": "evaluate",
                "data": {"source": str(source), **(data or {})},
                "models": {"targets": [{"name": "qwen2.5-0.5b"}, {"name": "smollm2-135m"}]},
                "options": {"settings": list(settings), "k_shots": 0},
            }
        )
    )
    return runner.run_experiment(load_config(path), progress=False)


def test_a_published_answer_swap_file_is_evaluated_row_for_row_and_paired(isolated, monkeypatch):
    rows = rows_of(PUBLISHED)
    assert len(rows) == 50
    result = evaluate(isolated, monkeypatch, PUBLISHED, faithful_and_stubborn(rows))
    records = RunStore(result.run_id).records()
    assert {r["case_id"] for r in records} == {r["id"] for r in rows}  # all 50, none filtered
    # each case: closed-book original + open-book original and perturbed, for both targets
    assert len(records) == 50 * 3 * 2
    assert {r["variant"] for r in records} == {"original", "perturbed"}
    given = {r["id"]: r for r in rows}
    for r in records:  # answers exactly as published: no collapsing, no dropping of long ones
        expected = given[r["case_id"]]["answers" if r["variant"] == "perturbed" else "original_answers"]
        assert r["answers"] == expected
    pair = next(r for r in records if r["case_id"] == "reeval-as-003" and r["variant"] == "perturbed")
    assert pair["answers"] == ["Oskar Okafor", "Okafor"]  # overlapping answers, not collapsed

    header, table = result.task.table_rows(result.records)
    assert header[:6] == ["target", "setting", "decoding", "original", "perturbed", "drop [95% CI]"]
    drops = {row[0]: row for row in table}
    assert drops["dummy/stubborn"][3:5] == ["1.00", "0.00"] and drops["dummy/stubborn"][6] == "50"
    assert drops["dummy/faithful"][5].startswith("+0.00") and drops["dummy/faithful"][6] == "50"


def test_filters_apply_to_a_file_only_when_the_config_asks(isolated, monkeypatch):
    rows = rows_of(PUBLISHED)
    result = evaluate(
        isolated,
        monkeypatch,
        PUBLISHED,
        faithful_and_stubborn(rows),
        settings=("open_book",),
        data={"reeval_filters": True},
    )
    records = RunStore(result.run_id).records()
    assert len({r["case_id"] for r in records}) == 35  # 8 long answers and 7 disjoint answer pairs dropped
    logged = mlflow.get_run(result.mlflow_run_id).data.metrics
    assert logged["data.filter.long_answer"] == 8 and logged["data.filter.non_overlapping_answers"] == 7
    collapsed = next(r for r in records if r["case_id"] == "reeval-as-003" and r["variant"] == "perturbed")
    assert collapsed["answers"] == ["Oskar Okafor"]


def test_the_filters_default_depends_on_the_task():
    def config(task, **data):
        return ExperimentConfig.model_validate(
            {"name": "x", "task": task, "data": {"source": "nq", **data}, "models": {}}
        )

    assert config("evaluate").applies_reeval_filters() is False
    assert config("evaluate", reeval_filters=True).applies_reeval_filters() is True
    assert config("seed_selection").applies_reeval_filters() is True
    assert config("seed_selection", reeval_filters=False).applies_reeval_filters() is False
    # A run stored before the default depended on the task (`reeval_filters: true` resolved) is the same run.
    assert config("seed_selection", reeval_filters=True).digest() == config("seed_selection").digest()
    assert config("evaluate", reeval_filters=True).digest() != config("evaluate").digest()


def test_faitheval_unanswerable_rows_are_paired_and_scored_by_keyword(isolated, monkeypatch):
    rows = rows_of(UNANSWERABLE)
    targets = faithful_and_stubborn(rows, perturbed_reply="The context does not say; unknown.")
    result = evaluate(isolated, monkeypatch, UNANSWERABLE, targets, settings=("open_book",))
    records = RunStore(result.run_id).records()
    assert {r["case_id"] for r in records} == {r["qid"] for r in rows}  # FaithEval's qid is the id
    assert {r["task"] for r in records} == {"unanswerable"}
    perturbed = {r["target"]: r for r in records if r["variant"] == "perturbed" and r["case_id"] == "fe-un-0"}
    assert perturbed["dummy/faithful"]["keyword_nonstrict"] is True
    assert perturbed["dummy/faithful"]["keyword_strict"] is False  # strict wants exactly "unknown"
    assert perturbed["dummy/stubborn"]["task_correct"] is False
    original = next(r for r in records if r["variant"] == "original" and r["target"] == "dummy/stubborn")
    assert original["answers"] == [rows[0]["original_answers"][0]] and original["task_correct"] is True
    assert result.metrics["acc.dummy/stubborn.open_book.greedy.perturbed"] == 0.0
    assert result.metrics["acc.dummy/faithful.open_book.greedy.perturbed"] == 1.0


def test_an_unpaired_file_prints_accuracy_with_interval_and_n(isolated, monkeypatch):
    rows = rows_of(INCONSISTENT)
    says_conflict = scripted("faithful", {"Document 2": {"answer": "The documents conflict."}})
    picks_one = scripted("stubborn", {"Document 1": {"answer": "the first designer"}})
    result = evaluate(isolated, monkeypatch, INCONSISTENT, [says_conflict, picks_one], settings=("open_book",))
    records = RunStore(result.run_id).records()
    assert len(records) == 2 * len(rows) and {r["variant"] for r in records} == {"external"}
    assert {r["task"] for r in records} == {"inconsistent"}  # inferred from the keyword answers
    header, table = result.task.table_rows(result.records)
    assert header == ["target", "setting", "decoding", "variant", "accuracy [95% CI]", "n", "errors"]
    assert table == [
        ["dummy/faithful", "open_book", "greedy", "external", "1.00 [1.00, 1.00]", "6", "0"],
        ["dummy/stubborn", "open_book", "greedy", "external", "0.00 [0.00, 0.00]", "6", "0"],
    ]


def test_counterfactual_rows_show_their_options_and_score_the_choice(isolated, monkeypatch):
    rows = rows_of(COUNTERFACTUAL)
    follows = scripted("faithful", {r["context"]: {"answer": r["answerKey"]} for r in rows})
    knows = scripted(
        "stubborn",
        {
            "photosynthesis": {"answer": "B"},
            "moon": {"answer": "A. it reflects sunlight"},
            "electricity": {"answer": "copper"},
        },
    )
    result = evaluate(isolated, monkeypatch, COUNTERFACTUAL, [follows, knows], settings=("open_book",))
    records = {(r["case_id"], r["target"]): r for r in RunStore(result.run_id).records()}
    first = records[("fe-cf-0", "dummy/faithful")]
    assert first["task"] == "counterfactual" and first["answers"] == ["oxygen"]  # the keyed option's text
    assert first["question"].endswith("\nA. oxygen\nB. carbon dioxide\nC. helium\nD. nitrogen")
    assert all(records[(r["id"], "dummy/faithful")]["mc_correct"] is True for r in rows)
    assert not any(records[(r["id"], "dummy/stubborn")]["mc_correct"] for r in rows)


@pytest.mark.parametrize(
    "row, message",
    [
        ({"question": "q?", "context": "c", "answers": ["a"]}, "field 'id': missing"),
        (
            {"id": "x", "question": "q?", "context": "c", "answers": ["a"], "original_context": "o"},
            "field 'original_answers': missing (required with 'original_context'",
        ),
        (
            {"id": "x", "question": "q?", "context": "c", "answers": ["a"], "original_answers": ["b"]},
            "field 'original_context': missing",
        ),
        (
            {"id": "x", "question": "q?", "context": "c", "answers": ["a"], "task": "swap"},
            "field 'task': 'swap' is not one of",
        ),
        (
            {
                "id": "x",
                "question": "q?",
                "context": "c",
                "choices": [{"label": "A", "text": "a"}, {"label": "B", "text": "b"}],
                "answerKey": "E",
            },
            "field 'answerKey': 'E' is not one of the option labels",
        ),
        ({"id": "x", "question": "q?", "context": "c", "answers": []}, "field 'answers': expected a non-empty list"),
    ],
)
def test_a_malformed_row_names_file_line_and_field(tmp_path, row, message):
    path = tmp_path / "bench.jsonl"
    path.write_text(
        json.dumps({"id": "ok", "question": "q?", "context": "c", "answers": ["a"]}) + "\n" + json.dumps(row) + "\n"
    )
    with pytest.raises(DataError) as info:
        load_external_cases(path)
    assert str(info.value).startswith(f"{path}:2: ") and message in str(info.value)


def test_duplicate_ids_name_both_lines(tmp_path):
    path = tmp_path / "bench.jsonl"
    row = {"id": "x", "question": "q?", "context": "c", "answers": ["a"]}
    path.write_text(json.dumps(row) + "\n\n" + json.dumps(row) + "\n")
    with pytest.raises(DataError, match=r"bench.jsonl:3: field 'id': duplicate id 'x' \(first on line 1\)"):
        load_external_cases(path)


def test_context_enrich_rows_keep_their_answer_for_the_original_and_share_a_seed(tmp_path):
    path = tmp_path / "enrich.jsonl"
    base = {
        "question": "who built it?",
        "answers": ["Ada"],
        "original_context": "Ada built it.",
        "seed_id": "s1",
        "task": "context_enrich",
        "generator": "gpt-x",
    }
    path.write_text(
        "".join(
            json.dumps({**base, "id": f"s1:{kind}", "context": f"Ada built it. {kind} text."}) + "\n"
            for kind in ("enrich-question", "enrich-evidence")
        )
    )
    cases = load_external_cases(path)
    assert [c.seed_id for c in cases] == ["s1", "s1"] and cases[0].original_answers == ["Ada"]
    assert cases[0].generator == "gpt-x" and cases[0].source == "enrich"


def test_reeval_released_json_array_is_read_with_its_field_names(tmp_path):
    """ReEval released one JSON array per file with q_id, evidence and answer; `original_evidence` and
    `original_answer` (written by `reeval export --layout reeval`) pair each row with its source row."""
    import json

    from experiments.external_cases import load_external_cases

    rows = [
        {
            "q_id": 7,
            "question": "who wrote it",
            "answer": "Ann Lee",
            "evidence": "Ann Lee wrote it .",
            "source": "nq",
            "status": "accepted",
            "original_evidence": "Bo Ray wrote it .",
            "original_answer": ["Bo Ray"],
            "task": "answer_swap",
        },
        {
            "q_id": "8",
            "question": "who sang it",
            "answer": ["Cy Di"],
            "evidence": "Cy Di sang it .",
            "source": "nq",
            "status": "accepted",
        },
    ]
    path = tmp_path / "answer_swap.json"
    path.write_text(json.dumps(rows))
    first, second = load_external_cases(path)
    assert (first.id, first.context, first.answers) == ("7", "Ann Lee wrote it .", ["Ann Lee"])
    assert (first.original_context, first.original_answers, first.task) == (
        "Bo Ray wrote it .",
        ["Bo Ray"],
        "answer_swap",
    )
    assert (second.answers, second.original_context, second.task) == (["Cy Di"], None, "external")


def test_a_json_file_must_hold_an_array_of_objects(tmp_path):
    from experiments.data.errors import DataError
    from experiments.external_cases import load_external_cases

    path = tmp_path / "cases.json"
    path.write_text('{"q_id": 1}')
    with pytest.raises(DataError, match="expected a JSON array of objects"):
        load_external_cases(path)
    path.write_text('[{"q_id": "1", "question": "q", "evidence": "c", "answer": "a"}, 3]')
    with pytest.raises(DataError, match="item 2: expected a JSON object"):
        load_external_cases(path)
