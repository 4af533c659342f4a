"""paimon-engine explains itself: plain-text help with an example for every command, --version, exit codes
0/1/2 from a real process, and progress bars that appear on a terminal only."""

import argparse
import os
import re
import subprocess
import sys
from importlib.metadata import version as dist_version
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import paimon_engine
from paimon_engine.cli import _build_parser

REPO = Path(__file__).resolve().parents[2]
# Markup that reads as noise in a terminal: RST roles, literals, directives and links, Markdown code spans.
MARKUP = [re.compile(p, re.M) for p in (r"``", r":(class|func|meth|mod|attr|data|exc|ref|doc):", r"^\s*\.\. ",
                                        r"`[^`\n]+`_", r"::\s*$", r"(?<![\w'\"])`[^`\n]+`(?![\w'\"])")]


def _commands(parser, path=()):
    """(path, parser) for the main parser and every sub-command, nested ones included."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, path + (name,))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["COLUMNS"] = "80"
    return env


def _cli(*argv, cwd=None, **kw):
    return subprocess.run([sys.executable, "-m", "paimon_engine", *argv], capture_output=True, text=True,
                          cwd=cwd, env=_env(), timeout=300, **kw)


def test_every_command_has_plain_text_help_with_an_example_and_the_exit_codes():
    commands = list(_commands(_build_parser()))
    names = {" ".join(p) for p, _ in commands}
    assert {"", "demo", "kernels", "inspect", "cat", "table", "catalog", "catalog list", "table info",
            "table history", "table snapshots", "table files", "table scan", "table append", "table compact",
            "table expire", "table remove-orphans"} <= names
    for path, parser in commands:
        text = parser.format_help()
        where = "paimon-engine " + " ".join(path)
        for pattern in MARKUP:
            assert not pattern.search(text), f"{where} --help shows markup {pattern.pattern!r}:\n{text}"
        assert "exit codes:" in text and "2  usage error" in text, where
        examples = re.findall(r"^  (paimon-engine .*)$", text, re.M)
        assert examples, f"{where} --help has no example"
        if path:
            assert any(e.startswith("paimon-engine " + " ".join(path)) for e in examples), where
        assert max(len(line) for line in text.splitlines()) <= 80, where


def test_help_and_version_from_a_process():
    r = _cli("table", "expire", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: paimon-engine table expire")
    assert "--retain-last" in r.stdout and "example:" in r.stdout
    r = _cli("--version")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.strip() == f"paimon-engine {dist_version('paimon_engine')}"
    assert dist_version("paimon_engine") == paimon_engine.__version__


def test_exit_codes_zero_one_two(tmp_path):
    from paimon_engine.formats.row import RowFileWriter
    from paimon_engine.types import parse_paimon_type
    schema = "ROW<id BIGINT, name STRING>"
    path = tmp_path / "a.row"
    with RowFileWriter(str(path), parse_paimon_type(schema)) as w:
        w.write(pa.table({"id": pa.array(range(10), pa.int64()), "name": [str(i) for i in range(10)]}))
    ok = _cli("cat", str(path), "--schema", schema, "--rows", "2:4", "--json")
    assert ok.returncode == 0 and ok.stdout.splitlines() == ['{"id": 2, "name": "2"}', '{"id": 3, "name": "3"}']
    assert ok.stderr == ""
    # 1: the command could not be done; one line on stderr, nothing on stdout
    (tmp_path / "bad.row").write_bytes(path.read_bytes()[:-5])
    for argv, needle in ((["inspect", str(tmp_path / "missing.row")], "missing.row"),
                         (["inspect", str(tmp_path / "bad.row")], "bad.row"),
                         (["table", "info", str(tmp_path / "no-table")], "no-table")):
        r = _cli(*argv)
        assert r.returncode == 1, (argv, r.stderr)
        assert r.stdout == "" and r.stderr.startswith("paimon-engine: error: ") and needle in r.stderr
        assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
    # 2: the command line is wrong; argparse's usage message
    for argv in (["nonsense"], ["cat", str(path)], ["cat", str(path), "--schema", schema, "--rows", "1-2"],
                 ["table", "scan", "db.t", "--limit", "many"], ["catalog", "list"], ["table"]):
        r = _cli(*argv)
        assert r.returncode == 2, (argv, r.stderr)
        assert r.stderr.startswith("usage: paimon-engine") and "Traceback" not in r.stderr, argv


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    from paimon_engine.formats.row import RowFileWriter
    from paimon_engine.types import parse_paimon_type
    schema = "ROW<id BIGINT>"
    with RowFileWriter(str(tmp_path / "big.row"), parse_paimon_type(schema)) as w:
        w.write(pa.table({"id": pa.array(range(200_000), pa.int64())}))
    cmd = (f"{sys.executable} -m paimon_engine cat {tmp_path / 'big.row'} --schema '{schema}' --json | head -n 2")
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, env=_env(),
                       timeout=300)
    assert r.stdout.splitlines() == ['{"id": 0}', '{"id": 1}']
    assert r.returncode == 0 and r.stderr == ""


# -- progress bars -------------------------------------------------------------------------------------------
def _run_on_a_terminal(argv, cwd):
    """Run the CLI with stderr on a pseudo-terminal (stdout piped): -> (returncode, stdout, terminal text)."""
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "paimon_engine", *argv], stdout=subprocess.PIPE,
                                stderr=slave, stdin=subprocess.DEVNULL, cwd=cwd, env=_env())
    finally:
        os.close(slave)
    chunks = []
    try:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:          # EIO: the child closed the terminal's last open end
                break
            if not data:
                break
            chunks.append(data)
        out = proc.stdout.read().decode()
        proc.wait(timeout=300)
    finally:
        proc.stdout.close()
        os.close(master)
    return proc.returncode, out, b"".join(chunks).decode(errors="replace")


@pytest.fixture
def maintained_table(tmp_path):
    """A SQLite-catalog table, an input Parquet file, and the catalog arguments."""
    from paimon_engine.catalog import SqlCatalog
    uri, wh = f"sqlite:///{tmp_path}/c.db", str(tmp_path / "wh")
    cat = SqlCatalog("default", uri=uri, warehouse=wh)
    cat.create_namespace("db")
    cat.create_table("db.m", pa.schema([("id", pa.int64()), ("k", pa.int32())]), [("k", "identity")])
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": pa.array(range(300), pa.int64()),
                             "k": pa.array([i % 3 for i in range(300)], pa.int32())}), src)
    return cat, src, ["--uri", uri, "--warehouse", wh]


def test_progress_bars_on_a_terminal_and_quiet_when_piped(tmp_path, maintained_table):
    cat, src, base = maintained_table
    rc, out, tty = _run_on_a_terminal(["table", "append", "db.m", str(src), *base], tmp_path)
    assert rc == 0 and "rows" in out
    assert re.search(r"write \[#+\] 300/300 rows", tty), tty
    assert "rows" not in tty.split("\r")[-1]           # the bar is wiped when the step ends

    piped = _cli("table", "append", "db.m", str(src), *base, cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == ""

    from paimon_engine.expressions import col
    cat.load_table("db.m").delete(col("id") < 30)
    rc, out, tty = _run_on_a_terminal(["table", "compact", "db.m", *base], tmp_path)
    assert rc == 0 and re.search(r"read \[#+\] 6/6 files", tty) and re.search(r"write \[#+\] 540/540 rows", tty)

    rc, out, tty = _run_on_a_terminal(["table", "scan", "db.m", *base, "--count"], tmp_path)
    assert rc == 0 and out.strip() == "540"

    rc, out, tty = _run_on_a_terminal(["table", "scan", "db.m", *base, "--limit", "0", "--json"], tmp_path)
    assert rc == 0 and len(out.splitlines()) == 540 and re.search(r"scan \[#+\] 3/3", tty), tty


def test_expire_deletes_old_snapshots_files_and_counts_them_on_a_terminal(tmp_path, maintained_table):
    cat, src, base = maintained_table
    t = cat.load_table("db.m")
    t.append(pq.read_table(src))
    from paimon_engine.expressions import col
    t.delete(col("k") == 1)
    t.rewrite_files()
    t = cat.load_table("db.m")
    assert len(t.snapshots()) == 3
    before = {p for p in (tmp_path / "wh").rglob("*") if p.is_file()}

    rc, out, tty = _run_on_a_terminal(["table", "expire", "db.m", *base, "--json", "--retain-last", "1"], tmp_path)
    assert rc == 0, tty
    import json
    result = json.loads(out)
    t = cat.load_table("db.m")
    assert [s.snapshot_id for s in t.snapshots()] == [t.current_snapshot().snapshot_id]
    assert len(result["expired"]) == 2
    after = {p for p in (tmp_path / "wh").rglob("*") if p.is_file()}
    assert result["deleted_files"] == len(before - after) > 0
    assert f"expire: deleted: {result['deleted_files']} files" in tty, tty
    assert t.scan().count() == 200

    # nothing left to expire: quiet, no counter, exit 0
    piped = _cli("table", "expire", "db.m", *base, "--json", cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == ""
    assert '"expired": []' in piped.stdout


def test_expire_by_snapshot_id_and_keep_files(tmp_path, maintained_table, capsys):
    from paimon_engine.cli import main
    cat, src, base = maintained_table
    t = cat.load_table("db.m")
    for _ in range(3):
        t.append(pq.read_table(src))
    t = cat.load_table("db.m")
    first, second, third = [s.snapshot_id for s in t.snapshots()]
    files = {p for p in (tmp_path / "wh").rglob("*") if p.is_file()}
    assert main(["table", "expire", "db.m", *base, "--snapshot-id", str(first), "--keep-files"]) == 0
    assert [s.snapshot_id for s in cat.load_table("db.m").snapshots()] == [second, third]
    assert files <= {p for p in (tmp_path / "wh").rglob("*") if p.is_file()}
    assert "expired" in capsys.readouterr().out
    # the current snapshot is never expired, even when named
    assert main(["table", "expire", "db.m", *base, "--snapshot-id", str(third), "--json"]) == 0
    assert '"expired": []' in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["table", "expire", "db.m", *base, "--snapshot-id", "1", "--older-than-hours", "1"])
    assert exc.value.code == 2
