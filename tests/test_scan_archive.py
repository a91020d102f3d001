"""Archived knowledge scans: raw answers round-trip, 'known' is recomputed on reading, a scan starts from
the archive only when its key matches, and a row the probe would ask open-book is not taken half-done."""

import gzip
import json

import dspy

from experiments.bench.scan_archive import (
    archived_rows,
    prefill,
    prefill_records,
    prompt_fingerprint,
    read_archive,
    scan_key,
    write_archive,
)
from experiments.run_store import RunStore

IDENTITY = {
    "model_string": "local/qwen@abc",
    "temperature": 0.0,
    "max_tokens": 48,
    "seed": 0,
    "adapter": "chat",
    "llama_cpp_features": "AVX2",
    "n_threads": 1,
}
KEY = scan_key("p" * 16, IDENTITY, "d" * 64, 400)


def example(i, answer):
    return dspy.Example(id=str(i), question=f"question {i}", answers=[answer], context="").with_inputs("question")


EXAMPLES = [example(1, "Seoul"), example(2, "Paris"), example(3, "Lima"), example(4, "Oslo")]


def header(**extra):
    return {"kind": "knowledge_scan", "source": "nq", "split": "held_out", "target": "t", "key": KEY, **extra}


def test_key_ignores_how_many_threads_asked():
    assert scan_key("p" * 16, {**IDENTITY, "n_threads": 2}, "d" * 64, 400) == KEY
    assert scan_key("p" * 16, {**IDENTITY, "max_tokens": 64}, "d" * 64, 400) != KEY
    assert scan_key("p" * 16, IDENTITY, "d" * 64, 300) != KEY  # open-book answers read another passage length


def test_the_prompt_fingerprint_follows_what_the_scan_sends(monkeypatch):
    import dspy

    from signatures.target import ClosedBookAnswer

    chat, as_json = prompt_fingerprint(dspy.ChatAdapter()), prompt_fingerprint(dspy.JSONAdapter())
    assert chat == prompt_fingerprint(dspy.ChatAdapter()) and chat != as_json
    changed = ClosedBookAnswer.with_instructions("Answer from memory.")
    monkeypatch.setattr("programs.target_reader.ClosedBookAnswer", changed)
    assert prompt_fingerprint(dspy.ChatAdapter()) != chat


def test_rows_merge_and_keep_the_fuller_answer(tmp_path):
    path = tmp_path / "a.jsonl.gz"
    assert (
        write_archive(path, header(), [{"id": "1", "closed_answer": "Seoul"}, {"id": "2", "closed_answer": "x"}]) == 2
    )
    assert write_archive(path, header(), [{"id": "1", "closed_answer": "Seoul", "open_answer": "Seoul"}]) == 2
    first = path.read_bytes()
    write_archive(path, header(), [])
    assert path.read_bytes() == first  # nothing new, same bytes
    head, rows = read_archive(path)
    assert head["rows"] == 2 and rows["1"]["open_answer"] == "Seoul" and "open_answer" not in rows["2"]


def test_another_key_is_refused_on_write(tmp_path):
    path = tmp_path / "a.jsonl.gz"
    write_archive(path, header(), [{"id": "1", "closed_answer": "Seoul"}])
    other = {**header(), "key": {**KEY, "max_tokens": 64}}
    try:
        write_archive(path, other, [])
    except ValueError as exc:
        assert "another key" in str(exc)
    else:
        raise AssertionError("an archive of another key was overwritten")


def test_prefill_recomputes_knowing_and_skips_rows_missing_their_open_book_answer():
    rows = {
        "1": {"id": "1", "closed_answer": "seoul", "open_answer": "Seoul"},  # known
        "2": {"id": "2", "closed_answer": "Paris"},  # right closed-book, open-book never asked: ask again
        "3": {"id": "3", "closed_answer": "Quito"},  # wrong, not a table row: closed-book is all the probe asks
        "4": {"id": "4", "closed_answer": "Bergen"},  # wrong but a table row without its open-book answer
    }
    records = {r["id"]: r for r in prefill_records(rows, EXAMPLES, table_ids={"4"})}
    assert set(records) == {"1", "3"}
    assert records["1"]["closed_correct"] and records["1"]["open_correct"] and records["1"]["archived"]
    assert not records["3"]["closed_correct"] and "open_answer" not in records["3"]


def test_prefill_fills_a_store_once_and_only_under_the_same_key(tmp_path):
    path = tmp_path / "a.jsonl.gz"
    write_archive(
        path,
        header(),
        [{"id": "1", "closed_answer": "Seoul", "open_answer": "Seoul"}, {"id": "3", "closed_answer": "Quito"}],
    )
    store = RunStore("bench/knowledge.t", root=tmp_path / "runs")
    assert prefill(store, path, {**KEY, "model_string": "other"}, EXAMPLES, set(), "t") == 0
    assert prefill(store, path, KEY, EXAMPLES, set(), "t") == 2
    assert prefill(store, path, KEY, EXAMPLES, set(), "t") == 0  # done rows are not added twice
    store.close()
    stored = RunStore("bench/knowledge.t", root=tmp_path / "runs").records()
    assert sorted(r["seed_id"] for r in stored) == ["1", "3"] and all(r["target"] == "t" for r in stored)
    # what a run archives back is the raw answers, errors left out
    assert archived_rows([*stored, {"seed_id": "9", "status": "error:parse"}]) == [
        {"id": "1", "closed_answer": "Seoul", "open_answer": "Seoul"},
        {"id": "3", "closed_answer": "Quito"},
    ]


def test_a_file_without_a_header_is_an_error(tmp_path):
    path = tmp_path / "bad.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps({"id": "1"}) + "\n")
    try:
        read_archive(path)
    except ValueError as exc:
        assert "header" in str(exc) and str(path) in str(exc)
    else:
        raise AssertionError("a headerless archive was read")


def test_the_header_lists_each_run_that_added_rows(tmp_path):
    path = tmp_path / "a.jsonl.gz"
    first = {"run": "kc-1", "commit": "abc", "machine": "Xeon, 2 cores"}
    write_archive(path, header(), [{"id": "1", "closed_answer": "Seoul"}], first)
    write_archive(path, header(), [{"id": "1", "closed_answer": "Seoul"}], {**first, "run": "kc-2"})  # adds nothing
    write_archive(path, header(), [{"id": "2", "closed_answer": "x"}], {**first, "run": "kc-3"})
    head, _ = read_archive(path)
    assert [(r["run"], r["rows_added"]) for r in head["runs"]] == [("kc-1", 1), ("kc-3", 1)]


def test_asked_by_names_a_commit_and_a_machine():
    from experiments.bench.scan_archive import asked_by

    who = asked_by()
    assert who["commit"] and "cores" in who["machine"]
