"""`reeval export`: each layout's files and fields, the card and Croissant metadata, what may not leave
(rejected cases unless asked, keys, this machine's paths), refusals, and the round trip back into reeval."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from experiments.cli import app
from experiments.export import export_run
from experiments.export.rows import FIELDS, hf_features
from experiments.external_cases import load_external_cases
from experiments.failures import UserError

KEY = "sk-test-export-key-0123456789"


def _config(task: str, source: str = "nq", **extra) -> dict:
    return {
        "name": f"t-{task}",
        "task": task,
        "data": {"source": source, "split": "held_out", "offset": 10, "limit": 5},
        "models": {"pivot": {"name": "qwen2.5-1.5b", "seed": 0}, "judge": {"name": "qwen2.5-1.5b", "seed": 0}},
        "options": {"seeds": "open_correct"},
        **extra,
    }


def _swap(i: int, status: str, **extra) -> dict:
    return {
        "id": f"s{i}:swap",
        "seed_id": f"s{i}",
        "task": "answer_swap",
        "question": f"who wrote book {i}",
        "context": f"Book {i} was written by Ann Lee .",
        "answers": ["Ann Lee"],
        "original_context": f"Book {i} was written by Bo Ray .",
        "original_answers": ["Bo Ray"],
        "status": status,
        "program_version": "answer_swap/18",
        "pivot": "qwen2.5-1.5b",
        "judge": {"p_valid": 0.9, "method": "extract", "if": True, "only_if": True},
        "attempt": 1,
        "batch_size": 1,
        **extra,
    }


def _write_run(root: Path, run_id: str, config: dict, records: list[dict], verdicts: dict | None = None) -> Path:
    folder = root / run_id
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if verdicts:
        (folder / "review").mkdir()
        lines = [{"id": i, "annotator": "reviewer-1", "verdict": v} for i, v in verdicts.items()]
        (folder / "review" / "reviewer-1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        (folder / "review" / "reviewers.json").write_text(json.dumps({"reviewer-1": "maintainer, blind"}))
    return folder


@pytest.fixture
def swap_run(isolated, monkeypatch):
    """An answer-swap run: two accepted cases (one read valid, one invalid), one rejected, one errored whose
    text repeats a provider key and names this machine's cache."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    cache = str(isolated / "cache" / "llama")
    records = [
        _swap(1, "accepted"),
        _swap(2, "accepted", context=f"Book 2 was written by Ann Lee . {cache}/model.gguf"),
        _swap(3, "rejected:old_answer_absent"),
        _swap(4, "error:provider", question=f"who wrote book 4 ({KEY})", error=f"401 {KEY} at {cache}"),
    ]
    _write_run(
        isolated / "runs", "swap-run", _config("answer_swap"), records, {"s1:swap": "valid", "s2:swap": "invalid"}
    )
    return isolated


def _all_text(folder: Path) -> str:
    texts = []
    for path in folder.rglob("*"):
        if path.suffix == ".parquet":
            texts.append(json.dumps(pq.read_table(path).to_pylist(), default=str))
        elif path.is_file():
            texts.append(path.read_text(encoding="utf-8"))
    return "\n".join(texts)


