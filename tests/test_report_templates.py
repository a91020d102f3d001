"""The evaluation report on the shared page template: autoescaped everywhere, CSP kept, external rows charted and
sampled."""

import re
from pathlib import Path

from matplotlib.patches import Rectangle

from experiments.report import accuracy_figure, report_tables, write_report
from experiments.report_page import TEMPLATES
from metrics import score_records

SCRIPT = "<script>alert('x')</script>"
CSP = (
    '<meta http-equiv="Content-Security-Policy" '
    "content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">"
)


def external(target, i, ok, **kw):
    """A row of a benchmark file evaluated as given (no original to pair it with)."""
    row = {
        "case_id": f"b{i}",
        "seed_id": f"b{i}",
        "variant": "external",
        "task": "external",
        "generator": "",
        "target": target,
        "setting": "open_book",
        "decoding": "greedy",
        "source": "bench",
        "question": f"capital {i}?",
        "context": f"The capital {i} is Paris.",
        "answers": ["Paris"],
        "prediction": "Paris" if ok else "Lyon",
        "status": "ok",
    }
    row.update(kw)
    return row


def test_templates_never_mark_values_safe():
    for template in Path(TEMPLATES).glob("*.html"):
        text = re.sub(r"\{#.*?#\}", "", template.read_text(), flags=re.DOTALL)  # comments may say "never |safe"
        assert "|safe" not in text.replace(" ", "") and "autoescape false" not in text, template.name


def test_an_unpaired_external_run_is_charted_tabled_and_sampled(tmp_path):
    records = score_records(
        [external("t-a", i, ok=i < 3) for i in range(4)] + [external("t-b", i, ok=True) for i in range(4)]
    )
    tables = report_tables(records)
    bars = [
        p
        for ax in accuracy_figure(tables["accuracy"], "task_correct").axes
        for p in ax.patches
        if isinstance(p, Rectangle)
    ]
    assert sorted(round(b.get_height(), 3) for b in bars) == [0.75, 1.0]  # one bar per target
    page = write_report(records, tmp_path, title="external").read_text()
    assert page.count('src="data:image/png;base64,') == 1 and (tmp_path / "accuracy.png").exists()
    assert "<tr><td>t-a</td><td>open_book</td><td>greedy</td><td>external</td><td>0.750</td>" in page
    assert "Variant <b>external</b>" in page
    assert "No perturbed cases." not in page and "<h3>external · seed b0 · source bench</h3>" in page
    # the sampled seed: its passage under its expected answer, then each target's answer with its verdict
    assert "<tr><td>context</td><td>The capital 0 is Paris.</td></tr>" in page
    assert "<tr><td>t-a</td><td>open_book</td><td>greedy</td><td>right: Paris</td></tr>" in page


def test_every_value_reaching_the_page_is_escaped(tmp_path):
    hostile = [
        external(
            f"t{SCRIPT}",
            0,
            ok=False,
            setting=f"s{SCRIPT}",
            source=f"src{SCRIPT}",
            task="counterfactual",
            answer_label=f"L{SCRIPT}",
            options=[f"opt{SCRIPT}", {"label": f"B{SCRIPT}", "text": f"x{SCRIPT}"}],
            prediction=f'"><img src=x onerror=alert(1)>{SCRIPT}',
        )
    ]
    page = write_report(
        score_records(hostile),
        tmp_path,
        title=SCRIPT,
        run_info={f"k{SCRIPT}": [SCRIPT], "nli_backend": SCRIPT},
        validity={
            "run_id": SCRIPT,
            "statement": SCRIPT,
            "notes": [SCRIPT],
            "rows": [{"figure": SCRIPT, "estimate": 0.5, "note": SCRIPT}],
        },
    ).read_text()
    assert CSP in page
    assert not re.search(r"<script|<img src=x", page, re.IGNORECASE)
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in page  # the prediction, escaped with its quote
    escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
    assert page.count(escaped) > 10
    # each place hostile text reaches: title, run info, NLI backend, validity, tables, options, answer label
    for shown in (
        f"<h1>{escaped}</h1>",
        f"<td>k{escaped}</td>",
        f"<b>{escaped}</b>",
        f"Validity of the cases (run {escaped})",
        f"<td>{escaped}</td><td>0.500</td>",  # the validity figure and its estimate
        f"<td>t{escaped}</td><td>s{escaped}</td>",
        f"A. opt{escaped}; B{escaped}. x{escaped}",
        f"<td>L{escaped}</td>",
        f"<h3>counterfactual · seed b0 · source src{escaped}</h3>",
    ):
        assert shown in page, shown
