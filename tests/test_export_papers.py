"""Exports read as the papers' own files are: the `reeval` layout by a loader written from the shapes of ReEval's
released JSON (github.com/CogComp/ReEval-LLM-Hallucination, data/*.json), the `faitheval` layout evaluated back by
reeval and paired, a licence and attribution in every layout wherever REEVAL_HOME points, the card's wording, an
archived run exported by path with its archived verdicts made its review, and every bad input refused in one line
with nothing left on disk."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from experiments.cli import app
from experiments.data.errors import DataError
from experiments.data.registry import resolve_dataset
from experiments.export import export_run
from experiments.external_cases import load_external_cases
from experiments.run_store import RunStore
from tests.test_export import _config, _swap, _write_run
from tests.test_external_cases import evaluate, scripted

ROOT = Path(__file__).resolve().parents[1]

# ReEval's released files, as read from them: every row has these, with these types.
REEVAL_ROW = {"q_id": (str, int), "question": str, "answer": str, "evidence": str, "source": str}
# Category 2 files (`*_cat2_retrieve_by_{query,evidence}.json`) add these, all strings.
REEVAL_CATEGORY_2 = {"new_retrieval_info": str, "supporting_sen": str, "condensed_evidence": str}
# `status`, where a row has one: the pivot's closed-book (mem) and open-book (evi) correctness on the seed.
REEVAL_STATUSES = {"mem_correct_evi_correct", "mem_correct_evi_wrong", "mem_wrong_evi_correct", "mem_wrong_evi_wrong"}


def reeval_released_loader(path: Path, category: int) -> list[dict]:
    """Read a file as ReEval's code reads its released data, checking each field's type on the way."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(rows, list)
    fields = REEVAL_ROW | (REEVAL_CATEGORY_2 if category == 2 else {})
    for row in rows:
        for name, kind in fields.items():
            assert isinstance(row[name], kind), (name, row[name])
        if "status" in row:
            assert row["status"] in REEVAL_STATUSES, row["status"]
        # What ReEval's analysis.py and data_processor.py do with a row: these must not fail.
        key = row["question"] + row["evidence"] + row["answer"]  # remove_duplicates
        assert key
        if category == 1:
            row["answer_count"] = row["evidence"].count(row["answer"])  # cat1_evaluate keeps rows where it is 1
        else:
            row["model_reads"] = row["condensed_evidence"]  # generate_prompt(..., use_condensed_evi=True)
    return rows


def _seeded(record: dict, closed: bool, opened: bool = True) -> dict:
    return {**record, "closed_correct": closed, "open_correct": opened, "seed_cell": "recorded"}