def test_hf_layout_loads_back_with_its_features_and_card(swap_run):
    from datasets import load_dataset

    out = swap_run / "out"
    result = export_run("swap-run", out)
    assert result.rows == {"default": 2}
    assert (out / "data" / "test-00000-of-00001.parquet").exists()
    # A cache of its own: the datasets cache is keyed by folder name and would hand back another test's rows.
    loaded = load_dataset(str(out), split="test", cache_dir=str(swap_run / "hf-cache"))
    assert loaded.features == hf_features()
    assert list(loaded.features) == list(FIELDS)
    assert sorted(loaded["id"]) == ["s1:swap", "s2:swap"]
    by_id = {r["id"]: r for r in loaded}
    assert by_id["s1:swap"]["human_verdict"] == "valid" and by_id["s2:swap"]["human_verdict"] == "invalid"
    assert by_id["s1:swap"]["original_answers"] == ["Bo Ray"]
    again = load_dataset(
        "parquet",
        data_files={"test": str(out / "data" / "test-*.parquet")},
        split="test",
        cache_dir=str(swap_run / "hf-cache-2"),
    )
    assert again.features == loaded.features and again.to_list() == loaded.to_list()

    card = (out / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "cc-by-sa-3.0"  # data/LICENSE: nq.jsonl.gz, ShareAlike
    assert header["annotations_creators"] == ["machine-generated"]
    assert header["size_categories"] == ["n<1K"]
    assert header["source_datasets"] == ["extended|google-research-datasets/natural_questions"]
    assert header["task_categories"] == ["question-answering"]
    assert header["configs"][0]["data_files"] == [{"split": "test", "path": "data/test-*.parquet"}]
    for fact in ("answer_swap/18", "qwen2.5-1.5b (extract)", "split `held_out`", "offset 10, limit 5", "pivot 0"):
        assert fact in card
    assert "1 reviewer (reviewer-1: maintainer, blind)" in card
    assert "2 accepted, 1 error, 1 rejected" in card
    assert "Kwiatkowski et al., 2019" in card  # attribution as data/LICENSE states it


def test_croissant_validates_and_reads_the_rows(swap_run):
    from experiments.export.croissant import read_records, validate_croissant

    out = swap_run / "out"
    export_run("swap-run", out)
    metadata = json.loads((out / "croissant.json").read_text())
    assert metadata["conformsTo"] == "http://mlcommons.org/croissant/1.1"
    for rai in ("rai:dataCollection", "rai:dataLimitations", "rai:dataBiases", "rai:dataUseCases"):
        assert metadata.get(rai), rai
    assert metadata["license"] == "https://creativecommons.org/licenses/by-sa/3.0/"
    assert validate_croissant(out / "croissant.json") == []
    records = read_records(out / "croissant.json", "default")
    assert sorted(r["default/id"].decode() for r in records) == ["s1:swap", "s2:swap"]


def test_only_what_was_chosen_leaves_and_no_key_or_path(swap_run):
    for cases, expected in (("accepted", 2), ("reviewed-valid", 1), ("all", 4)):
        for layout in ("hf", "faitheval", "reeval"):
            out = swap_run / f"out-{cases}-{layout}"
            result = export_run("swap-run", out, cases=cases, layout=layout)
            assert sum(result.rows.values()) == expected, (cases, layout)
            text = _all_text(out)
            assert KEY not in text
            assert str(swap_run) not in text  # the runs, cache and temporary folders all sit under it
            # The card counts every status; the rows of a rejected (s3) or errored (s4) case leave only with "all".
            assert ("s3:swap" in text) == ("s4:swap" in text) == (cases == "all")
            if cases == "all":
                assert "<cache>/llama/model.gguf" in text  # the path was replaced, the rest kept


def test_faitheval_layout_read_by_a_loader_of_their_hub_layout(isolated):
    """FaithEval's hub repositories: data/test-00000-of-00001.parquet with id, context, question, answers;
    counterfactual adds choices {label, text} and answerKey."""
    runs = isolated / "runs"
    unanswerable = _swap(1, "accepted", task="unanswerable", id="s1:unanswerable", answers=["unknown"], context="")
    _write_run(runs, "u-run", _config("unanswerable"), [unanswerable])
    question = "Which is a mammal?\nA. frog\nB. whale"
    counterfactual = _swap(
        2,
        "accepted",
        task="counterfactual",
        id="q2:counterfactual",
        question=question,
        answers=["frog"],
        options=["frog", "whale"],
        choice_labels=["A", "B"],
        answer_label="A",
        original_answer_label="B",
        original_context="",
        original_answers=None,
        variant="perturbed",
        batch_size=2,
    )
    twin = {**counterfactual, "id": "q2:closed-book", "variant": "original"}
    _write_run(runs, "c-run", _config("counterfactual", source="arc_challenge"), [counterfactual, twin])

    def faitheval_loader(folder: Path, subset: str) -> list[dict]:
        table = pq.read_table(folder / f"FaithEval-{subset}-v1.0" / "data" / "test-00000-of-00001.parquet")
        rows = table.to_pylist()
        for row in rows:
            assert isinstance(row["answers"], list)
            if subset == "counterfactual":
                assert set(row["choices"]) == {"label", "text"}
                assert row["answerKey"] in row["choices"]["label"]
        return rows

    export_run("u-run", isolated / "fe-u", layout="faitheval")
    [row] = faitheval_loader(isolated / "fe-u", "unanswerable")
    # FaithEval's fields first, then what reeval reads back to pair each case with its source row.
    assert list(row) == ["id", "context", "question", "answers", "task", "original_context", "original_answers"]
    assert row["answers"] == ["unknown"] and row["original_answers"] == ["Bo Ray"]
    export_run("c-run", isolated / "fe-c", layout="faitheval")
    [row] = faitheval_loader(isolated / "fe-c", "counterfactual")  # the closed-book twin stays home
    assert list(row)[:6] == ["id", "context", "question", "answers", "choices", "answerKey"]
    assert row["original_answerKey"] == "B" and row["original_context"] == ""
    assert row["question"] == "Which is a mammal?"
    assert row["choices"] == {"label": ["A", "B"], "text": ["frog", "whale"]} and row["answerKey"] == "A"
    header = yaml.safe_load((export_run("c-run", isolated / "hf-c").out / "README.md").read_text().split("---\n")[1])
    assert header["license"] == "cc-by-sa-4.0"  # ARC, as data/LICENSE states


def test_reeval_layout_fields_and_round_trip_as_external_cases(swap_run):
    out = swap_run / "re"
    export_run("swap-run", out, layout="reeval")
    rows = json.loads((out / "answer_swap.json").read_text())
    assert {"q_id", "question", "answer", "evidence", "source"} <= set(rows[0])
    assert rows[0]["source"] == "nq" and rows[0]["answer"] == "Ann Lee"  # one string, as ReEval's
    assert "status" not in rows[0]  # the run recorded no closed-/open-book correctness: no mem_*_evi_*
    assert rows[0]["acceptance"] == "accepted" and rows[0]["original_evidence"] == "Book 1 was written by Bo Ray ."
    cases = load_external_cases(out / "answer_swap.json")
    assert [c.id for c in cases] == ["s1:swap", "s2:swap"]
    assert all(c.task == "answer_swap" and c.original_answers == ["Bo Ray"] for c in cases)
    assert cases[0].context == "Book 1 was written by Ann Lee ." and cases[0].answers == ["Ann Lee"]


def test_context_enriching_rows_carry_reeval_fields(isolated):
    record = _swap(
        1,
        "accepted",
        task="context_enrich",
        id="s1:enrich-question",
        answers=["Bo Ray"],
        supporting_sentence="Book 1 was written by Bo Ray .",
        background="Books are read .",
        retrieved=[{"id": "w:1", "title": "Book", "score": 0.4}],
    )
    record["context"] = "Book 1 was written by Bo Ray . Books are read ."
    _write_run(isolated / "runs", "ce-run", _config("context_enrich"), [record])
    export_run("ce-run", isolated / "re", layout="reeval")
    [row] = json.loads((isolated / "re" / "context_enrich.json").read_text())
    # ReEval's Category 2 meanings: the original passage, the condensed retrieved text, the merged passage.
    assert row["evidence"] == "Book 1 was written by Bo Ray ."
    assert row["new_retrieval_info"] == "Books are read ."
    assert row["supporting_sen"] == "Book 1 was written by Bo Ray ."
    assert row["condensed_evidence"] == "Book 1 was written by Bo Ray . Books are read ."
    assert row["retrieved"] == [{"id": "w:1", "title": "Book", "score": 0.4}]
    [case] = load_external_cases(isolated / "re" / "context_enrich.json")
    assert case.context == row["condensed_evidence"] and case.original_context == row["evidence"]
    assert case.task == "context_enrich" and case.answers == case.original_answers == ["Bo Ray"]
    header = yaml.safe_load((export_run("ce-run", isolated / "hf").out / "README.md").read_text().split("---\n")[1])
    assert "extended|wikipedia" in header["source_datasets"]  # the retrieved passages' pool


def test_bench_exports_each_generator_stage_and_compare_pivots_each_pivot(isolated):
    runs = isolated / "runs"
    _write_run(runs, "bench-x", _config("bench"), [])
    (runs / "bench-x" / "cases.jsonl").unlink()
    for stage in ("generate.answer_swap.p1", "generate.unanswerable.p1"):
        task = stage.split(".")[1]
        _write_run(runs / "bench-x", stage, _config(task), [_swap(1, "accepted", task=task)])
    result = export_run("bench-x", isolated / "b")
    assert result.rows == {"answer_swap.p1": 1, "unanswerable.p1": 1}
    header = yaml.safe_load((isolated / "b" / "README.md").read_text().split("---\n")[1])
    assert [c["config_name"] for c in header["configs"]] == ["answer_swap.p1", "unanswerable.p1"]
    assert header["configs"][1]["data_files"][0]["path"] == "data/unanswerable.p1/test-*.parquet"

    target = {"t1": {"perturbed_correct": False, "original_correct": True}}
    records = [
        _swap(1, "accepted", id="s1:p1", pivot="p1", targets=target, batch_size=2),
        _swap(1, "accepted", id="s1:p2", pivot="p2", targets=target, batch_size=2),
    ]
    _write_run(runs, "cmp", _config("compare_pivots"), records)
    result = export_run("cmp", isolated / "c")
    assert result.rows == {"p1": 1, "p2": 1}
    card = (isolated / "c" / "README.md").read_text()
    assert "| `t1` | open_book | greedy | perturbed | 0% [0%, 79%] | 1 |" in card
    assert "| `t1` | open_book | greedy | original | 100% [21%, 100%] | 1 |" in card


def test_refusals_exit_2_with_a_clear_message(isolated):
    runs = isolated / "runs"
    _write_run(runs, "none-accepted", _config("answer_swap"), [_swap(1, "rejected:old_answer_absent")])
    runner = CliRunner()
    result = runner.invoke(app, ["export", "none-accepted", "--out", str(isolated / "o")])
    assert result.exit_code == 2
    assert "nothing to export" in result.output and "no case of it was accepted" in result.output
    assert not (isolated / "o").exists()
    result = runner.invoke(app, ["export", "none-accepted", "--out", str(isolated / "o"), "--layout", "csv"])
    assert result.exit_code == 2 and "choose one of hf, faitheval, reeval" in result.output
    result = runner.invoke(app, ["export", "none-accepted", "--out", str(isolated / "o"), "--cases", "all"])
    assert result.exit_code == 0, result.output
    with pytest.raises(UserError, match="not empty"):
        export_run("none-accepted", isolated / "o", cases="all")
    with pytest.raises(UserError, match="reviewer"):
        export_run("none-accepted", isolated / "p", cases="reviewed-valid")
