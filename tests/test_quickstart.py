"""docs/quickstart.md run as a newcomer runs it: the commands of its ```bash blocks (and the `$` lines of its
```console blocks), read from the page, in a folder of their own, with scripted models in place of the local
ones (tests/test_tasks_end_to_end.py: DummyLM keyed on what each prompt asks for). Each step is checked for
what the page says it produces: exit code 0, the run folder and files it names, and the lines of output it
shows that do not depend on a real model. The install step is not run: it is checked to be the README's."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import mlflow
import pytest
import yaml
from starlette.testclient import TestClient
from typer.testing import CliRunner

from experiments import runner
from experiments.cli import app
from experiments.config import LMConfig
from experiments.data.registry import DATASETS
from experiments.lm.registry import ResolvedLM
from experiments.tracking import find_runs
from tests.shipped import nq_head
from tests.test_docs import _FENCE, ROOT
from tests.test_tasks_end_to_end import scripted_lm

pytestmark = pytest.mark.timeout(300)  # a hang guard, far above what the test takes

PAGE = ROOT / "docs" / "quickstart.md"
README = ROOT / "README.md"


def _steps(text: str) -> dict[int, str]:
    """The page's numbered sections ("## 2. The default run") by number."""
    parts = re.split(r"^## ", text, flags=re.M)
    return {int(m.group(1)): part for part in parts if (m := re.match(r"(\d+)\. ", part))}


def _blocks(section: str, language: str) -> list[str]:
    return [m.group(2) for m in _FENCE.finditer(section) if m.group(0).split("\n", 1)[0][3:].strip() == language]


def _joined(lines: list[str]) -> list[str]:
    """Lines with their `\\` continuations joined."""
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1].rstrip() + " " + line.strip()
        else:
            out.append(line.rstrip())
    return out


def _commands(section: str) -> list[str]:
    return [line for block in _blocks(section, "bash") for line in _joined(block.splitlines()) if line.strip()]


def _sessions(section: str) -> list[tuple[str, list[str]]]:
    """The `$ command` lines of the section's console blocks, each with the output lines shown below it."""
    sessions: list[tuple[str, list[str]]] = []
    for block in _blocks(section, "console"):
        lines = block.splitlines()
        for index, line in enumerate(lines):
            if line.startswith("$ "):
                command = [line[2:]]
                rest = lines[index + 1 :]
                while command[-1].endswith("\\"):
                    command.append(rest.pop(0))
                shown = []
                for out in rest:
                    if out.startswith("$ "):
                        break
                    shown.append(out)
                sessions.append((_joined(command)[0], shown))
    return sessions


def _code_span(section: str, starting: str) -> str:
    """The page's inline code that starts with `starting` (a line of output it promises)."""
    prose = re.sub(r"^```.*?^```", "", section, flags=re.M | re.S).replace("\n", " ")
    spans = [s for s in re.findall(r"`([^`]+)`", prose) if s.startswith(starting)]
    assert spans, f"{PAGE.name}: no `{starting}…` on the page"
    return spans[0]


def _pattern(shown: str) -> re.Pattern:
    """A promised line as a pattern: `…` stands for what the run fills in."""
    return re.compile(".*?".join(re.escape(part) for part in shown.split("…")))


def _shows(pattern: str | re.Pattern, output: str) -> bool:
    """Whether the output holds the pattern once rich's wrapping at 80 columns is undone: a line broken at a
    space (kept at the line's end, or taken by the break) or inside a word (a long path)."""
    return any(re.search(pattern, joined) for joined in (output.replace("\n", ""), re.sub(r" *\n *", " ", output)))


