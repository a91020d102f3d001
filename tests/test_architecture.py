"""The import graph keeps its layers (pyproject.toml, [tool.importlinter]): no circle, no upward import,
counting imports inside functions too."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("signatures", "programs", "metrics", "experiments")
# Modules that import the project's own modules inside functions, and why: see pyproject.toml.
DEFERRED_OWN_IMPORTS = {"experiments/cli.py", "experiments/executors/worker.py"}


def test_import_contracts_are_kept():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if lint is None:
        pytest.fail("lint-imports is missing: install the dev extra (pip install -e '.[dev]')")
    done = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _own_imports_inside_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n.split(".")[0] in PACKAGES for n in names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_own_modules_are_imported_at_module_level():
    """An import of the project's own module inside a function hides an edge of the graph from a reader;
    heavy optional libraries are the ones deferred (pyproject.toml says which and why)."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if str(path.relative_to(ROOT)) not in DEFERRED_OWN_IMPORTS:
                found += _own_imports_inside_functions(path)
    assert not found, "\n".join(sorted(set(found)))
