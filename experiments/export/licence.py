"""The licence and attribution an export inherits from the data its cases were made from.

Read from the shipped data's own statement, ``data/LICENSE`` (one block per file: ``Licence:``,
``Attribution:``, ``Changes:``), so a card says what that file says. Every shipped source is ShareAlike:
cases adapted from it are shared under the same licence, with its attribution and a note of the changes.
A source the statement does not cover (a file of the user's) is named ``other`` with a warning on the card.

The statement is looked for beside the data the registry reads (under ``REEVAL_HOME`` when it is set) and
then in the source tree's ``data/``: a home moved for runs and MLflow does not move the shipped files'
licences. Every layout carries the notice (:func:`notice`) as ``LICENSE.md``, not only the ``hf`` card.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from experiments import task_registry
from experiments.data.registry import DATA_DIR, DATASETS

# The source tree's data folder: where the statement ships, whatever REEVAL_HOME says.
SHIPPED_DATA_DIR = Path(__file__).resolve().parents[2] / "data"
NOTICE_FILE = "LICENSE.md"

LICENCE_FILE = "LICENSE"
# Hugging Face licence identifiers of the licences data/LICENSE names.
HUB_LICENCES = {"CC BY-SA 3.0": "cc-by-sa-3.0", "CC BY-SA 4.0": "cc-by-sa-4.0"}
LICENCE_URLS = {
    "CC BY-SA 3.0": "https://creativecommons.org/licenses/by-sa/3.0/",
    "CC BY-SA 4.0": "https://creativecommons.org/licenses/by-sa/4.0/",
}
# The public data set each shipped source was cut from, as the hub names it (card `source_datasets`).
HUB_SOURCES = {
    "nq": "google-research-datasets/natural_questions",
    "squad": "rajpurkar/squad",
    "arc_challenge": "allenai/ai2_arc",
    "arc_challenge_validation": "allenai/ai2_arc",
    "wiki_passages": "wikipedia",
}


@dataclass(frozen=True)
class SourceLicence:
    source: str  # registry name, or the file's name for a file of the user's
    licence: str  # "CC BY-SA 3.0", or "" when no statement covers the source
    attribution: str
    changes: str

    @property
    def hub_id(self) -> str:
        return HUB_LICENCES.get(self.licence, "other")

    @property
    def url(self) -> str:
        return LICENCE_URLS.get(self.licence, "")

    @property
    def share_alike(self) -> bool:
        return "SA" in self.licence.split()[1] if self.licence.startswith("CC ") else False


def _blocks(text: str) -> dict[str, dict[str, str]]:
    """File name -> {"Licence", "Attribution", "Changes"}; consecutive file-name lines share one block."""
    out: dict[str, dict[str, str]] = {}
    names: list[str] = []
    current: dict[str, str] | None = None
    key = ""
    for line in text.splitlines():
        if re.fullmatch(r"[\w.-]+\.jsonl(\.gz)?", line.strip()) and not line.startswith(" "):
            if current is not None:
                names = []
            current = None
            names.append(line.strip())
            continue
        if not names:
            continue
        field = re.match(r"\s+(Licence|Attribution|Changes|Per origin)[^:]*:\s*(.*)", line)
        if field:
            if current is None:
                current = {}
                for name in names:
                    out[name] = current
            key = field.group(1)
            current[key] = field.group(2).strip()
        elif current is not None and line.startswith("  ") and line.strip() and key in ("Attribution", "Changes"):
            current[key] = f"{current[key]} {line.strip()}"
    return out


def _statement_blocks(data_dirs: tuple[Path, ...]) -> dict[str, dict[str, str]]:
    """The blocks of every statement found, the first folder's winning for a file both name."""
    blocks: dict[str, dict[str, str]] = {}
    for folder in dict.fromkeys(d.resolve() for d in data_dirs):
        path = folder / LICENCE_FILE
        if path.is_file():
            for name, block in _blocks(path.read_text(encoding="utf-8")).items():
                blocks.setdefault(name, block)
    return blocks


def source_licences(
    source: str, task: str, data_dirs: tuple[Path, ...] = (DATA_DIR, SHIPPED_DATA_DIR)
) -> list[SourceLicence]:
    """What data/LICENSE states for a run's data source and the data sets the task writes into its cases."""
    blocks = _statement_blocks(data_dirs)
    out = []
    entry = task_registry.find(task)
    for name in (source, *(entry.extra_sources if entry else ())):
        file_name = DATASETS[name][0].name if name in DATASETS else Path(name).name
        block = blocks.get(file_name, {})
        licence = block.get("Licence", "").split(" (")[0].strip()
        # A file of the user's is named by its file name: the folder it sits in is this machine's.
        shown = name if name in DATASETS else file_name
        out.append(SourceLicence(shown, licence, block.get("Attribution", ""), block.get("Changes", "")))
    return out


def hub_licence(licences: list[SourceLicence]) -> str:
    """The card's `license`: the sources' own when they agree; the strictest ShareAlike one when they differ
    (CC BY-SA 4.0 material may be adapted under 4.0 only, and 3.0 allows a later version); `other` when
    any source has no statement."""
    ids = {lic.hub_id for lic in licences}
    if "other" in ids or not ids:
        return "other"
    return sorted(ids)[-1]


def attribution_lines(licences: list[SourceLicence]) -> list[str]:
    """One Markdown item per source: its licence, where to read it, its attribution and the changes made to it."""
    return [
        f"- `{lic.source}`: {lic.licence or 'no licence statement found: check before publishing'}"
        + (f" ({lic.url})" if lic.url else "")
        + (f". Attribution: {lic.attribution}" if lic.attribution else "")
        + (f" Changes made to the source: {lic.changes}" if lic.changes else "")
        for lic in licences
    ]


CHANGES_HERE = (
    "- Changes made here: each passage was rewritten by a language model (reeval's generators: answer swapping, "
    "context enriching, unanswerable, inconsistent or counterfactual passages); questions are unchanged."
)


def notice(licences: list[SourceLicence], title: str) -> str:
    """`LICENSE.md` of an export: the licence the cases are shared under and every source's attribution."""
    licence = hub_licence(licences)
    # Sources under two versions are shared under the later one, which both allow (see hub_licence).
    shared = {hub: name for name, hub in HUB_LICENCES.items()}.get(licence, "the sources' licences (see below)")
    share_alike = all(lic.share_alike for lic in licences) and licence != "other"
    lines = [
        f"# Licence of {title}",
        "",
        f"Licence: {licence}. These cases adapt the source rows below"
        + (
            f"; each source's licence is ShareAlike, so the cases are shared under {shared}, with the sources' "
            "attribution and a note of the changes. Whoever shares them or material adapted from them must do the same."
            if share_alike
            else ": a source has no licence statement here; check its licence before publishing."
        ),
        "",
        *attribution_lines(licences),
        CHANGES_HERE,
        "",
    ]
    return "\n".join(lines)
