"""What a run calls each model of a config: its name, unless another entry shares the name.

Two entries of one model name on two servers (two quantisations or two builds behind one model string)
are two models to a run; named alike, their records would share ids and their metrics one name. Such
entries are labelled by what tells them apart:

- entries anywhere in the config whose name is alike and whose `api_base` differs get the server's
  host:port (its path too, where the host and port agree): `openai/m@gpu-a:8000`;
- targets (or pivots) of one name and one server that still differ get the settings that differ:
  `qwen2.5-0.5b@temperature=0.7`. Across roles a difference in decoding is no clash: a judge's
  `max_tokens` differs from its pivot's as a matter of course, and the role already tells them apart.

A label the config gives is kept as given. Two targets (or pivots) left with one label are refused.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from experiments.lm.settings import LMConfig

# Listed once per role in a case's records and metric names: each entry there needs a label of its own.
LISTS = ("targets", "pivots")
_NOT_SETTINGS = frozenset({"name", "label", "api_base"})


def assign_labels(entries: dict[str, LMConfig]) -> list[str]:
    """Label the entries (keyed by where they are, `models.targets.0`) that share a name; one line per
    derived label, saying why. Raises ValueError when two entries of one list keep one label."""
    labels = {where: entry.label for where, entry in entries.items()}
    why: dict[str, list[str]] = {}
    by_name: dict[str, list[str]] = {}
    for where, entry in entries.items():
        by_name.setdefault(entry.name, []).append(where)
    for name, places in by_name.items():
        bases = sorted({entries[w].api_base for w in places if entries[w].api_base})
        if len(bases) + any(not entries[w].api_base for w in places) < 2:
            continue
        for where in places:
            entry = entries[where]
            if not entry.label_given and entry.api_base:
                labels[where] = f"{name}@{_server(entry.api_base, bases)}"
                why[where] = ["api_base"]
    for role in LISTS:
        places = [w for w in entries if w.startswith(f"models.{role}.")]
        by_label: dict[str, list[str]] = {}
        for where in places:
            by_label.setdefault(labels[where], []).append(where)
        for label, alike in by_label.items():
            if len(alike) < 2:
                continue
            group = [entries[w] for w in alike]
            if all(e.model_dump() == group[0].model_dump() for e in group):
                raise ValueError(
                    f"models.{role}: {label} is listed twice with the same settings ({', '.join(alike)}); list it once"
                )
            differ = _differing_settings(group)
            for where in alike:
                if entries[where].label_given or not differ:
                    continue
                shown = ",".join(f"{key}={getattr(entries[where], key)}" for key in differ)
                labels[where] = f"{label}{',' if '@' in label else '@'}{shown}"
                why[where] = [*why.get(where, []), *differ]
        twice = sorted({labels[w] for w in places if [labels[v] for v in places].count(labels[w]) > 1})
        if twice:
            raise ValueError(f"models.{role}: two entries labelled {', '.join(twice)}; give each a label of its own")
    for where in why:
        entries[where].settle_label(labels[where])
    return [
        f"{where}: labelled {labels[where]} (another entry named {entries[where].name} differs in "
        f"{', '.join(reasons)}; set `label` to choose the name)"
        for where, reasons in why.items()
    ]


def _server(api_base: str, bases: list[str]) -> str:
    """host:port of `api_base`, or host:port/path where another of `bases` has the same host and port."""
    url = urlsplit(api_base)
    others = [urlsplit(b).netloc for b in bases if b != api_base]
    return url.netloc + url.path.rstrip("/") if url.netloc in others else url.netloc


def _differing_settings(alike: list[LMConfig]) -> list[str]:
    fields = [key for key in LMConfig.model_fields if key not in _NOT_SETTINGS]
    return [key for key in fields if len({repr(getattr(e, key)) for e in alike}) > 1]