def test_reeval_layout_is_read_by_a_loader_of_reeval_released_files(isolated):
    runs = isolated / "runs"
    swaps = [
        _seeded(_swap(1, "accepted", answers=["Ann Lee", "Lee"]), closed=False),
        _seeded(_swap(2, "accepted"), closed=True),
        _swap(3, "accepted"),  # an older record without the seed's correctness
    ]
    _write_run(runs, "swap-run", _config("answer_swap"), swaps)
    export_run("swap-run", isolated / "re", layout="reeval")
    rows = reeval_released_loader(isolated / "re" / "answer_swap.json", category=1)
    assert [r["q_id"] for r in rows] == ["s1:swap", "s2:swap", "s3:swap"]
    assert [r.get("status") for r in rows] == ["mem_wrong_evi_correct", "mem_correct_evi_correct", None]
    assert rows[0]["answer"] == "Ann Lee" and rows[0]["answers"] == ["Ann Lee", "Lee"]
    assert all(r["answer_count"] == 1 for r in rows)  # the swapped answer stands once in the passage read
    assert rows[0]["acceptance"] == "accepted"  # reeval's own decision keeps a name of its own

    enriched = _seeded(
        _swap(
            4,
            "accepted",
            task="context_enrich",
            id="s4:enrich-question",
            answers=["Bo Ray"],
            context="Book 4 was written by Bo Ray . Books are read in Port Elm .",
            supporting_sentence="Book 4 was written by Bo Ray .",
            background="Books are read in Port Elm .",
            retrieved=[{"id": "w:9", "title": "Port Elm", "score": 0.5, "text": "not exported"}],
        ),
        closed=False,
    )
    _write_run(runs, "ce-run", _config("context_enrich"), [enriched])
    export_run("ce-run", isolated / "ce", layout="reeval")
    [row] = reeval_released_loader(isolated / "ce" / "context_enrich.json", category=2)
    assert row["evidence"] == "Book 4 was written by Bo Ray ."  # ReEval: the original passage
    assert row["new_retrieval_info"] == "Books are read in Port Elm ."  # the condensed retrieved text
    assert row["condensed_evidence"] == row["model_reads"] == enriched["context"]  # the merged passage
    assert row["status"] == "mem_wrong_evi_correct"
    assert row["retrieved"] == [{"id": "w:9", "title": "Port Elm", "score": 0.5}]

    unanswerable = _swap(5, "accepted", task="unanswerable", id="s5:unanswerable", answers=["unknown"])
    _write_run(runs, "u-run", _config("unanswerable"), [unanswerable])
    export_run("u-run", isolated / "un", layout="reeval")
    [row] = reeval_released_loader(isolated / "un" / "unanswerable.json", category=1)
    assert row["answer"] == "unknown" and row["original_evidence"] == "Book 5 was written by Bo Ray ."


def test_files_shaped_as_reeval_released_them_are_evaluable(tmp_path):
    """Category 1 rows carry no original passage: evaluated once. Category 2 rows carry it as `evidence` beside
    the merged `condensed_evidence`: evaluated paired, as context enriching."""
    category_1 = [
        {
            "q_id": "a1",
            "question": "who wrote it",
            "answer": "Ann Lee",
            "evidence": "Ann Lee wrote it .",
            "source": "nq",
        },
        {
            "q_id": 7,
            "question": "who sang it",
            "answer": "Cy Di",
            "evidence": "Cy Di sang it .",
            "source": "nq",
            "status": "mem_wrong_evi_correct",
        },
    ]
    path = tmp_path / "nq_cat1_counterfact.json"
    path.write_text(json.dumps(category_1, indent=4))
    cases = load_external_cases(path)
    assert [c.id for c in cases] == ["a1", "7"] and [c.answers for c in cases] == [["Ann Lee"], ["Cy Di"]]
    assert all(c.original_context is None and c.task == "external" for c in cases)

    category_2 = [
        {
            "q_id": 0,
            "question": "who wrote it",
            "answer": "Bo Ray",
            "evidence": "Bo Ray wrote it .",
            "source": "realtimeqa",
            "new_retrieval_info": "Books are read .",
            "supporting_sen": '"Bo Ray wrote it ."',
            "condensed_evidence": "Bo Ray wrote it . Books are read .",
        },
    ]
    path = tmp_path / "realtime_cat2_retrieve_by_query.json"
    path.write_text(json.dumps(category_2, indent=4))
    [case] = load_external_cases(path)
    assert case.context == "Bo Ray wrote it . Books are read ." and case.original_context == "Bo Ray wrote it ."
    assert case.task == "context_enrich" and case.answers == case.original_answers == ["Bo Ray"]


def _faitheval_run(runs: Path) -> None:
    records = [
        _swap(
            i,
            "accepted",
            task="unanswerable",
            id=f"s{i}:unanswerable",
            answers=["unknown"],
            context=f"Book {i} was written in Port Elm .",
        )
        for i in (1, 2)
    ]
    _write_run(runs, "u-run", _config("unanswerable"), records)


