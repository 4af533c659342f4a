import os
import subprocess
import sys

import pytest

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


def test_reading_a_row_file_by_path_loads_no_uri_parser(tmp_path):
    """A local path is opened without parsing it as a URI: a fresh process that reads a row of a .row file never
    loads urllib.parse (~2 ms of a fresh process's first read); a ``file:`` URI loads it."""
    import pyarrow as pa
    from paimon_engine import types as T
    from paimon_engine.formats.row import RowFileWriter
    path = str(tmp_path / "t.row")
    with RowFileWriter(path, T.RowType.of(("a", T.BigIntType()))) as w:
        w.write(pa.table({"a": [1, 2]}))
    code = ("import sys; from paimon_engine import types as T; from paimon_engine.formats.row import RowFileReader;"
            "s = T.RowType.of(('a', T.BigIntType()));"
            f"assert RowFileReader({path!r}, s).get_row(1) == {{'a': 2}};"
            "print('urllib.parse' in sys.modules);"
            f"RowFileReader('file://' + {path!r}, s).close(); print('urllib.parse' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


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


# -- the installable package ----------------------------------------------------------------------------------
SMOKE = r'''
import os, sys
import pyarrow as pa
import pytest

import paimon_engine
from paimon_engine import _speedups

venv = os.path.realpath(sys.prefix)
assert os.path.realpath(paimon_engine.__file__).startswith(venv + os.sep), paimon_engine.__file__
assert _speedups.implementation() == "cython", _speedups.load_errors
for name in _speedups.KERNELS:
    path = os.path.realpath(_speedups.kernel(name).__file__)
    assert path.startswith(venv + os.sep) and path.endswith(".so"), path

from paimon_engine.formats import fory
from paimon_engine.formats.row import RowFileReader, RowFileWriter
from paimon_engine.catalog import SqlCatalog
from paimon_engine.types import parse_paimon_type

data = pa.table({"id": pa.array(range(1000), pa.int64()), "name": [f"n{i}" for i in range(1000)]})
schema = parse_paimon_type("ROW<id BIGINT, name STRING>")
with RowFileWriter("a.row", schema) as w:
    w.write(data)
with RowFileReader("a.row", schema) as r:
    back = r.to_arrow()
assert back.column("id").to_pylist() == list(range(1000)) and back.column("name").equals(data.column("name"))

batch = data.to_batches()[0]
buf, offsets = fory.encode_rows(batch)
assert fory.decode_rows(buf, offsets, batch.schema).equals(batch)

cat = SqlCatalog("default", uri="sqlite:///" + os.path.abspath("cat.db"), warehouse=os.path.abspath("wh"))
cat.create_namespace("db")
cat.create_table("db.t", data.schema).append(data)
assert cat.load_table("db.t").scan(filter="id < 10").count() == 10
print("smoke ok", paimon_engine.__version__)
'''


@pytest.mark.slow
def test_sdist_and_wheel_build_install_and_run_outside_the_checkout(tmp_path):
    """python -m build (sdist, then the wheel from the sdist) -> a fresh venv -> a smoke run from elsewhere."""
    import glob
    import shutil
    import site
    import tarfile
    import venv
    import zipfile
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    src = tmp_path / "src"
    shutil.copytree(repo, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "site", "warehouse", "*.egg-info", "*.so", "*.c", "__pycache__", ".asv",
        ".hypothesis", ".pytest_cache", "*.html"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PAIMON_ENGINE_PUREPYTHON", "PAIMON_ENGINE_CYTHON_DEBUG", "PYTHONPATH")}
    env["PAIMON_ENGINE_CFLAGS"] = "-O0"   # the kernels compile several times faster; what is packed is the same
    dist = tmp_path / "dist"
    # No build isolation: the build requirements (setuptools, Cython, numpy) are those of this environment.
    r = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)],
                       capture_output=True, text=True, env=env, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

    (sdist,) = glob.glob(str(dist / "*.tar.gz"))
    with tarfile.open(sdist) as tf:
        names = [n.split("/", 1)[1] for n in tf.getnames() if "/" in n]
    assert {"LICENSE", "NOTICE", "pyproject.toml", "setup.py", "paimon_engine/_kernels/varint.pyx",
            "tests/conftest.py"} <= set(names)
    assert not [n for n in names if n.endswith((".c", ".so"))]

    (wheel,) = glob.glob(str(dist / "*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        wnames = zf.namelist()
        metadata = zf.read(next(n for n in wnames if n.endswith(".dist-info/METADATA"))).decode()
    assert any(n.startswith("paimon_engine/_kernels/varint.") and n.endswith(".so") for n in wnames)
    assert not [n for n in wnames if n.startswith("tests/") or n.endswith(".c")]
    assert "License-Expression: Apache-2.0" in metadata and "License-File: NOTICE" in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in wnames)

    # A fresh venv holding only the wheel; the dependencies (numpy, pyarrow, ...) come from this environment
    # through a path entry, which appends them after the venv's own site-packages and runs none of their .pth
    # files (so a development install of the package there stays invisible).
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False, symlinks=True)
    py = env_dir / "bin" / "python"
    own = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    Path(own, "_host_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index",
                        "--no-cache-dir", "--disable-pip-version-check", "--quiet", wheel],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr

    work = tmp_path / "elsewhere"
    work.mkdir()
    r = subprocess.run([str(py), "-c", SMOKE], capture_output=True, text=True, cwd=work, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"smoke ok {paimon_engine.__version__}"
    r = subprocess.run([str(env_dir / "bin" / "paimon-engine"), "--version"], capture_output=True, text=True,
                       cwd=work, env=env, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == f"paimon-engine {paimon_engine.__version__}", r.stderr
    r = subprocess.run([str(env_dir / "bin" / "paimon-engine"), "inspect", "a.row", "--json"],
                       capture_output=True, text=True, cwd=work, env=env, timeout=120)
    assert r.returncode == 0 and '"rows": 1000' in r.stdout, r.stderr
