"""``paimon-engine`` sub-commands: output, exit codes, no tracebacks for user errors."""

import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.cli import main
from paimon_engine.types import parse_paimon_type

SCHEMA = "ROW<id BIGINT, name STRING, score DOUBLE>"


@pytest.fixture(scope="module")
def row_file(tmp_path_factory):
    from paimon_engine.formats.row import RowFileWriter
    path = str(tmp_path_factory.mktemp("row") / "a.row")
    n = 5000
    with RowFileWriter(path, parse_paimon_type(SCHEMA), block_size=8192) as w:
        w.write(pa.table({"id": pa.array(np.arange(n), pa.int64()), "name": [f"n{i}" for i in range(n)],
                          "score": pa.array(np.arange(n) / 2.0)}))
    return path


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    from paimon_engine.expressions import col
    from paimon_engine.catalog import SqlCatalog
    wh = tmp_path_factory.mktemp("wh")
    cat = SqlCatalog("default", uri=f"sqlite:///{wh}/cat.db", warehouse=str(wh))
    cat.create_namespace("db")
    t = cat.create_table("db.t", pa.schema([("id", pa.int64()), ("k", pa.int32())]), [("k", "identity")])
    t.append(pa.table({"id": pa.array(range(100), pa.int64()), "k": pa.array([i % 3 for i in range(100)],
                                                                               pa.int32())}))
    t.delete(col("id") < 10)
    return f"sqlite:///{wh}/cat.db", str(wh), t


