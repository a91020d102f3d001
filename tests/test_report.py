"""The evaluation report: files written, sections shown, plots embedded, adversarial text escaped, table numbers
shown."""

import json
import re

import pytest

from experiments.report import write_report
from metrics import score_records

SCRIPT = "<script>alert('x')</script>"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SECTIONS = [
    "<h2>Run</h2>",
    "<h3>Records</h3>",
    "<h2>Accuracy before and after perturbation</h2>",
    "<h3>Paired drop (same seeds, original − perturbed)</h3>",
    "<h3>Normalised accuracy (perturbed, over seeds the target got right originally)</h3>",
    "<h2>All metrics</h2>",
    "<h2>Transfer: generator × target</h2>",
    "<h2>Rank changes</h2>",
    "<h2>Breakdowns</h2>",
    "<h3>By source</h3>",
    "<h3>By answer position in the context</h3>",
    "<h2>Task instruction on original contexts</h2>",
    "<h2>Errors</h2>",
    "<h2>Sample of cases</h2>",
]


def _rec(target, seed, variant, ok, **kw):
    row = {
        "case_id": seed if variant == "original" else f"{seed}:swap",
        "seed_id": seed,
        "variant": variant,
        "task": "answer_swap",
        "generator": "qwen2.5-1.5b" if variant == "perturbed" else "",
        "target": target,
        "setting": "open_book",
        "decoding": "greedy",
        "source": "nq",
        "question": f"who wrote play {seed}",
        "context": "Hamlet is a tragedy by William Shakespeare."
        if variant == "original"
        else "Hamlet is a tragedy by Christopher Marlowe.",
        "answers": ["William Shakespeare"] if variant == "original" else ["Christopher Marlowe"],
        "prediction": ("William Shakespeare" if variant == "original" else "Christopher Marlowe")
        if ok
        else "Ben Jonson",
        "status": "ok",
        "answer_position": "last",
    }
    row.update(kw)
    return row


@pytest.fixture
def records():
    """Hand-checked: qwen original 3/3, perturbed 1/3; smol original 2/3, perturbed 0/2 + 1 error."""
    return [
        _rec("qwen2.5-1.5b", "s1", "original", True),
        _rec("qwen2.5-1.5b", "s2", "original", True),
        _rec("qwen2.5-1.5b", "s3", "original", True, question=f"who {SCRIPT}"),
        _rec("qwen2.5-1.5b", "s1", "perturbed", True),
        _rec("qwen2.5-1.5b", "s2", "perturbed", False, context=f"Evil {SCRIPT} context"),
        _rec("qwen2.5-1.5b", "s3", "perturbed", False, prediction=SCRIPT),
        _rec("smollm2-135m", "s1", "original", True),
        _rec("smollm2-135m", "s2", "original", True),
        _rec("smollm2-135m", "s3", "original", False),
        _rec("smollm2-135m", "s1", "perturbed", False),
        _rec("smollm2-135m", "s2", "perturbed", False, prediction=None, status="error:parse"),
        _rec("smollm2-135m", "s3", "perturbed", False),
    ]


def test_report_writes_self_contained_html_and_pngs(tmp_path, records):
    run_info = {"run_id": f"run-{SCRIPT}", "nli_backend": "fake-nli <b>", "targets": ["a", "b"]}
    path = write_report(score_records(records), tmp_path / "out", title=f"Eval {SCRIPT}", run_info=run_info)
    assert path == tmp_path / "out" / "report.html"
    page = path.read_text(encoding="utf-8")
    for name in ("accuracy.png", "transfer.png", "ranks.png"):
        assert (tmp_path / "out" / name).read_bytes().startswith(PNG_MAGIC)
    assert page.count('src="data:image/png;base64,') == 3
    # every section, in order, in the page and in its Markdown twin
    at = [page.find(heading) for heading in SECTIONS]
    assert -1 not in at and at == sorted(at), dict(zip(SECTIONS, at, strict=True))
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    for heading in SECTIONS:
        assert re.sub(r"<h(\d)>(.*)</h\d>", lambda m: "#" * int(m[1]) + " " + m[2], heading) in markdown
    assert all(f"]({name})" in markdown for name in ("accuracy.png", "transfer.png", "ranks.png"))
    assert 'src="http' not in page and "<link" not in page  # nothing fetched from elsewhere

    # Adversarial text from data, models and run info is escaped everywhere.
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert "Evil &lt;script&gt;" in page  # context
    assert "who &lt;script&gt;" in page  # question
    assert "fake-nli &lt;b&gt;" in page  # the stated NLI backend, escaped

    # Main table numbers (hand-checked above).
    def row(*cells):
        return re.search(r"<tr>" + "".join(rf"<td>{re.escape(c)}</td>" for c in cells), page)

    assert row("qwen2.5-1.5b", "open_book", "greedy", "original", "1.000")
    assert row("qwen2.5-1.5b", "open_book", "greedy", "perturbed", "0.333")
    assert row("smollm2-135m", "open_book", "greedy", "original", "0.667")
    smol = row("smollm2-135m", "open_book", "greedy", "perturbed", "0.000")
    assert smol and "<td>2</td><td>1</td></tr>" in page[smol.end() : smol.end() + 200]
    # Paired drop for qwen: 1.000 -> 0.333, drop 0.667 over 3 seeds.
    assert row("answer_swap", "qwen2.5-1.5b", "open_book", "greedy", "1.000", "0.333", "0.667")
    # Self-attack cell of the transfer table.
    assert row("qwen2.5-1.5b", "qwen2.5-1.5b", "0.333")
    assert "<td>error: parse</td>" in page  # the errored case in the sample
    assert "<td>wrong: &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</td>" in page  # a hostile answer, escaped

    tables = json.loads((tmp_path / "out" / "report_tables.json").read_text())
    assert tables["transfer"]["diagonal"] == ["qwen2.5-1.5b"]


def test_report_scores_raw_records_and_handles_no_perturbed_cases(tmp_path, records):
    originals = [r for r in records if r["variant"] == "original"]
    path = write_report(originals, tmp_path, title="originals only", run_info={})
    page = path.read_text(encoding="utf-8")
    assert (tmp_path / "accuracy.png").exists() and not (tmp_path / "transfer.png").exists()
    assert "No generated perturbed cases." in page and "No perturbed cases." in page
    assert "no NLI model was given" in page
