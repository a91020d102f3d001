"""Properties of the data loaders and ReEval's seed filters on hostile input: arbitrary Unicode (lone
surrogates included), huge fields, wrong types, NaN, nested objects, byte-order marks, CRLF, truncated gzip.
A loader either returns rows or raises a DataError that names the file (and the line and field of a bad
row), never anything else. Cases the properties found are kept as explicit examples."""

from __future__ import annotations

import gzip
import json
import math
import re
import tempfile
from pathlib import Path

import dspy
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from experiments.data.errors import DataError
from experiments.data.loaders import load_mrqa, load_multiple_choice, load_passages, load_qa
from experiments.data.records import validate_qa_record
from experiments.data.registry import sniff_loader
from experiments.filters import COUNT_KEYS, apply_reeval_filters, word_count

# Files are written in one folder per test session: function-scoped tmp_path does not mix with @given.
FOLDER = Path(tempfile.mkdtemp(prefix="reeval-properties-"))
CONTEXT = "The report was written by Ada Lovelace in the year 1843 for a journal of science."
LOADERS = [load_qa, load_mrqa, load_multiple_choice, load_passages, sniff_loader]
# Huge fields and files make slow examples on purpose.
SLOW_OK = settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
)

# Every code point, lone surrogates included (JSON's "\ud800" escape reads as one).
any_char = st.characters(exclude_categories=())
any_text = st.text(any_char, max_size=30)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | any_text
    | st.text(max_size=3).map(lambda s: s * 20_000)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
some_text = st.text(any_char, min_size=1, max_size=30)
qa_rows = st.fixed_dictionaries(
    {},
    optional={
        "id": some_text | json_values,
        "question": some_text | json_values,
        "context": some_text | json_values,
        "answers": st.lists(some_text, max_size=3) | json_values,
        "answer_starts": st.lists(
            st.none() | st.integers(-2, 60) | st.floats(allow_nan=True) | st.integers(), max_size=3
        )
        | json_values,
        "title": some_text | json_values,
        "source": some_text | json_values,
        "choices": json_values,
        "answerKey": json_values,
        "header": json_values,
        "qas": json_values,
        "origin": some_text | json_values,
        "text": some_text | json_values,
    },
)
# Lines json.dumps cannot write: nesting deeper than the recursion limit, numbers longer than int() reads.
raw_lines = st.integers(1_000, 30_000).map(lambda n: b"[" * n + b"]" * n) | st.integers(4_301, 6_000).map(
    lambda n: b'{"id": "a", "answer_starts": [' + b"7" * n + b"]}"
)


def _line(row: object, ascii_only: bool) -> bytes:
    # allow_nan: NaN and Infinity are what Python's json writes and reads, so files made in Python hold them.
    return json.dumps(row, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@st.composite
def hostile_files(draw) -> tuple[bytes, bool, int]:
    """(bytes as stored, gzip or not, lines before compression)."""
    lines = [_line(row, draw(st.booleans())) for row in draw(st.lists(qa_rows | json_values, max_size=4))]
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.binary(max_size=20) | raw_lines))
    eol = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    data = eol.join(lines) + (eol if draw(st.booleans()) else b"")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    lines_in_file = data.count(b"\n") + 1
    compressed = draw(st.booleans())
    if compressed:
        data = gzip.compress(data, mtime=0)
        if draw(st.booleans()):
            data = data[: draw(st.integers(0, len(data)))]
    return data, compressed, lines_in_file


def _write(data: bytes, compressed: bool, *_) -> Path:
    path = FOLDER / ("rows.jsonl.gz" if compressed else "rows.jsonl")
    path.write_bytes(data)
    return path


def _row(rid: str = "q1", **fields) -> dict:
    return {"id": rid, "question": "Who wrote the report?", "context": CONTEXT, "answers": ["Ada Lovelace"], **fields}


@SLOW_OK
@given(hostile_files())
# Found: a lone surrogate passed validation and crashed Arrow (UnicodeEncodeError).
@example((_line(_row(id="a\ud800"), True) + b"\n", False, 2))
@example((_line(_row(answers=["Ada", "x\udfff"]), True) + b"\n", False, 2))
# Found: Python refuses a JSON integer of more than 4,300 digits with a bare ValueError.
@example((b'{"id": "a", "answer_starts": [' + b"1" * 5000 + b"]}\n", False, 2))
# Found: deep nesting raised RecursionError.
@example((b"[" * 100_000 + b"]" * 100_000 + b"\n", False, 2))
@example((gzip.compress(b'{"id": "a"}\n' * 50, mtime=0)[:30], True, 51))
def test_a_loader_returns_rows_or_a_data_error_naming_the_file(file):
    path = _write(*file)
    for loader in LOADERS:
        try:
            loader(path)
        except DataError as exc:
            message = str(exc)
            assert message.startswith(f"{path}"), message
            line = re.match(re.escape(str(path)) + r":(\d+):", message)
            if line:  # a row's error names a line the file has
                assert 1 <= int(line.group(1)) <= file[2], message


