"""Static checks that catch what a merge or a refactor can break silently: undefined names, names used before
they are bound, imports nothing uses, definitions shadowed by a second one (pyflakes' rules, through ruff)."""
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RULES = "F821,F822,F823,F811,F401,F632,F702,F704,F706,F707"


def test_package_and_fuzzers_have_no_undefined_or_unused_names():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    out = subprocess.run([ruff, "check", "--no-cache", "--select", RULES, "--output-format", "concise",
                          "paimon_engine", "fuzz", "pyspark_paimon_engine.py"],
                         cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_no_nested_function_calls_itself():
    """A nested function that calls itself holds its own closure cell: a reference cycle that keeps it, and what
    it captured (a read's column tables, say), alive until the cycle collector runs. Recursion goes through a
    module-level function or a loop instead."""
    import ast
    found = []
    for path in sorted((REPO / "paimon_engine").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for outer in ast.walk(tree):
            if not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for inner in ast.walk(outer):
                if inner is outer or not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                if any(isinstance(n, ast.Name) and n.id == inner.name for n in ast.walk(inner)):
                    found.append(f"{path.relative_to(REPO)}:{inner.lineno} {inner.name}")
    assert found == []