def test_a_faitheval_export_is_evaluated_back_paired_from_its_folder_or_its_parquet(isolated, monkeypatch):
    _faitheval_run(isolated / "runs")
    out = isolated / "fe"
    export_run("u-run", out, layout="faitheval")
    parquet = out / "FaithEval-unanswerable-v1.0" / "data" / "test-00000-of-00001.parquet"
    assert resolve_dataset(str(out)).path == parquet.resolve()  # the export folder stands for its one file
    assert resolve_dataset(str(parquet)).name == "FaithEval-unanswerable-v1.0"
    cases = load_external_cases(parquet)
    assert [c.task for c in cases] == ["unanswerable"] * 2 and cases[0].original_answers == ["Bo Ray"]

    faithful, stubborn = {}, {}
    for i in (1, 2):
        faithful[f"Book {i} was written in Port Elm ."] = {"answer": "unknown"}
        faithful[f"Book {i} was written by Bo Ray ."] = {"answer": "Bo Ray"}
        stubborn[f"who wrote book {i}"] = {"answer": "Bo Ray"}
    targets = [scripted("faithful", faithful), scripted("stubborn", stubborn)]
    result = evaluate(isolated, monkeypatch, out, targets, settings=("open_book",))
    records = RunStore(result.run_id).records()
    assert {r["case_id"] for r in records} == {"s1:unanswerable", "s2:unanswerable"}
    assert {r["variant"] for r in records} == {"original", "perturbed"}  # paired, not "external"
    assert result.metrics["acc.dummy/faithful.open_book.greedy.perturbed"] == 1.0
    assert result.metrics["acc.dummy/stubborn.open_book.greedy.perturbed"] == 0.0
    assert result.metrics["acc.dummy/stubborn.open_book.greedy.original"] == 1.0


def test_a_folder_with_several_data_files_is_refused_naming_them(isolated):
    runs = isolated / "runs"
    _write_run(runs, "bench-x", _config("bench"), [])
    (runs / "bench-x" / "cases.jsonl").unlink()
    for stage in ("generate.answer_swap.p1", "generate.unanswerable.p1"):
        _write_run(
            runs / "bench-x", stage, _config(stage.split(".")[1]), [_swap(1, "accepted", task=stage.split(".")[1])]
        )
    export_run("bench-x", isolated / "fe", layout="faitheval")
    with pytest.raises(DataError, match=r"holds 2 data files \(FaithEval-unanswerable-v1.0-unanswerable.p1/"):
        resolve_dataset(str(isolated / "fe"))
    (isolated / "nothing-here").mkdir()
    with pytest.raises(DataError, match="no data file"):
        resolve_dataset(str(isolated / "nothing-here"))


