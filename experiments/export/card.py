"""`README.md`: the Hugging Face dataset card of an export. Its YAML header holds what the hub indexes (licence,
task categories, size, how the annotations were made, the source data sets, one config per case set); its
text says what the cases are and how far they can be trusted: generator, pivot and judge, commit, seeds and
split, counts by status, the validity figure with its interval and who reviewed, and the targets' accuracy.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from experiments import task_registry
from experiments.export.licence import CHANGES_HERE, HUB_SOURCES, SourceLicence, attribution_lines
from experiments.export.provenance import Provenance
from experiments.export.rows import FIELDS
from experiments.export.selection import CaseSet, status_kind

# A task the registry does not know (a case file of a removed generator) still gets a card.
UNKNOWN_PAPER = "reeval"


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def task_text(task: str) -> str:
    entry = task_registry.find(task)
    return entry.card_text if entry and entry.card_text else f"{task} cases"


def paper(task: str) -> str:
    entry = task_registry.find(task)
    return entry.paper if entry and entry.paper else UNKNOWN_PAPER


def _arxiv(task: str) -> str:
    entry = task_registry.find(task)
    return entry.arxiv if entry else ""


def _multiple_choice(task: str) -> bool:
    entry = task_registry.find(task)
    return entry is not None and entry.answer == "choice"


def header(
    sets: list[CaseSet], licence: str, licences: list[SourceLicence], parquet: dict[str, str], pretty: str
) -> dict[str, Any]:
    tasks = sorted({s.task for s in sets})
    configs = []
    for i, s in enumerate(sets):
        config = {"config_name": s.name, "data_files": [{"split": "test", "path": parquet[s.name]}]}
        if i == 0:
            config["default"] = True
        configs.append(config)
    arxiv = sorted({_arxiv(t) for t in tasks} - {""})
    task_ids = ["multiple-choice-qa", "open-domain-qa"] if any(map(_multiple_choice, tasks)) else ["open-domain-qa"]
    return {
        "pretty_name": pretty,
        "license": licence,
        "language": ["en"],
        "task_categories": ["question-answering"],
        "task_ids": task_ids,
        "size_categories": [size_category(sum(len(s.records) for s in sets))],
        "annotations_creators": ["machine-generated"],
        "language_creators": ["found", "machine-generated"],
        "multilinguality": ["monolingual"],
        "source_datasets": sorted({f"extended|{HUB_SOURCES.get(lic.source, lic.source)}" for lic in licences}),
        "tags": ["faithfulness", "adversarial", "retrieval-augmented-generation", "reeval", *tasks]
        + [f"arxiv:{a}" for a in arxiv],
        "configs": configs,
    }


def _pct(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.0f}%"


def _counts(s: CaseSet) -> str:
    kinds: dict[str, int] = {}
    for status, n in s.status_counts.items():
        kinds[status_kind(status)] = kinds.get(status_kind(status), 0) + n
    return ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))


def selected_valid(choice: str) -> bool:
    return choice == "reviewed-valid"


def without_context(s: CaseSet) -> int:
    """Rows of `--cases all` with no passage: a seed the pivot was not asked to perturb, a proposal refused."""
    return sum(1 for r in s.records if not str(r.get("context") or "").strip())


def _exported(s: CaseSet, choice: str) -> str:
    if selected_valid(choice):
        return f"{len(s.records)}, each read valid by the reviewers' majority (selected for that)"
    empty = without_context(s)
    if choice == "all" and empty:
        return f"{len(s.records)}: {len(s.records) - empty} with a passage, {empty} without one (see `status`)"
    return str(len(s.records))


def _set_section(s: CaseSet, p: Provenance, choice: str) -> list[str]:
    lines = [
        f"### `{s.name}`: {len(s.records)} cases",
        "",
        f"{task_text(s.task)} ({paper(s.task)}).",
        "",
        "| | |",
        "|---|---|",
        f"| generator version | {', '.join(f'`{v}`' for v in p.generator_versions) or '—'} |",
        f"| pivot (writes the perturbation) | {', '.join(f'`{x}`' for x in p.pivots)} |",
        f"| judge | {p.judge} |",
        f"| commit | `{p.commit}` |",
        f"| source rows | `{p.source}`, split `{p.split}`, {p.rows} |",
        f"| seeds | {', '.join(f'{k} {v}' for k, v in p.seeds.items()) or '—'} |",
        f"| cases made, by status | {_counts(s)} |",
        f"| exported (`--cases {choice}`) | {_exported(s, choice)} |",
        f"| reviewed by | {p.reviewed_by} |",
    ]
    # Of the run's accepted cases: rows chosen as read valid are not a sample of them, so the figure is not theirs.
    whose = (
        "the run's accepted cases (not of these rows: each was chosen as read valid)"
        if selected_valid(choice)
        else "accepted cases"
    )
    if p.valid_share is not None:
        share = p.valid_share
        lines.append(
            f"| valid share of {whose} | **{_pct(share['estimate'])}** [{_pct(share['low'])}, "
            f"{_pct(share['high'])}] (95%, prediction-powered, {int(share['n_reviewed'])} reviewed) |"
        )
    else:
        lines.append(f"| valid share of {whose} | not measured: no reviewed sample |")
    lines += ["", f"Validity: {p.validity}", ""]
    if len(s.status_counts) > 1:
        lines += ["| status | cases |", "|---|---:|"]
        lines += [f"| `{status}` | {n} |" for status, n in s.status_counts.items()]
        lines.append("")
    if p.accuracy:
        lines += [
            "Accuracy of the run's targets on the exported cases (perturbed) and on their source rows (original), "
            "95% Wilson intervals:",
            "",
            "| target | setting | decoding | variant | accuracy | n |",
            "|---|---|---|---|---|---:|",
        ]
        lines += [
            f"| `{r['target']}` | {r['setting']} | {r['decoding']} | {r['variant']} | {_pct(r['accuracy'])} "
            f"[{_pct(r['low'])}, {_pct(r['high'])}] | {r['n']} |"
            for r in p.accuracy
        ]
        lines.append("")
    else:
        lines += ["No target was evaluated on these cases in this run.", ""]
    return lines


def render_card(
    sets: list[CaseSet],
    provenance: dict[str, Provenance],
    licence: str,
    licences: list[SourceLicence],
    parquet: dict[str, str],
    choice: str,
    run_id: str,
    pretty: str,
) -> str:
    meta = header(sets, licence, licences, parquet, pretty)
    total = sum(len(s.records) for s in sets)
    empty = sum(without_context(s) for s in sets) if choice == "all" else 0
    kept = {
        "accepted": "the cases the run accepted",
        "reviewed-valid": "only accepted cases a reviewers' majority read valid, selected for that, so every row "
        "here was read valid and the valid share below is the run's, not a measure of these rows",
        "all": "every case the run made, rejected and errored ones included (see `status`)",
    }[choice]
    # A row of `--cases all` without a passage (a seed not selected, a proposal refused) is no adversarial case.
    what = (
        f"{total} rows: {total - empty} adversarial open-book question-answering cases and {empty} rows without "
        "a passage (seeds the pivot was not asked to perturb, proposals refused before a passage was written)"
        if empty
        else f"{total} adversarial open-book question-answering cases"
    )
    lines = [
        "---",
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000).rstrip(),
        "---",
        "",
        f"# {pretty}",
        "",
        f"{what}, made by "
        "reeval from public QA rows, to test whether a model answers from the passage it "
        f"is given rather than from memory. Exported from run `{run_id}`: {kept}. One config per case set, "
        "each a `test` split.",
        "",
        "The cases are **machine-generated**: a language model (the pivot) rewrote each passage, string checks "
        "and (where named) a judge model decided which to keep. Not every accepted case is valid: the validity "
        "line of each set says how many were read valid and by whom.",
        "",
        "## Case sets",
        "",
    ]
    for s in sets:
        lines += _set_section(s, provenance[s.name], choice)
    lines += ["## Fields", "", "| field | meaning |", "|---|---|"]
    lines += [f"| `{name}` | {text} |" for name, text in FIELDS.items()]
    lines += [
        "",
        "## Load",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'cases = load_dataset("<this folder or hub id>", "{sets[0].name}", split="test")',
        "```",
        "",
        "## Licence and attribution",
        "",
        f"`{licence}`. The cases adapt the source rows below; each source's licence is ShareAlike, so the "
        "cases are shared under it, with its attribution:",
        "",
    ]
    lines += attribution_lines(licences)
    lines += [
        CHANGES_HERE,
        "",
        "## Citation",
        "",
        "The methods are those of " + " and ".join(sorted({paper(s.task) for s in sets})) + ".",
        "",
    ]
    return "\n".join(lines)
