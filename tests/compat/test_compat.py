"""One pyiceberg user script, run with pyiceberg and with paimon_engine (only its imports changed) on tables in
one SQLite catalog; the outputs must agree line for line."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyiceberg")
pytest.importorskip("duckdb")
pytest.importorskip("polars")

SCRIPT = Path(__file__).with_name("script.py").read_text()
REPO = Path(__file__).resolve().parents[2]


def _run(tmp_path, lib, ns):
    path = tmp_path / f"script_{lib}.py"
    text = SCRIPT
    if lib == "paimon_engine":        # pyiceberg's type, schema, partitioning and transform modules in one
        for mod in ("types", "schema", "partitioning", "transforms"):
            text = text.replace(f"from LIB.{mod} import", "from paimon_engine.iceberg_types import")
    path.write_text(text.replace("from LIB.", f"from {lib}."))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    res = subprocess.run([sys.executable, str(path), f"sqlite:///{tmp_path}/catalog.db", str(tmp_path / "wh"), ns],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout.splitlines()


def test_same_script_same_output(tmp_path):
    theirs = _run(tmp_path, "pyiceberg", "ns_pyiceberg")
    ours = _run(tmp_path, "paimon_engine", "ns_paimon")
    assert len(ours) == len(theirs) > 40
    for a, b in zip(theirs, ours):
        assert a == b