def test_licence_and_attribution_in_every_layout_under_a_moved_reeval_home(tmp_path):
    """REEVAL_HOME moves runs/ and mlruns/ and holds no data/: the licence still comes from the shipped
    statement, in a fresh process (the data folder is fixed when the package is imported)."""
    home = tmp_path / "home"
    _write_run(home / "runs", "swap-run", _config("answer_swap"), [_swap(1, "accepted")])
    _write_run(home / "runs", "arc-run", _config("counterfactual", source="arc_challenge"), [_swap(2, "accepted")])
    script = (
        "from experiments.export import export_run\n"
        "for layout in ('hf', 'faitheval', 'reeval'):\n"
        f"    export_run('swap-run', r'{tmp_path}/' + layout, layout=layout)\n"
        f"export_run('arc-run', r'{tmp_path}/arc')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("REEVAL_RUNS_DIR",)}
    env |= {"REEVAL_HOME": str(home), "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"}
    env |= {"REEVAL_CACHE_DIR": str(tmp_path / "cache"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    header = yaml.safe_load((tmp_path / "hf" / "README.md").read_text().split("---\n")[1])
    assert header["license"] == "cc-by-sa-3.0"
    arc = yaml.safe_load((tmp_path / "arc" / "README.md").read_text().split("---\n")[1])
    assert arc["license"] == "cc-by-sa-4.0"
    notices = [
        tmp_path / "hf" / "LICENSE.md",
        tmp_path / "faitheval" / "answer_swap" / "LICENSE.md",  # each FaithEval folder is a repository of its own
        tmp_path / "reeval" / "LICENSE.md",
    ]
    for path in notices:
        text = path.read_text()
        assert "Licence: cc-by-sa-3.0" in text and "ShareAlike" in text, path
        assert "Kwiatkowski et al., 2019" in text and "https://creativecommons.org/licenses/by-sa/3.0/" in text, path
        assert "no licence statement found" not in text, path


def test_card_says_what_the_rows_are_and_what_the_validity_figure_covers(isolated):
    runs = isolated / "runs"
    records = [_swap(i, "accepted") for i in range(1, 4)] + [
        _swap(9, "rejected:seed_not_selected", context="", judge=None),
        _swap(4, "rejected:acceptance"),  # the judge read it; the acceptance score dropped it afterwards
    ]
    _write_run(runs, "swap-run", _config("answer_swap"), records, {"s1:swap": "valid", "s2:swap": "invalid"})
    card = (export_run("swap-run", isolated / "rv", cases="reviewed-valid").out / "README.md").read_text()
    assert "only accepted cases a reviewers' majority read valid, selected for that" in card
    assert "| exported (`--cases reviewed-valid`) | 1, each read valid by the reviewers' majority" in card
    assert "valid share of the run's accepted cases (not of these rows: each was chosen as read valid)" in card

    card = (export_run("swap-run", isolated / "all", cases="all").out / "README.md").read_text()
    assert "5 rows: 4 adversarial open-book question-answering cases and 1 rows without a passage" in card
    assert "| exported (`--cases all`) | 5: 4 with a passage, 1 without one" in card

    _write_run(runs, "judged-run", _config("answer_swap"), records)
    card = (export_run("judged-run", isolated / "j").out / "README.md").read_text()
    assert "The judge read 4 cases: 1 of them were dropped after its reading (rejected:acceptance 1)" in card
    assert "of the other 3, it accepted 3 (100%)" in card


def _one_line(result) -> str:
    lines = [line for line in (result.stderr or result.output).strip().splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_bad_inputs_are_one_line_exit_2_and_leave_nothing(isolated):
    runs = isolated / "runs"
    _write_run(runs, "swap-run", _config("answer_swap"), [_swap(1, "accepted")])
    runner = CliRunner()
    before = sorted(p.relative_to(isolated) for p in isolated.rglob("*"))

    target = isolated / "a-file.txt"
    target.write_text("keep me")
    before = sorted(p.relative_to(isolated) for p in isolated.rglob("*"))
    for out in (target, target / "under"):
        result = runner.invoke(app, ["export", "swap-run", "--out", str(out)])
        assert result.exit_code == 2, result.output
        assert "give a new or empty folder" in _one_line(result)
    assert target.read_text() == "keep me"
    for args in (
        ["--layout", "csv"],
        ["--cases", "most"],
        ["--cases", "reviewed-valid"],  # no case read valid
    ):
        result = runner.invoke(app, ["export", "swap-run", "--out", str(isolated / "new" / "x"), *args])
        assert result.exit_code == 2, (args, result.output)
        _one_line(result)
    result = runner.invoke(app, ["export", "no-such-run", "--out", str(isolated / "new")])
    assert result.exit_code == 2
    _one_line(result)
    result = runner.invoke(app, ["import-verdicts", str(runs / "swap-run"), "--verdicts", str(target)])
    assert result.exit_code == 2, result.output
    _one_line(result)
    assert sorted(p.relative_to(isolated) for p in isolated.rglob("*")) == before


def test_a_path_that_is_no_run_folder_says_so_not_where_run_ids_live(isolated, monkeypatch):
    runs = isolated / "runs"
    _write_run(runs, "swap-run", _config("answer_swap"), [_swap(1, "accepted")])
    _write_run(runs / "bench-x", "generate.answer_swap.p1", _config("answer_swap"), [_swap(1, "accepted")])
    (isolated / "readings" / "not-a-run").mkdir(parents=True)
    monkeypatch.chdir(isolated)
    runner = CliRunner()
    expected = {
        "readings": "readings: a folder without config.json, so no run's folder; nor is it a run id in",
        "readings/not-a-run": "a folder without config.json",
        "readings/gone": "readings/gone: no such run folder, and no run of that id in",
        str(isolated / "gone"): "no such run folder, and no run of that id in",
        "../gone/run": "no such run folder",
        "no-such-run": "no run 'no-such-run'",  # an id: where run ids live is the help
        "bench-x/generate.nope": "no run 'bench-x/generate.nope'",  # a stage id names a folder of the store
    }
    for run, message in expected.items():
        result = runner.invoke(app, ["export", run, "--out", str(isolated / "out")])
        assert result.exit_code == 2, (run, result.output)
        assert message in " ".join(_one_line(result).split()), (run, result.output)
    assert not (isolated / "out").exists()
    result = runner.invoke(app, ["export", "bench-x/generate.answer_swap.p1", "--out", str(isolated / "out")])
    assert result.exit_code == 0, result.output


def test_a_write_that_fails_midway_leaves_nothing(isolated, monkeypatch):
    from experiments.export import run as export

    _write_run(isolated / "runs", "swap-run", _config("answer_swap"), [_swap(1, "accepted")])

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export, "write_reeval", full_disk)
    (isolated / "empty").mkdir()
    for out in (isolated / "deep" / "new", isolated / "empty"):
        with pytest.raises(OSError):
            export_run("swap-run", out, layout="reeval")
    assert not (isolated / "deep").exists() and list((isolated / "empty").iterdir()) == []


def test_an_archived_run_is_exported_by_path_with_its_archived_verdicts_as_review(tmp_path):
    archive = tmp_path / "docs" / "readings" / "swap-run"
    records = [_swap(i, "accepted") for i in (1, 2, 3)]
    _write_run(archive.parent, "swap-run", _config("answer_swap"), records)
    kind = "independent blind reader"
    lines = [
        {"run": "swap-run", "id": "s1:swap", "verdict": "valid", "reader": "reader-1", "kind": kind, "note": "ok"},
        {"run": "swap-run", "id": "s2:swap", "verdict": "invalid", "reader": "reader-1", "kind": kind},
        {"run": "swap-run", "id": "s3:swap", "verdict": "valid", "reader": "reader-2", "kind": kind},
        {"run": "swap-run", "id": "gone:swap", "verdict": "valid", "reader": "reader-2", "kind": kind},
        {"run": "other-run", "id": "s1:swap", "verdict": "invalid", "reader": "reader-1", "kind": kind},
    ]
    verdicts = tmp_path / "independent_reading.jsonl"
    verdicts.write_text("".join(json.dumps(x) + "\n" for x in lines))
    runner = CliRunner()
    result = runner.invoke(app, ["import-verdicts", str(archive), "--verdicts", str(verdicts)])
    assert result.exit_code == 0, result.output
    assert "reader-1.jsonl: 2 verdicts" in result.output and "1 verdicts on swap-run name cases" in result.output
    assert json.loads((archive / "review" / "reviewers.json").read_text()) == {"reader-1": kind, "reader-2": kind}
    again = runner.invoke(app, ["import-verdicts", str(archive), "--verdicts", str(verdicts)])
    assert again.exit_code == 0 and "already imported, unchanged" in again.output

    env_runs = tmp_path / "runs"  # the run store holds nothing: the folder is read where it lies
    result = runner.invoke(
        app,
        ["export", str(archive), "--out", str(tmp_path / "out"), "--cases", "reviewed-valid", "--layout", "reeval"],
        env={"REEVAL_RUNS_DIR": str(env_runs), "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'mlflow.db'}"},
    )
    assert result.exit_code == 0, result.output
    rows = json.loads((tmp_path / "out" / "answer_swap.json").read_text())
    assert sorted(r["q_id"] for r in rows) == ["s1:swap", "s3:swap"]
    assert not env_runs.exists()

    other = tmp_path / "other.jsonl"  # the same reader, another kind: refused, nothing written
    other.write_text(json.dumps({**lines[0], "reader": "reader-2", "kind": "maintainer, blind"}) + "\n")
    before = (archive / "review" / "reviewers.json").read_text()
    result = runner.invoke(app, ["import-verdicts", str(archive), "--verdicts", str(other)])
    assert result.exit_code == 2 and "reader-2 is recorded as" in _one_line(result)
    assert (archive / "review" / "reviewers.json").read_text() == before
    assert sorted(p.name for p in (archive / "review").iterdir()) == [
        "reader-1.jsonl",
        "reader-2.jsonl",
        "reviewers.json",
    ]


def test_an_hf_export_folder_is_evaluable_back_too(isolated):
    runs = isolated / "runs"
    _write_run(runs, "swap-run", _config("answer_swap"), [_swap(1, "accepted"), _swap(2, "accepted")])
    export_run("swap-run", isolated / "hf")
    cases = load_external_cases(resolve_dataset(str(isolated / "hf")).path)
    assert [c.id for c in cases] == ["s1:swap", "s2:swap"] and cases[0].task == "answer_swap"
    assert cases[0].original_context == "Book 1 was written by Bo Ray ." and cases[0].original_answers == ["Bo Ray"]
    assert cases[0].options is None  # the layout's empty options are no options

    question = "Which is a mammal?\nA. frog\nB. whale"
    counterfactual = _swap(
        3,
        "accepted",
        task="counterfactual",
        id="q3:counterfactual",
        question=question,
        answers=["frog"],
        options=["frog", "whale"],
        choice_labels=["A", "B"],
        answer_label="A",
        original_answer_label="B",
        original_context="",
        original_answers=None,
        variant="perturbed",
    )
    _write_run(runs, "c-run", _config("counterfactual", source="arc_challenge"), [counterfactual])
    export_run("c-run", isolated / "hf-c")
    [case] = load_external_cases(resolve_dataset(str(isolated / "hf-c")).path)
    assert case.question == question and case.task == "counterfactual"  # the options lettered again
    assert case.answer_label == "A" and case.original_answer_label == "B" and case.original_answers == ["whale"]
    export_run("c-run", isolated / "fe-c", layout="faitheval")
    [case] = load_external_cases(resolve_dataset(str(isolated / "fe-c")).path)
    assert case.original_context == "" and case.original_answers == ["whale"] and case.answers == ["frog"]


def test_every_layout_loads_through_datasets(isolated):
    from datasets import load_dataset

    runs = isolated / "runs"
    swaps = [_seeded(_swap(1, "accepted"), closed=False), _swap(2, "accepted")]  # one row without a status
    _write_run(runs, "swap-run", _config("answer_swap"), swaps)
    _faitheval_run(runs)
    export_run("u-run", isolated / "fe", layout="faitheval")
    export_run("swap-run", isolated / "re", layout="reeval")
    cache = str(isolated / "hf-cache")
    faitheval = load_dataset(str(isolated / "fe" / "FaithEval-unanswerable-v1.0"), split="test", cache_dir=cache)
    assert faitheval["id"] == ["s1:unanswerable", "s2:unanswerable"] and faitheval["answers"] == [["unknown"]] * 2
    files = {"test": str(isolated / "re" / "answer_swap.json")}
    reeval = load_dataset("json", data_files=files, split="test", cache_dir=cache)
    assert reeval["answer"] == ["Ann Lee", "Ann Lee"] and reeval["status"] == ["mem_wrong_evi_correct", None]
