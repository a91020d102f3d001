"""Data loading (the experiments.data package) and ReEval's source filters (experiments.filters). Offline, fast."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import dspy
import pytest

from experiments.data import hub
from experiments.data.converters import arc_hub_row_to_record, mrqa_hub_row_to_record
from experiments.data.errors import DataError, UnknownDatasetError
from experiments.data.examples import mc_example
from experiments.data.files import content_sha256
from experiments.data.loaders import load_mrqa, load_multiple_choice, load_passages, load_qa
from experiments.data.records import QA_FIELDS
from experiments.data.registry import DATA_DIR, DATASETS, resolve_dataset
from experiments.filters import COUNT_KEYS, answers_overlap, apply_reeval_filters

FIXTURES = Path(__file__).parent / "fixtures"
MANIFEST = json.loads((DATA_DIR / "MANIFEST.json").read_text(encoding="utf-8"))

GOOD = {
    "id": "q1",
    "question": "Who wrote the report?",
    "context": "The report was written by Ada Lovelace in the year 1843 for a journal.",
    "answers": ["Ada Lovelace"],
    "answer_starts": [26],
}


def _write_jsonl(path: Path, lines: list[str]) -> Path:
    payload = ("\n".join(lines) + "\n").encode("utf-8")
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(payload, mtime=0))
    else:
        path.write_bytes(payload)
    return path


def _row(**overrides) -> str:
    row = {**GOOD, **overrides}
    return json.dumps({k: v for k, v in row.items() if v is not ...})


# ----------------------------------------------------------------------------- malformed rows


@pytest.mark.parametrize("name", ["bad.jsonl", "bad.jsonl.gz"])
def test_invalid_json_names_file_and_line(tmp_path: Path, name: str) -> None:
    path = _write_jsonl(tmp_path / name, [_row(id="a"), _row(id="b"), '{"id": "c", "question": '])
    with pytest.raises(DataError) as err:
        load_qa(path)
    msg = str(err.value)
    assert name in msg and f"{name}:3:" in msg and "invalid JSON" in msg


@pytest.mark.parametrize("name", ["types.jsonl", "types.jsonl.gz"])
def test_wrong_type_for_answers_names_field_and_line(tmp_path: Path, name: str) -> None:
    path = _write_jsonl(tmp_path / name, [_row(id="a"), _row(id="b", answers=7, answer_starts=...)])
    with pytest.raises(DataError, match=r"types\.jsonl(\.gz)?:2: field 'answers': .*list of strings, got int"):
        load_qa(path)


def test_answers_with_non_string_item_names_index(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "x.jsonl", [_row(answers=["ok", 3], answer_starts=...)])
    with pytest.raises(DataError, match=r"x\.jsonl:1: field 'answers': .*got int at index 1"):
        load_qa(path)


def test_missing_question_names_field(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "m.jsonl", [_row(id="a"), _row(id="b", question=...)])
    with pytest.raises(DataError, match=r"m\.jsonl:2: field 'question': missing"):
        load_qa(path)


def test_empty_answers_and_bad_offsets_and_duplicates_are_errors(tmp_path: Path) -> None:
    p1 = _write_jsonl(tmp_path / "e.jsonl", [_row(answers=[], answer_starts=...)])
    with pytest.raises(DataError, match=r"e\.jsonl:1: field 'answers'.*empty list"):
        load_qa(p1)
    p2 = _write_jsonl(tmp_path / "o.jsonl", [_row(answer_starts=[3])])
    with pytest.raises(DataError, match=r"o\.jsonl:1: field 'answer_starts': offset 3"):
        load_qa(p2)
    p3 = _write_jsonl(tmp_path / "d.jsonl", [_row(), _row()])
    with pytest.raises(DataError, match=r"d\.jsonl:2: field 'id': duplicate id 'q1' \(first on line 1\)"):
        load_qa(p3)
    p4 = _write_jsonl(tmp_path / "l.jsonl", ["[1, 2]"])
    with pytest.raises(DataError, match=r"l\.jsonl:1: expected a JSON object, got list"):
        load_qa(p4)


def test_corrupt_gzip_and_wrong_suffix(tmp_path: Path) -> None:
    good = gzip.compress(("\n".join([_row(id=str(i)) for i in range(50)]) + "\n").encode(), mtime=0)
    bad = tmp_path / "cut.jsonl.gz"
    bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(DataError, match=r"cut\.jsonl\.gz:\d+: corrupt or truncated gzip"):
        load_qa(bad)
    other = tmp_path / "x.csv"
    other.write_text("a,b\n")
    with pytest.raises(DataError, match=r"\.jsonl, \.jsonl\.gz or \.json \(an array of objects\)"):
        load_qa(other)
    assert issubclass(DataError, ValueError)


def test_optional_fields_default(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "mini.jsonl", [_row(answer_starts=...)])
    (ex,) = load_qa(path)
    assert ex.answer_starts == [None] and ex.title == "" and ex.source == "mini"


def test_local_loaders_set_offline_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    load_qa(_write_jsonl(tmp_path / "ok.jsonl", [_row()]))
    assert os.environ["HF_DATASETS_OFFLINE"] == "1" and os.environ["HF_HUB_OFFLINE"] == "1"


# ----------------------------------------------------------------------------- shipped data


def test_load_vendored_nq_with_limit() -> None:
    examples = load_qa(DATASETS["nq"][0], limit=5)
    assert len(examples) == 5
    with gzip.open(DATASETS["nq"][0], "rt", encoding="utf-8") as f:
        first_ids = [json.loads(next(f))["id"] for _ in range(5)]
    assert [e.id for e in examples] == first_ids  # first N rows in file order
    for ex in examples:
        assert isinstance(ex, dspy.Example)
        assert set(ex.keys()) == set(QA_FIELDS)
        assert set(ex.inputs().keys()) == {"question", "context"}
        assert ex.source == "nq" and ex.answers and all(isinstance(a, str) for a in ex.answers)
        for a, s in zip(ex.answers, ex.answer_starts, strict=True):
            assert ex.context[s : s + len(a)] == a
    assert load_qa(DATASETS["nq"][0], limit=3, source="squad") == []


@pytest.mark.parametrize("filename", sorted(MANIFEST))
def test_content_sha256_matches_manifest(filename: str) -> None:
    path = DATA_DIR / filename
    assert content_sha256(path) == MANIFEST[filename]["sha256"]
    opener = gzip.open if filename.endswith(".gz") else open
    with opener(path, "rb") as f:
        assert sum(1 for _ in f) == MANIFEST[filename]["lines"]


def test_no_realtimeqa_file_is_shipped() -> None:
    assert not [p.name for p in DATA_DIR.iterdir() if "realtime" in p.name.lower()]


def test_arc_loader_answer_matches_answer_key() -> None:
    examples = load_multiple_choice(DATASETS["arc_challenge"][0])
    assert len(examples) == MANIFEST["arc_challenge_test.jsonl"]["lines"]
    for ex in examples:
        by_label = {c["label"]: c["text"] for c in ex.choices}
        assert ex.answer == by_label[ex.answer_key]
        assert ex.options == [c["text"] for c in ex.choices] and ex.choice_labels == list(by_label)
        assert ex.source == "arc_challenge"
    assert set(examples[0].inputs().keys()) == {"question", "options"}
    assert len(load_multiple_choice(DATASETS["arc_challenge_validation"][0], limit=7)) == 7


def test_arc_bad_answer_key(tmp_path: Path) -> None:
    row = {"id": "x", "question": "q?", "choices": [{"label": "A", "text": "a"}, {"label": "B", "text": "b"}]}
    path = _write_jsonl(tmp_path / "arc.jsonl", [json.dumps({**row, "answerKey": "E"})])
    with pytest.raises(DataError, match=r"arc\.jsonl:1: field 'answerKey': 'E' is not one of"):
        load_multiple_choice(path)


def test_passages_have_no_realtimeqa_dpr() -> None:
    ds = load_passages(DATASETS["wiki_passages"][0])
    assert ds.column_names == ["id", "title", "text", "origin"]
    assert ds.num_rows == MANIFEST["wiki_passages.jsonl.gz"]["lines"]
    assert "realtimeqa_dpr" not in set(ds["origin"])


def test_passages_exclude_origins(tmp_path: Path) -> None:
    rows = [
        json.dumps({"id": "a", "title": "T", "text": "some text", "origin": "keep"}),
        json.dumps({"id": "b", "title": "T", "text": "other text", "origin": "realtimeqa_dpr"}),
    ]
    ds = load_passages(_write_jsonl(tmp_path / "p.jsonl", rows), exclude_origins={"realtimeqa_dpr"})
    assert ds["id"] == ["a"]


# ----------------------------------------------------------------------------- MRQA and hub rows


def test_mrqa_fixture() -> None:
    examples = load_mrqa(FIXTURES / "mrqa_sample.jsonl")
    assert [e.id for e in examples] == [f"a1f000000000000000000000000000{i}" for i in (1, 2, 3)]
    for ex in examples:
        assert set(ex.keys()) == set(QA_FIELDS) and ex.source == "newsqa" and ex.title == ""
        for a, s in zip(ex.answers, ex.answer_starts, strict=True):
            assert ex.context[s : s + len(a)] == a  # inclusive MRQA spans converted
    assert examples[0].answers == ["the mayor, Dana Whitfield", "Dana Whitfield"]
    assert examples[2].answers == ["the Ashby River"]  # detected answers win over MRQA "answers"
    assert [e.id for e in load_mrqa(FIXTURES / "mrqa_sample.jsonl", limit=1)] == [examples[0].id]


def test_mrqa_requires_header(tmp_path: Path) -> None:
    lines = (FIXTURES / "mrqa_sample.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    with pytest.raises(DataError, match=r"nohead\.jsonl:1: field 'header'"):
        load_mrqa(_write_jsonl(tmp_path / "nohead.jsonl", lines))


def test_mrqa_hub_row_mapping() -> None:
    context = "The bridge opened in 1932 and was painted red in 1950 by the city."
    row = {
        "subset": "NaturalQuestionsShort",
        "context": context,
        "qid": "h1",
        "question": " When did the bridge open? ",
        "answers": ["1932", "in 1932"],
        # Arrow's form of a sequence of structs: a dict of lists
        "detected_answers": {
            "text": ["1932"],
            "char_spans": [{"start": [21], "end": [24]}],
            "token_spans": [{"start": [4], "end": [4]}],
        },
    }
    rec = mrqa_hub_row_to_record(row)
    assert rec == {
        "id": "h1",
        "question": "When did the bridge open?",
        "context": context,
        "answers": ["1932"],
        "answer_starts": [21],
        "title": "",
        "source": "naturalquestionsshort",
    }
    no_detected = mrqa_hub_row_to_record({**row, "detected_answers": {"text": [], "char_spans": []}})
    assert no_detected["answers"] == ["1932", "in 1932"] and no_detected["answer_starts"] == [None, None]
    with pytest.raises(DataError, match=r"field 'qid': missing"):
        mrqa_hub_row_to_record({k: v for k, v in row.items() if k != "qid"}, "hub row 3")


def test_arc_hub_row_mapping() -> None:
    row = {
        "id": "Mercury_1",
        "question": "Which is a metal?",
        "choices": {"text": ["wood", "iron", "glass"], "label": ["A", "B", "C"]},
        "answerKey": "B",
    }
    rec = arc_hub_row_to_record(row)
    assert rec["choices"][1] == {"label": "B", "text": "iron"} and rec["answer_key"] == "B"
    assert mc_example(rec).answer == "iron"


def test_hub_loader_does_not_set_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [
        {
            "subset": "SQuAD",
            "context": "Paris is the capital of France, a country in Europe.",
            "qid": "s1",
            "question": "Capital of France?",
            "answers": ["Paris"],
            "detected_answers": {"text": ["Paris"], "char_spans": [{"start": [0], "end": [4]}]},
        },
        {
            "subset": "HotpotQA",
            "context": "Rome is in Italy.",
            "qid": "h1",
            "question": "Where is Rome?",
            "answers": ["Italy"],
            "detected_answers": {"text": [], "char_spans": []},
        },
    ]

    class FakeDatasets:
        @staticmethod
        def load_dataset(name, split=None, revision=None, streaming=False):
            return rows

    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "_hub_datasets", lambda: FakeDatasets)
    examples = hub.load_qa_from_hub(subset="squad")
    assert [e.id for e in examples] == ["s1"] and examples[0].source == "squad"
    assert "HF_DATASETS_OFFLINE" not in os.environ and "HF_HUB_OFFLINE" not in os.environ


def test_arc_hub_loader_maps_rows_and_names_the_bad_one(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [
        {"id": f"Mercury_{i}", "question": "Which is a metal?", "answerKey": "B"}
        | {"choices": {"text": ["wood", "iron"], "label": ["A", "B"]}}
        for i in range(3)
    ]
    asked = []

    class FakeDatasets:
        @staticmethod
        def load_dataset(name, config, split=None, revision=None):
            asked.append((name, config, split, revision))
            return rows

    monkeypatch.setattr(hub, "_hub_datasets", lambda: FakeDatasets)
    examples = hub.load_arc_from_hub(config="ARC-Easy", limit=2, revision="abc123")
    assert asked == [("allenai/ai2_arc", "ARC-Easy", "test", "abc123")]
    assert [e.id for e in examples] == ["Mercury_0", "Mercury_1"]
    assert examples[0].answer == "iron" and examples[0].source == "arc_easy" and examples[0].options == ["wood", "iron"]
    rows[0]["answerKey"] = "C"
    with pytest.raises(DataError, match=r"^hub:allenai/ai2_arc/ARC-Easy\[test\] row 0: field 'answerKey'"):
        hub.load_arc_from_hub(config="ARC-Easy")


# ----------------------------------------------------------------------------- registry


def test_resolve_unknown_name_suggests() -> None:
    with pytest.raises(UnknownDatasetError) as err:
        resolve_dataset("nqq")
    assert "did you mean" in str(err.value) and "'nq'" in str(err.value)


def test_resolve_name_and_path() -> None:
    spec = resolve_dataset("nq")
    assert spec.path == DATA_DIR / "nq.jsonl.gz" and spec.loader is load_qa
    spec = resolve_dataset(str(FIXTURES / "mrqa_sample.jsonl"))
    assert spec.loader is load_mrqa and spec.name == "mrqa_sample"
    assert resolve_dataset(DATA_DIR / "arc_challenge_test.jsonl").loader is load_multiple_choice
    for name, (path, _) in DATASETS.items():
        assert path.is_file(), name


# ----------------------------------------------------------------------------- filters

LONG_CONTEXT = "The actress Lea Thompson , an American , was born in 1961 in Minnesota and moved in 1990 ."


def _ex(answers, starts=None, question="who is she", context=LONG_CONTEXT, id="x") -> dspy.Example:
    fields = {"id": id, "question": question, "context": context, "answers": list(answers)}
    if starts is not None:
        fields["answer_starts"] = list(starts)
    return dspy.Example(**fields).with_inputs("question", "context")


def _only(counts: dict[str, int], **nonzero: int) -> None:
    assert tuple(counts) == COUNT_KEYS
    expected = dict.fromkeys(COUNT_KEYS, 0) | nonzero
    assert counts == expected


def test_filter_duplicates_normalise_case_and_whitespace() -> None:
    a = _ex(["Lea Thompson"], id="a")
    b = _ex(["lea  thompson"], question="Who  is SHE", context=LONG_CONTEXT.upper(), id="b")
    c = _ex(["Lea Thompson"], question="who was she", id="c")
    kept, counts = apply_reeval_filters([a, b, c])
    assert [e.id for e in kept] == ["a", "c"]
    _only(counts, input=3, duplicate=1, kept=2)


def test_filter_short_evidence() -> None:
    nine = "one two three four five six seven eight nine"
    kept, counts = apply_reeval_filters(
        [_ex(["one"], context=nine, id="9"), _ex(["one"], context=nine + " ten", id="10")]
    )
    assert [e.id for e in kept] == ["10"]
    _only(counts, input=2, short_evidence=1, kept=1)
    kept, counts = apply_reeval_filters([_ex(["one"], context=nine)], min_evidence_words=9)
    assert counts["kept"] == 1


def test_filter_long_answers() -> None:
    only_long = _ex(["born in 1961 in Minnesota and"], id="long")
    mixed = _ex(["The actress Lea Thompson , an", "1961"], starts=[0, 53], id="mixed")
    kept, counts = apply_reeval_filters([only_long, mixed])
    assert [e.id for e in kept] == ["mixed"]
    assert kept[0].answers == ["1961"] and kept[0].answer_starts == [53]  # offsets stay aligned
    _only(counts, input=2, long_answer=1, kept=1)


def test_filter_collapses_contained_answers_to_longest() -> None:
    ex = _ex(["Thompson", "Lea Thompson", "lea thompson"], starts=[16, 12, 12])
    kept, counts = apply_reeval_filters([ex])
    assert kept[0].answers == ["Lea Thompson"] and kept[0].answer_starts == [12]
    _only(counts, input=1, collapsed_multi_answer=1, kept=1)
    assert ex.answers == ["Thompson", "Lea Thompson", "lea thompson"]  # input not modified


def test_filter_collapses_answers_whose_spans_overlap() -> None:
    # neither contains the other, but the spans share "Thompson"
    ex = _ex(["Lea Thompson", "Thompson , an"], starts=[12, 16])
    kept, counts = apply_reeval_filters([ex])
    assert kept[0].answers == ["Thompson , an"] and kept[0].answer_starts == [16]
    _only(counts, input=1, collapsed_multi_answer=1, kept=1)


def test_filter_drops_non_overlapping_answers() -> None:
    dates = _ex(["1961", "1990"], starts=[53, 84], id="dates")
    no_offsets = _ex(["1", "1990"], id="substring-only")  # "1" is inside "1990" only as characters
    kept, counts = apply_reeval_filters([dates, no_offsets])
    assert kept == []
    _only(counts, input=2, non_overlapping_answers=2)
    assert answers_overlap("$53.7 billion", "53.7 billion") and not answers_overlap("53", "53.7 billion")


def test_filter_counts_on_mixed_input_sum_up() -> None:
    examples = [
        _ex(["Lea Thompson"], id="keep"),
        _ex(["Lea Thompson"], id="dup"),
        _ex(["x"], context="too short", id="short"),
        _ex(["a b c d e f"], id="long"),
        _ex(["1961", "Minnesota"], id="ambiguous", question="q2"),
        _ex(["Lea Thompson", "Thompson"], id="collapse", question="q3"),
    ]
    kept, counts = apply_reeval_filters(examples)
    assert [e.id for e in kept] == ["keep", "collapse"]
    _only(
        counts,
        input=6,
        duplicate=1,
        short_evidence=1,
        long_answer=1,
        non_overlapping_answers=1,
        collapsed_multi_answer=1,
        kept=2,
    )
    drops = ("duplicate", "short_evidence", "long_answer", "non_overlapping_answers")
    assert counts["kept"] == counts["input"] - sum(counts[k] for k in drops)
