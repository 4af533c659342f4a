import subprocess
import sys

import paimon_engine
from paimon_engine import errors


def test_error_hierarchy():
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.PaimonEngineError)
    assert issubclass(errors.CorruptFileError, ValueError)
    e = errors.CorruptFileError("bad", path="a.row", block=2, row=5, field="x", offset=10)
    assert str(e) == "bad (file a.row, block 2, row 5, field x, offset 10)"
    assert e.located(path="z").path == "a.row"
    assert errors.CorruptFileError("bad").located(path="z", offset=3).offset == 3


def test_import_is_light():
    code = ("import sys, paimon_engine, paimon_engine.batch, paimon_engine.types, paimon_engine.encoding;"
            "print(','.join(m for m in ('pandas', 'pyspark', 'fastavro', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_cli_kernels_and_demo(tmp_path):
    out = subprocess.run([sys.executable, "-m", "paimon_engine", "kernels"], capture_output=True, text=True,
                         check=True).stdout
    assert "varint" in out
    r = subprocess.run([sys.executable, "-m", "paimon_engine", "demo", "--warehouse", str(tmp_path / "wh")],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "quickstart" in r.stdout


def test_cli_usage_error_exit_code():
    r = subprocess.run([sys.executable, "-m", "paimon_engine", "nonsense"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_version():
    assert paimon_engine.__version__
