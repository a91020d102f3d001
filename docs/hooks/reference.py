"""MkDocs hook: the CLI and config reference pages, generated at build time from the code.

`reference/cli.md` walks the Typer app of `experiments/cli.py` (every command, its help, arguments
and options with their defaults); `reference/config.md` walks the pydantic schema of
`experiments/config.py` (`ExperimentConfig`) and every task's `Options` model in the task registry.
Neither page exists in the repository, so neither can drift from the code.
"""

from __future__ import annotations

import enum
import inspect
import re
import sys
import typing
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ("reference/cli.md", "reference/config.md")


def on_files(files, config):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    for src_uri, render in zip(GENERATED, (cli_page, config_page), strict=True):
        files.append(File.generated(config, src_uri, content=render()))
    return files


# -- CLI ---------------------------------------------------------------------------------------------------------


# Help text in the code writes placeholders such as <run-id> bare; outside a code span Markdown hands one to
# the browser as an unknown tag, which shows nothing. Escaped, the page shows it as written.
_PLACEHOLDER = re.compile(r"<(?=[A-Za-z][^<>=\n]*>)")


def _visible(text: str) -> str:
    """`text` with every `<placeholder>` outside a code span escaped, so the browser shows it."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if part.startswith("`") else _PLACEHOLDER.sub("&lt;", part) for part in parts)


def _cell(text: object) -> str:
    return _visible(str(text).replace("|", "\\|").replace("\n", " ").strip())


def _param_rows(command) -> list[str]:
    import click

    rows = []
    for param in command.params:
        if getattr(param, "hidden", False) or param.name in ("install_completion", "show_completion"):
            continue
        if isinstance(param, click.Argument):
            name = f"`{param.human_readable_name.upper()}`"
            if param.nargs == -1:
                name += " …"
        else:
            name = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
        default = param.default
        if isinstance(param, click.Option) and param.is_flag and not param.secondary_opts:
            default = bool(default)
        shown = "" if default is None or callable(default) or default == () else f"`{default}`"
        required = "required" if param.required else shown
        rows.append(f"| {name} | {_cell(getattr(param, 'help', None) or '')} | {required} |")
    return rows


def _command_section(path: str, command, level: int) -> list[str]:
    lines = [f"{'#' * level} `{path}`", ""]
    help_text = inspect.cleandoc(command.help or command.short_help or "")
    if help_text:
        lines += [_visible(help_text), ""]
    import click

    usage = " ".join(command.collect_usage_pieces(click.Context(command, info_name=path)))
    lines += ["```", f"{path} {usage}".rstrip(), "```", ""]
    rows = _param_rows(command)
    if rows:
        lines += ["| argument or option | meaning | default |", "|---|---|---|", *rows, ""]
    return lines


def cli_page() -> str:
    import typer.main

    from experiments.cli import app

    root = typer.main.get_command(app)
    lines = [
        "# Command line reference",
        "",
        "Generated from the Typer app in `experiments/cli.py` when the site is built; "
        "`reeval <command> --help` prints the same.",
        "",
    ]
    lines += _command_section("reeval", root, 2)[3:]  # the root's usage and options, under the page title

    def walk(group, prefix: str) -> None:
        for name in sorted(group.list_commands(None)):
            command = group.get_command(None, name)
            if command is None or command.hidden:
                continue
            path = f"{prefix} {name}"
            lines.extend(_command_section(path, command, 2 if prefix == "reeval" else 3))
            if hasattr(command, "list_commands"):  # a group (Typer may bring a click of its own)
                walk(command, path)

    walk(root, "reeval")
    return "\n".join(lines) + "\n"


# -- config ------------------------------------------------------------------------------------------------------


def _type_name(annotation) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(annotation))
    if inspect.isclass(annotation) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    text = annotation.__name__ if inspect.isclass(annotation) and origin is None else str(annotation)
    text = re.sub(r"\b(?:typing|pydantic|experiments|builtins|metrics|programs)(?:\.\w+)*\.(\w+)\b", r"\1", text)
    text = text.replace("NoneType", "None").replace(" | None", " \\| None").replace("|", "\\|")
    return f"`{text}`".replace("\\\\|", "\\|")


def _default(field) -> str:
    from pydantic_core import PydanticUndefined

    if field.is_required():
        return "required"
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return ""
    else:
        value = field.default
    if hasattr(value, "model_dump"):
        return "see below"
    if isinstance(value, enum.Enum):
        value = value.value
    return f"`{value!r}`" if value not in (None, "") else ("`None`" if value is None else '`""`')


def _model_table(model) -> list[str]:
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        rows.append(
            f"| `{name}` | {_type_name(field.annotation)} | {_cell(_default(field))} | "
            f"{_cell(field.description or '')} |"
        )
    return rows


def _doc(model) -> str:
    own = model.__dict__.get("__doc__")
    return _visible(inspect.cleandoc(own)) if own else ""


def config_page() -> str:
    from pydantic import BaseModel

    from experiments.config import ExperimentConfig
    from experiments.task_registry import entries

    lines = [
        "# Config reference",
        "",
        "Generated from the pydantic schema in `experiments/config.py` (`ExperimentConfig`) and each "
        "task's `Options` model when the site is built. A config is YAML; every key not listed here is "
        "an error (`reeval validate CONFIG` checks a file without any LM call). A key left at its "
        "default is not part of the run id, and neither are `run.threads`, `run.local_contexts`, "
        "`run.executor` and `run.ray` (how a run executes, not what it computes).",
        "",
        "## Top level",
        "",
        *_model_table(ExperimentConfig),
        "",
    ]
    seen: set[type] = {ExperimentConfig}

    def sections(model, prefix: str) -> None:
        for name, field in model.model_fields.items():
            for candidate in (field.annotation, *typing.get_args(field.annotation)):
                if inspect.isclass(candidate) and issubclass(candidate, BaseModel) and candidate not in seen:
                    seen.add(candidate)
                    key = f"{prefix}{name}"
                    lines.extend([f"## `{key}`" if "." not in key else f"### `{key}`", ""])
                    doc = _doc(candidate)
                    if doc:
                        lines.extend([doc, ""])
                    lines.extend([*_model_table(candidate), ""])
                    sections(candidate, f"{key}.")

    sections(ExperimentConfig, "")
    lines += [
        "## `options` by task",
        "",
        "`options` holds the settings of the config's `task`; each task checks them against its own model.",
        "",
    ]
    for task, cls in ((n, e.cls) for n, e in entries().items()):
        options = getattr(cls, "Options", None)
        lines += [f"### `task: {task}`", ""]
        doc = _doc(cls)
        if doc:
            lines += [doc.split("\n\n")[0].replace("\n", " "), ""]
        if options is None or not options.model_fields:
            lines += ["No options.", ""]
            continue
        lines += [*_model_table(options), ""]
        nested = [
            f
            for f in options.model_fields.values()
            if inspect.isclass(f.annotation) and issubclass(f.annotation, BaseModel)
        ]
        for field in nested:
            lines += [f"`{field.annotation.__name__}`:", "", *_model_table(field.annotation), ""]
    return "\n".join(lines) + "\n"