unique_rows = st.lists(
    st.tuples(
        st.text(any_char.filter(lambda c: not 0xD800 <= ord(c) <= 0xDFFF), min_size=1, max_size=20).filter(str.strip),
        st.text(min_size=1, max_size=3_000).filter(str.strip),
    ),
    min_size=1,
    max_size=5,
    unique_by=lambda t: t[0],
)


@SLOW_OK
@given(unique_rows, st.booleans(), st.sampled_from(["\n", "\r\n"]), st.booleans(), st.booleans())
# Found: a file opening with a byte-order mark (as Windows editors write it) was refused as invalid JSON.
@example([("q1", "Ada Lovelace")], True, "\r\n", False, False)
def test_valid_rows_load_unchanged_whatever_the_encoding(rows, bom, eol, compressed, ascii_only):
    records = [_row(rid, context=f"{CONTEXT} {answer}", answers=[answer]) for rid, answer in rows]
    text = eol.join(json.dumps(r, ensure_ascii=ascii_only) for r in records) + eol
    data = ("\ufeff" if bom else "").encode() + text.encode("utf-8")
    path = _write(gzip.compress(data, mtime=0) if compressed else data, compressed)
    loaded = load_qa(path)
    assert [(e.id, e.question, e.context, e.answers) for e in loaded] == [
        (r["id"], r["question"], r["context"], r["answers"]) for r in records
    ]


@given(qa_rows)
# Found: an offset too long for int-to-str conversion crashed the error message meant to report it.
@example(_row(answer_starts=[10**5000]))
def test_validating_any_object_gives_a_qa_record_or_names_the_field(obj):
    try:
        record = validate_qa_record(obj, "f.jsonl:7")
    except DataError as exc:
        assert re.match(r"f\.jsonl:7: field '[\w\[\]]+': ", str(exc)), str(exc)
        return
    assert record["answers"] and all(isinstance(a, str) and a.strip() for a in record["answers"])
    assert len(record["answer_starts"]) == len(record["answers"])
    for start, answer in zip(record["answer_starts"], record["answers"], strict=True):
        assert start is None or record["context"][start : start + len(answer)] == answer


# -- ReEval's filters -----------------------------------------------------------------------------

words = st.sampled_from("Ada Lovelace the report 1843 wrote journal of science a an - , . 's n't".split()) | some_text
phrases = st.lists(words, min_size=1, max_size=8).map(" ".join).filter(str.strip)
garbage_starts = st.none() | st.integers(-5, 10**30) | st.floats(allow_nan=True) | st.text(max_size=3) | st.booleans()


@st.composite
def seed_examples(draw) -> list[dspy.Example]:
    out = []
    for i in range(draw(st.integers(0, 6))):
        context = draw(phrases)
        answers = draw(st.lists(phrases, min_size=1, max_size=3))
        if draw(st.booleans()):  # offsets that point at the answer, as validated loaders give them
            starts = [context.find(a) if a in context else None for a in answers]
        else:  # or anything: the filters must not trust them
            starts = draw(st.lists(garbage_starts, max_size=4) | garbage_starts)
        question = draw(phrases) if i == 0 or draw(st.booleans()) else out[-1].question  # duplicates too
        out.append(
            dspy.Example(
                id=f"q{i}", question=question, context=context, answers=answers, answer_starts=starts
            ).with_inputs("question", "context")
        )
    return out


@given(seed_examples(), st.integers(0, 6), st.integers(1, 4), st.none() | st.integers(1, 20))
@example(
    [dspy.Example(id="q0", question="q", context="a b c", answers=["a", "b"], answer_starts=[math.nan, "0"])],
    0,
    5,
    None,
)
def test_filters_keep_a_subset_in_order_and_count_every_drop(examples, min_words, max_answer, max_evidence):
    before = [(e.id, list(e.answers), e.get("answer_starts")) for e in examples]
    kept, counts = apply_reeval_filters(
        examples, min_evidence_words=min_words, max_answer_words=max_answer, max_evidence_words=max_evidence
    )
    assert [(e.id, list(e.answers), e.get("answer_starts")) for e in examples] == before  # inputs untouched
    assert set(COUNT_KEYS) <= set(counts)
    drops = counts["duplicate"] + counts["short_evidence"] + counts["long_answer"] + counts["non_overlapping_answers"]
    assert counts["input"] == len(examples) and counts["kept"] == len(kept)
    assert counts["input"] == counts["kept"] + drops + counts.get("long_evidence", 0)
    order = {e.id: i for i, e in enumerate(examples)}
    assert [order[e.id] for e in kept] == sorted(order[e.id] for e in kept)
    originals = {e.id: e for e in examples}
    for e in kept:
        assert len(e.answers) == 1 and e.answers[0] in originals[e.id].answers  # several are collapsed to one
        assert len(e.answer_starts) == len(e.answers)
        assert all(word_count(a) <= max_answer for a in e.answers)
        assert word_count(e.context) >= min_words
        assert max_evidence is None or word_count(e.context) <= max_evidence