def test_inspect_row_file(row_file, capsys):
    assert main(["inspect", row_file, "--json", "--blocks"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["rows"] == 5000 and info["blocks"] == len(info["block_index"]) > 1
    assert sum(b["rows"] for b in info["block_index"]) == 5000
    assert sum(b["compressed"] for b in info["block_index"]) == info["index_offset"]
    assert main(["inspect", row_file]) == 0
    out = capsys.readouterr().out
    assert "rows" in out and "5000" in out


def test_inspect_file_index_and_deletion_vectors(tmp_path, golden_dir, capsys):
    from paimon_engine.index import FileIndexWriter
    w = FileIndexWriter()
    w.add("c1", "bloom-filter", b"\x01\x02\x03")
    w.add("c1", "bitmap", b"\x04\x05")
    w.add("c2", "bsi", None)
    path = tmp_path / "d.row.index"
    path.write_bytes(w.to_bytes())
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["format"] == "paimon file index" and info["indexes"] == 3
    assert [(e["column"], e["index"], e["length"]) for e in info["entries"]][:2] == \
        [("c1", "bloom-filter", 3), ("c1", "bitmap", 2)]
    assert main(["inspect", str(golden_dir / "dvindex-32"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["format"] == "paimon deletion vectors" and info["deleted_rows"] == 3
    assert [(e["offset"], e["deleted_rows"]) for e in info["entries"]] == [(1, 2), (33, 1)]
    assert main(["inspect", str(golden_dir / "dvindex-32")]) == 0
    assert "deleted_rows" in capsys.readouterr().out


def test_cat_rows_and_columns(row_file, capsys):
    assert main(["cat", row_file, "--schema", SCHEMA, "--rows", "10:13", "--columns", "id,name", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines == [{"id": 10, "name": "n10"}, {"id": 11, "name": "n11"}, {"id": 12, "name": "n12"}]
    assert main(["cat", row_file, "--schema", SCHEMA, "--rows=-2:"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["id", "name", "score"] and out[2].split()[0] == "4998" and len(out) == 4


def _usage_error(argv, capsys):
    """argparse rejects argv: exit code 2 and the message on stderr."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_user_errors_have_exit_codes_and_no_traceback(row_file, tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "missing.row")]) == 1
    err = capsys.readouterr().err
    assert "missing.row" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    bad = tmp_path / "bad.row"
    bad.write_bytes(open(row_file, "rb").read()[:-7])
    assert main(["inspect", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.row" in err and "offset" in err and len(err.strip().splitlines()) == 1
    assert "--rows: must look like a:b" in _usage_error(["cat", row_file, "--schema", SCHEMA, "--rows", "x"], capsys)
    assert "ROW<...>" in _usage_error(["cat", row_file, "--schema", "BIGINT"], capsys)
    assert "not a Paimon type" in _usage_error(["cat", row_file, "--schema", "ROW<id NOPE>"], capsys)
    assert "--schema" in _usage_error(["cat", row_file], capsys)          # required option missing


def test_table_commands(warehouse, capsys):
    uri, wh, t = warehouse
    base = ["--uri", uri, "--warehouse", wh]
    assert main(["table", "info", "db.t", *base, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in info["schema"]] == ["id", "k"] and info["snapshots"] == 2
    assert main(["table", "snapshots", "db.t", *base, "--json"]) == 0
    snaps = json.loads(capsys.readouterr().out)
    assert [s["operation"] for s in snaps] == ["append", "delete"]
    assert main(["table", "history", "db.t", *base]) == 0
    assert str(snaps[1]["snapshot_id"]) in capsys.readouterr().out
    assert main(["table", "files", "db.t", *base, "--json"]) == 0
    files = json.loads(capsys.readouterr().out)
    assert {f["content"] for f in files} == {"data", "position-deletes"}
    assert main(["table", "scan", "db.t", *base, "--filter", "k = 1 and id < 40", "--json", "--limit", "0"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert sorted(r["id"] for r in rows) == [i for i in range(10, 40) if i % 3 == 1]
    assert main(["table", "scan", "db.t", *base, "--count"]) == 0
    assert capsys.readouterr().out.strip() == "90"
    assert main(["table", "scan", "db.t", *base, "--snapshot-id", str(snaps[0]["snapshot_id"]), "--count"]) == 0
    assert capsys.readouterr().out.strip() == "100"
    assert main(["table", "scan", "db.t", *base, "--limit", "5"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2 + 5
    assert main(["table", "info", "db.nope", *base]) == 1
    assert "db.nope" in capsys.readouterr().err
    assert main(["table", "scan", "db.t", *base, "--filter", "nosuchcol = 1"]) == 1
    err = capsys.readouterr().err
    assert "nosuchcol" in err and "Traceback" not in err


def test_catalog_list(warehouse, capsys):
    uri, wh, _ = warehouse
    assert main(["catalog", "list", "--uri", uri, "--warehouse", wh, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"namespace": "db", "table": "db.t"}]
    assert "--uri" in _usage_error(["catalog", "list"], capsys)


def test_module_entry_point(row_file):
    r = subprocess.run([sys.executable, "-m", "paimon_engine", "inspect", row_file + ".nope"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr and r.stderr.startswith("paimon-engine: error:")


def test_progress_only_on_tty():
    import io

    from paimon_engine.cli_commands import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True
    plain, tty = io.StringIO(), Tty()
    for stream in (plain, tty):
        with Progress(3, "x", stream=stream) as p:
            for _ in range(3):
                p.update()
    assert plain.getvalue() == ""
    assert "3/3" in tty.getvalue()


def test_append_compact_and_remove_orphans(tmp_path, capsys):
    import pyarrow.parquet as pq

    from paimon_engine.expressions import col
    from paimon_engine.catalog import SqlCatalog
    uri, wh = f"sqlite:///{tmp_path}/c.db", str(tmp_path / "wh")
    cat = SqlCatalog("default", uri=uri, warehouse=wh)
    cat.create_namespace("db")
    t = cat.create_table("db.m", pa.schema([("id", pa.int64()), ("k", pa.int32())]))
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": pa.array(range(50), pa.int64()), "k": pa.array([i % 5 for i in range(50)],
                                                                                   pa.int32())}), src)
    (tmp_path / "more.csv").write_text("id,k\n100,1\n101,2\n")
    base = ["--uri", uri, "--warehouse", wh, "--json"]
    assert main(["table", "append", "db.m", str(src), str(tmp_path / "more.csv"), *base]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 52
    t = cat.load_table("db.m")
    t.delete(col("k") == 1)
    assert main(["table", "compact", "db.m", *base]) == 0
    assert json.loads(capsys.readouterr().out)["rewritten"] is True
    t = cat.load_table("db.m")
    assert t.current_snapshot().operation == "replace" and not t.delete_files()
    assert t.scan().count() == 41
    stray = tmp_path / "wh" / "db.db" / "m" / "data" / "stray.parquet"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"x")
    assert main(["table", "remove-orphans", "db.m", *base, "--older-than-hours", "-1", "--dry-run"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert any(p.endswith("stray.parquet") for p in out["orphans"]) and stray.exists()
    assert main(["table", "remove-orphans", "db.m", *base, "--older-than-hours", "-1"]) == 0
    assert not stray.exists() and cat.load_table("db.m").scan().count() == 41
    assert main(["table", "append", "db.m", str(tmp_path / "x.txt"), *base]) == 1  # missing
    assert "x.txt" in capsys.readouterr().err
    (tmp_path / "x.txt").write_text("1,2")
    assert main(["table", "append", "db.m", str(tmp_path / "x.txt"), *base]) == 1  # unknown format
    assert "unknown input format" in capsys.readouterr().err
    (tmp_path / "bad.csv").write_text("id,k\n1,2,3,4\n")
    assert main(["table", "append", "db.m", str(tmp_path / "bad.csv"), *base]) == 1  # malformed CSV
    assert "Traceback" not in capsys.readouterr().err


def test_step_bars_draw_per_step_on_a_tty():
    import io as _io

    from paimon_engine.cli_commands import Progress, _StepBars

    class Tty(_io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    bars = _StepBars()
    real = Progress.__init__
    try:
        Progress.__init__ = lambda self, total, label="", stream=None, unit="": real(self, total, label, out, unit)
        for step, done, total in (("read", 1, 2), ("read", 2, 2), ("write", 40, 40)):
            bars(step, done, total)
        bars.close()
    finally:
        Progress.__init__ = real
    text = out.getvalue()
    assert "read [" in text and "2/2" in text and "write [" in text and "40/40" in text