@pytest.fixture
def newcomer(isolated, monkeypatch):
    """A folder standing for the checkout (its shipped configs, runs/ and MLflow of its own), where the commands
    run; the scripted models behind every role (one per target); the review page answered by a reader."""
    folder = isolated / "checkout"
    (folder / "experiments").mkdir(parents=True)
    (folder / "experiments" / "configs").symlink_to(ROOT / "experiments" / "configs")
    monkeypatch.setenv("REEVAL_RUNS_DIR", str(folder / "runs"))
    monkeypatch.chdir(folder)
    # The first shipped NQ rows only: the same seeds a limit keeps, without reading all 8,500 rows each time.
    monkeypatch.setitem(DATASETS, "nq", (nq_head(isolated, 200), DATASETS["nq"][1]))
    built: list = []

    def build_lms(run):
        lm = scripted_lm(runner.load_data(run.config).examples, run.config.task)
        built.append(lm)

        def resolved(role, name):
            return ResolvedLM(role, LMConfig(name=f"dummy/{name}"), lm, None)

        return {
            role: [resolved("target", c.name) for c in entry] if isinstance(entry, list) else resolved(role, role)
            for role, entry in run.models.items()
        }

    monkeypatch.setattr(runner, "build_lms", build_lms)
    served: list = []

    def serve(session, host, port):
        """The reader: opens the page and answers every case valid (`v`), then stops the server (Ctrl+C)."""
        from experiments.review.server import create_app

        client = TestClient(create_app(session, allowed_hosts=["testserver"]), follow_redirects=False)
        assert client.get("/").status_code < 400
        for case in session.cases:
            answered = client.post("/api/verdict", json={"id": str(case["id"]), "verdict": "valid", "note": ""})
            assert answered.status_code == 200, answered.text
        served.append((host, port, session.total))

    monkeypatch.setattr("experiments.review.server.serve", serve)
    return folder, built, served


def reeval(command: str) -> str:
    """A page's `reeval …` command run as typed; its standard output."""
    argv = shlex.split(command)
    assert argv[0] == "reeval", command
    result = CliRunner().invoke(app, argv[1:], prog_name="reeval", env={"COLUMNS": "80"})
    assert result.exit_code == 0, f"{command}: exit {result.exit_code}\n{result.output}\n{result.exception!r}"
    return result.stdout


def _parts(commands: list[str]) -> list[str]:
    return [part.strip() for command in commands for part in command.split("&&")]


def test_the_install_step_is_the_readmes():
    """Not run here (it builds llama.cpp and downloads the models): the page's install is the README's."""
    page = _parts(_commands(_steps(PAGE.read_text(encoding="utf-8"))[1]))
    readme = _parts(_commands(README.read_text(encoding="utf-8")))
    assert "bash scripts/install.sh" in page and "python3 -m venv .venv" in page, page
    assert [part for part in page if part not in readme] == [], readme


