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


# A function longer than this is read in pieces; split it into named steps instead.
MAX_FUNCTION_LINES = 80


def _function_lengths(path: Path) -> dict[str, int]:
    """Every function and method of the module, by its qualified name, with its length (def to last line)."""
    lengths = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lengths[prefix + child.name] = child.end_lineno - child.lineno + 1
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def test_no_library_function_is_over_80_lines():
    long = sorted(
        f"{path.relative_to(ROOT).as_posix()}: {name} ({lines} lines)"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for name, lines in _function_lengths(path).items()
        if lines > MAX_FUNCTION_LINES
    )
    assert not long, f"over {MAX_FUNCTION_LINES} lines, split into named steps: " + "; ".join(long)


# Library files that still name a generator in a string literal. The target is 0: what a generator is lives on
# its registered entry (experiments/task_registry.py), set in its own modules. Lower this as files are freed;
# never raise it.
MAX_FILES_NAMING_GENERATORS = 0
# Words spelled like a generator that mean something else there, by file: not counted.
HOMONYMS = {
    # the judge's case kind (programs.judge.CaseKind) and its answerability verdict
    "signatures/judge.py": {"unanswerable"},
    "programs/judge.py": {"unanswerable"},
    "experiments/judging/controls.py": {"unanswerable"},
    "experiments/validation.py": {"unanswerable"},
    # a phrase a non-strict "conflict" answer may use (FaithEval's list)
    "metrics/keywords.py": {"inconsistent"},
}


def _own_modules() -> set[str]:
    """Each generator's task module under experiments/tasks/, with the program and signature modules of the
    same name."""
    from experiments import task_registry

    own = set()
    for entry in task_registry.entries().values():
        if entry.generator:
            module = Path(*entry.cls.__module__.split("."))
            own |= {f"{module.as_posix()}.py", f"programs/{module.name}.py", f"signatures/{module.name}.py"}
    return own


def test_library_files_naming_a_generator_are_few():
    from experiments import task_registry

    generators = set(task_registry.names(lambda r: r.generator))
    own = _own_modules()
    naming, homonyms = {}, set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative in own or relative.startswith("experiments/configs/"):
                continue
            found = {
                node.value
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in generators
            }
            homonyms |= {(relative, word) for word in found & HOMONYMS.get(relative, set())}
            if found - HOMONYMS.get(relative, set()):
                naming[relative] = sorted(found - HOMONYMS.get(relative, set()))
    stale = sorted(f"{f}: {w}" for f, words in HOMONYMS.items() for w in words if (f, w) not in homonyms)
    assert not stale, "no longer in the file, take off HOMONYMS: " + "; ".join(stale)
    print(f"{len(naming)} library files name a generator:")
    for relative, names in naming.items():
        print(f"  {relative}: {', '.join(names)}")
    assert len(naming) <= MAX_FILES_NAMING_GENERATORS, (
        "read what a generator is from its registered entry instead of naming it: " + ", ".join(naming)
    )
