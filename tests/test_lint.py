"""The checks a maintainer runs before a commit: ruff's lint rules and its formatting (pyproject.toml, [tool.ruff]),
and deptry's dependency check ([tool.deptry]): every imported package declared, none left to arrive transitively."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: install the dev extra (pip install -e '.[dev]')")
    return found


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff(command):
    done = subprocess.run([_tool("ruff"), *command], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_every_imported_package_is_declared():
    done = subprocess.run([_tool("deptry"), "."], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