def test_the_quickstart_runs_as_written(newcomer):
    folder, built, served = newcomer
    text = PAGE.read_text(encoding="utf-8")
    steps = _steps(text)
    assert sorted(steps) == [1, 2, 3, 4, 5], sorted(steps)
    ids: dict[str, str] = {}

    def named(command: str) -> str:
        """The command with each `<name>-<hash>` replaced by the run id that run printed."""
        return re.sub(r"([a-z0-9-]+)-<hash>", lambda m: ids[m.group(1)], command)

    # 1. The shipped configs check without calling a model, as the page shows.
    for command, shown in _sessions(steps[1]):
        out = reeval(command)
        lines = [line.rstrip() for line in out.splitlines()]
        at = 0
        for line in (s.rstrip() for s in shown if s.strip() != "…"):
            assert line in lines[at:], f"{command}: the page shows {line!r}; the command printed:\n{out}"
            at = lines.index(line, at) + 1
    assert not built, "no model is asked in step 1"

    # 2. The default run, then the same command again.
    [default] = _commands(steps[2])
    out = reeval(default)
    ids["nq-seed-selection"] = run_id = re.search(r"run (nq-seed-selection-[0-9a-f]{10})", out).group(1)
    for cell in ("open-book correct", "open-book wrong", "closed-book correct", "closed-book wrong"):
        assert cell in out
    metrics = re.findall(r"`([a-z_.]+)`", re.search(r"a `metrics` table \(([^)]*)\)", steps[2]).group(1))
    assert "records" in metrics and "wall_seconds" in metrics, metrics
    for name in metrics:
        if not name.startswith("lm."):  # calls are counted by a model's engine or meter; test doubles have none
            assert re.search(rf"│ {re.escape(name)} +│", out), name
    last = _code_span(steps[2], "ran 3 rows in")
    assert _shows(_pattern(last), out), f"{last!r} not in:\n{out}"
    checkpoint = Path("runs") / run_id / "cases.jsonl"
    assert len(checkpoint.read_text().splitlines()) == 3
    again = reeval(default)
    assert _code_span(steps[2], "ran 0") in again and run_id in again
    assert not built[-1].history, "a resumed run asks nothing again"

    # 3. A first answer-swap run, and what `show` says of it.
    swap, show = _commands(steps[3])
    out = reeval(swap)
    ids["nq-answer-swap"] = run_id = re.search(r"run (nq-answer-swap-[0-9a-f]{10})", out).group(1)
    records = [json.loads(line) for line in (Path("runs") / run_id / "cases.jsonl").read_text().splitlines()]
    assert len(records) == 8
    assert all(re.fullmatch(r"accepted|rejected:\S+|error:\S+", r["status"]) for r in records)
    for status in {r["status"] for r in records}:
        assert re.search(rf"│ {re.escape(status)} +│ \d+ +│ \d+% +│", out), status
    controls = int(re.search(r"calibrated on (\d+) control cases", steps[3].replace("\n", " ")).group(1))
    shown = dict(re.findall(r"│ (judge_calibration\.\w+\.n) +│ (\d+) +│", out))
    assert sum(map(int, shown.values())) == controls, shown
    assert _shows(r"checkpoint \S*/runs/" + run_id + "/cases.jsonl", out), out
    out = reeval(named(show))
    listed = re.search(r"metrics from MLflow \(([^)]*)\)", steps[3].replace("\n", " ")).group(1)
    for name in re.findall(r"`([a-z_.*]+)`", listed):
        if not name.startswith("lm."):  # test doubles count no calls
            assert re.search("│ " + re.escape(name).replace(r"\*", r"\S+") + " +│", out), name
    assert _shows(_pattern(_code_span(steps[3], "checkpoint: 8 rows")), out), out

    # 4. The blind review, answered by a reader, then its validity.
    review, validity = _commands(steps[4])
    out = reeval(named(review))
    [(host, port, drawn)] = served
    assert _shows(re.escape(f"http://{host}:{port}/"), out) and f"http://{host}:{port}/" in steps[4]
    assert 0 < drawn <= int(re.search(r"--sample (\d+)", review).group(1))  # at most the run's cases
    verdicts = Path(_code_span(steps[4], "runs/<run-id>/review/").replace("<run-id>", run_id))
    assert len(verdicts.read_text().splitlines()) == drawn
    out = reeval(named(review))  # the same command resumes where it stopped
    assert _shows(re.escape(f"({drawn} answered)"), out), out
    out = reeval(named(validity))
    assert "judge acceptance" in out and "judge precision" in out  # the judge's acceptance, its agreement
    assert "**valid share of accepted cases**" in steps[4] and "95%" in steps[4]
    assert _shows(r"Valid share of the \d+ accepted cases: \d+% \[\d+%, \d+%\]", out), out

    # 5. The evaluation config, written as the page writes it, checked, run and reported.
    [config] = _blocks(steps[5], "yaml")
    name = re.match(r"# (\S+\.yaml):", config).group(1)
    Path(name).write_text(named(config), encoding="utf-8")
    check, evaluate, report = _commands(steps[5])
    out = reeval(check)
    assert f"ok {name}" in out
    out = reeval(evaluate)
    ids["my-eval"] = run_id = re.search(r"run (my-eval-[0-9a-f]{10})", out).group(1)
    header = next(line for line in out.splitlines() if "┃ target" in line)
    assert all(column in header for column in ("setting", "original", "perturbed", "pairs")), out
    assert "drop [95%" in out and "95% bootstrap interval" in steps[5]
    options = yaml.safe_load(config)["options"]["settings"]
    for setting in (s for s in options if s != "closed_book"):  # closed-book has no passage to perturb
        assert re.search(rf"│ \S+ +│ {setting} +│ greedy +│", out), setting
    assert "closed_book" in options and re.search(r"│ acc\.\S+\.closed_book\.\S+ +│", out), out
    html = Path(_code_span(steps[5], "runs/<run-id>/report/").replace("<run-id>", run_id))
    assert html.exists(), "the evaluation writes its report as it finishes"
    html.unlink()
    out = reeval(named(report))
    assert html.exists() and _shows(re.escape(str(html.resolve())), out), out
    logged = mlflow.artifacts.list_artifacts(run_id=find_runs(run_id)[0].info.run_id, artifact_path="report")
    assert "report/report.html" in {a.path for a in logged}
