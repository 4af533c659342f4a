"""Names are checked in one place, deletes stay inside what the operation owns, non-empty namespaces survive."""
import datetime
import json
import os
import sqlite3
import time

import pyarrow as pa
import pytest

from paimon_engine import errors
from paimon_engine.errors import (InvalidArgumentError, InvalidIdentifierError, NamespaceNotEmptyError,
                                  NotFoundError, PaimonEngineError, UnsafeLocationError)
from paimon_engine.expressions import col
from paimon_engine.catalog import FileSystemCatalog, SqlCatalog
from paimon_engine.table.data_writer import prepare_arrow, write_data_files
from paimon_engine.catalog.identifiers import MAX_PART_BYTES, check_part, parse_identifier

from .conftest import sample
from .pg_fixture import sql_catalog_uri

BAD_PARTS = [
    ("..", "relative"), (".", "relative"), ("a/b", "separator"), ("a\\b", "separator"), ("a\x00b", "control"),
    ("tab\there", "control"), ("del\x7f", "control"), ("nl\nx", "control"), ("c1\x85", "control"),
    ("ls\u2028x", "line separator"), ("", "empty"), ("x" * (MAX_PART_BYTES + 1), "bytes"),
    ("\u00e9" * 128, "bytes"), ("x" * 10_000, "bytes"),
]


def tree(root):
    """Every path below ``root`` (files and directories), to prove a refused call touched nothing."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def make_catalog(kind, root):
    if kind == "fs":
        return FileSystemCatalog(str(root / "wh"))
    return SqlCatalog("default", uri=sql_catalog_uri(kind, root), warehouse=str(root / "wh"))


@pytest.mark.parametrize("part,why", BAD_PARTS, ids=[repr(p[:12]) for p, _ in BAD_PARTS])
def test_check_part_refuses(part, why):
    with pytest.raises(InvalidIdentifierError) as info:
        check_part(part)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, PaimonEngineError)
    assert err.part == part
    assert why in err.reason
    assert len(str(err)) < 300          # a 10,000-character name is not echoed whole


def test_check_part_accepts_the_limit_and_unicode():
    assert check_part("x" * MAX_PART_BYTES) == "x" * MAX_PART_BYTES
    assert check_part("\u00e9" * 127) == "\u00e9" * 127        # 254 bytes
    assert check_part("sales_2024-Q1 \u65e5\u672c") == "sales_2024-Q1 \u65e5\u672c"
    assert parse_identifier("a.b.t") == (("a", "b"), "t")
    with pytest.raises(InvalidIdentifierError, match="namespace separator"):
        parse_identifier(("a.b", "t"))           # a dot inside a tuple part would name another namespace
    with pytest.raises(InvalidIdentifierError, match="needs a namespace"):
        parse_identifier("t")
    with pytest.raises(InvalidIdentifierError, match="string"):
        parse_identifier(("a", 3))
    assert "InvalidIdentifierError" in errors.__all__ and "NamespaceNotEmptyError" in errors.__all__


def _calls(cat, part):
    """Every catalog method taking a namespace or identifier, with ``part`` in the namespace and in the name."""
    schema = sample().schema
    calls = [
        ("create_namespace", lambda: cat.create_namespace(("ok", part))),
        ("drop_namespace", lambda: cat.drop_namespace((part,))),
        ("list_tables", lambda: cat.list_tables((part,))),
        ("namespace_exists", lambda: cat.namespace_exists(("ok", part))),
        ("create_table ns", lambda: cat.create_table((part, "t"), schema)),
        ("create_table name", lambda: cat.create_table(("ok", part), schema)),
        ("load_table", lambda: cat.load_table(("ok", part))),
        ("table_exists", lambda: cat.table_exists((part, "t"))),
        ("drop_table", lambda: cat.drop_table(("ok", part), purge=True)),
        ("refresh", lambda: cat.refresh(("ok", part))),
    ]
    if isinstance(cat, SqlCatalog):
        calls += [
            ("rename_table from", lambda: cat.rename_table(("ok", part), ("ok", "t2"))),
            ("rename_table to", lambda: cat.rename_table(("ok", "t"), ("ok", part))),
            ("register_table", lambda: cat.register_table(("ok", part), cat.load_table("ok.t").metadata_location)),
            ("load_namespace_properties", lambda: cat.load_namespace_properties((part,))),
        ]
    return calls


@pytest.mark.parametrize("kind", ["fs", "sql", "pg"])
def test_every_catalog_method_refuses_bad_names_before_touching_storage(tmp_path, kind):
    cat = make_catalog(kind, tmp_path)
    cat.create_namespace("ok")
    cat.create_table("ok.t", sample().schema).append(sample(5))
    before = tree(tmp_path)
    db = (tmp_path / "cat.db").read_bytes() if kind == "sql" else None
    for part, _ in BAD_PARTS:
        if part == "":
            continue          # an empty part in a tuple is covered below by the string forms
        for what, call in _calls(cat, part):
            with pytest.raises(InvalidIdentifierError) as info:
                call()
            assert info.value.part == part, what
    for bad in ("", "a..b", ".a", "a."):
        with pytest.raises(InvalidIdentifierError):
            cat.create_namespace(bad)
        with pytest.raises(InvalidIdentifierError):
            cat.create_table(bad + ".t" if bad else "t", sample().schema)
    assert tree(tmp_path) == before
    if db is not None:
        assert (tmp_path / "cat.db").read_bytes() == db
        assert cat.list_namespaces() == [("ok",)]
    assert cat.load_table("ok.t").to_arrow().num_rows == 5


@pytest.mark.parametrize("kind", ["fs", "sql", "pg"])
def test_dotdot_namespaces_cannot_reach_above_the_warehouse(tmp_path, kind):
    parent = tmp_path / "parent"
    parent.mkdir()
    cat = make_catalog(kind, parent)
    cat.create_namespace("db")
    cat.create_table("db.t", sample().schema).append(sample(3))
    sentinel = parent / "keep.txt"
    sentinel.write_text("precious")
    sentinel2 = tmp_path / "keep-too.txt"
    sentinel2.write_text("precious")
    for ns in [("..",), ("..", ".."), "..", ("db", ".."), ("db", "..", "..")]:
        with pytest.raises(InvalidIdentifierError):
            cat.drop_namespace(ns)
    for ns in [("..", "evil"), "...evil", ("..", "..", "evil")]:
        with pytest.raises(InvalidIdentifierError):
            cat.create_namespace(ns)
    assert sentinel.read_text() == "precious" and sentinel2.read_text() == "precious"
    assert not (tmp_path / "evil").exists() and not (parent / "evil").exists()
    assert cat.load_table("db.t").to_arrow().num_rows == 3


@pytest.mark.parametrize("kind", ["fs", "sql", "pg"])
def test_drop_namespace_refuses_nested_tables_and_namespaces(tmp_path, kind):
    cat = make_catalog(kind, tmp_path)
    cat.create_namespace("a")
    cat.create_namespace(("a", "b"))
    t = cat.create_table("a.b.t", sample().schema)
    t.append(sample(4))
    with pytest.raises(NamespaceNotEmptyError, match="not empty"):
        cat.drop_namespace("a")
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace(("a", "b"))
    assert cat.load_table("a.b.t").to_arrow().num_rows == 4
    cat.drop_table("a.b.t", purge=True)
    with pytest.raises(NamespaceNotEmptyError, match="b"):
        cat.drop_namespace("a")                  # the empty namespace a.b is still below it
    cat.drop_namespace(("a", "b"))
    cat.drop_namespace("a")
    assert not cat.namespace_exists("a")
    with pytest.raises(NotFoundError):
        cat.drop_namespace("a")


@pytest.mark.parametrize("kind", ["sql", "pg"])
def test_sql_namespace_prefix_is_not_a_like_pattern(tmp_path, kind):
    cat = make_catalog(kind, tmp_path)
    cat.create_namespace("axb")
    cat.create_namespace(("axb", "c"))
    assert not cat.namespace_exists("a_b")       # '_' is a LIKE wildcard; it must not match 'axb'
    assert not cat.namespace_exists("a%")
    cat.create_namespace("a_b")
    cat.drop_namespace("a_b")                    # 'axb.c' is not below 'a_b'
    assert cat.namespace_exists("axb")


@pytest.mark.parametrize("kind", ["sql", "pg"])
def test_sql_namespace_that_cannot_be_a_directory_name(tmp_path, kind):
    cat = make_catalog(kind, tmp_path)
    with pytest.raises(InvalidIdentifierError, match="252"):
        cat.create_namespace(("x" * 200, "y" * 60))
    cat.create_namespace(("x" * 200, "y" * 51))
    cat.create_table(("x" * 200, "y" * 51, "t"), sample().schema).append(sample(2))


def test_fs_namespace_and_table_dirs_do_not_nest(tmp_path):
    cat = make_catalog("fs", tmp_path)
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(3))
    with pytest.raises(InvalidArgumentError, match="is a table"):
        cat.create_namespace(("db", "t", "inner"))
    with pytest.raises(InvalidArgumentError, match="is a table"):
        cat.create_table("db.t.inner", sample().schema)
    with pytest.raises(NotFoundError):
        cat.drop_namespace(("db", "t"))          # a table directory is not a namespace
    cat.create_namespace(("db", "n"))
    cat.create_table("db.n.x", sample().schema)
    with pytest.raises(InvalidArgumentError, match="namespace holding tables"):
        cat.create_table("db.n", sample().schema)
    assert cat.load_table("db.t").to_arrow().num_rows == 3
    assert cat.list_tables(("db", "n")) == [("db", "n", "x")]


def test_fs_namespace_with_any_file_is_not_empty(tmp_path):
    cat = make_catalog("fs", tmp_path)
    cat.create_namespace("n")
    (tmp_path / "wh" / "n" / "notes.txt").write_text("mine")
    with pytest.raises(NamespaceNotEmptyError, match="notes.txt"):
        cat.drop_namespace("n")
    assert (tmp_path / "wh" / "n" / "notes.txt").read_text() == "mine"


def test_fs_symlink_out_of_the_warehouse_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    cat = make_catalog("fs", tmp_path)
    ext = cat.create_table_at(str(outside / "t"), sample().schema)
    ext.append(sample(5))
    (outside / "keep.txt").write_text("precious")
    (tmp_path / "wh" / "db").mkdir(parents=True)
    os.symlink(outside / "t", tmp_path / "wh" / "db" / "t")       # the table dir points outside
    os.symlink(outside, tmp_path / "wh" / "link")                  # a namespace dir points outside
    before = tree(outside)
    with pytest.raises(UnsafeLocationError, match="not inside"):
        cat.drop_table("db.t", purge=True)
    with pytest.raises(UnsafeLocationError):
        cat.drop_table("db.t")
    with pytest.raises(UnsafeLocationError):
        cat.drop_namespace("link")
    with pytest.raises(UnsafeLocationError):
        cat.create_table("link.t2", sample().schema)
    assert tree(outside) == before
    assert cat.load_table_at(str(outside / "t")).to_arrow().num_rows == 5


def test_purge_stays_inside_the_table(tmp_path):
    cat = make_catalog("sql", tmp_path)
    cat.create_namespace("db")
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(5))
    t.delete(col("id") == 2)
    loc = t.location
    keep = tmp_path / "wh" / "keep.txt"
    keep.write_text("precious")
    other = cat.create_table("db.other", sample().schema)
    other.append(sample(2))
    cat.drop_table("db.t", purge=True)
    assert not any(f for _, _, fs in os.walk(loc) for f in fs)     # every file of the table is gone
    assert keep.read_text() == "precious"
    assert cat.load_table("db.other").to_arrow().num_rows == 2


def _external_file(t, where):
    """A data file written outside the table location, added to the table."""
    schema = t.schema()
    files = write_data_files(t.io, str(where), prepare_arrow(sample(3, start=900), schema), t.spec(), schema,
                             t.metadata.properties)
    p = t.new_snapshot("append")
    for f in files:
        p.add_data_file(f)
    p.commit()
    return [f.file_path for f in files]


def test_purge_refuses_files_outside_the_table_and_deletes_nothing(tmp_path):
    cat = make_catalog("sql", tmp_path)
    cat.create_namespace("db")
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(5))
    ext = _external_file(t, tmp_path / "elsewhere")
    before = tree(tmp_path)
    with pytest.raises(UnsafeLocationError, match="not inside"):
        cat.drop_table("db.t", purge=True)
    assert tree(tmp_path) == before
    assert cat.load_table("db.t").to_arrow().num_rows == 8        # still in the catalog, readable
    cat.drop_table("db.t")                                        # without purge nothing is deleted
    assert all(os.path.exists(p) for p in ext)


@pytest.mark.parametrize("kind", ["fs", "sql", "pg"])
def test_table_location_cannot_be_a_root_or_the_warehouse(tmp_path, kind):
    cat = make_catalog(kind, tmp_path)
    cat.create_namespace("db")
    for loc in ("/", str(tmp_path / "wh"), str(tmp_path)):
        with pytest.raises(InvalidArgumentError):
            cat.create_table("db.t", sample().schema, location=loc)
    assert tree(tmp_path / "wh") <= {"db"}


@pytest.mark.parametrize("kind", ["sql", "pg"])
def test_sql_table_locations_do_not_overlap(tmp_path, kind):
    cat = make_catalog(kind, tmp_path)
    cat.create_namespace("db")
    a = cat.create_table("db.a", sample().schema)
    with pytest.raises(InvalidArgumentError, match="overlaps"):
        cat.create_table("db.b", sample().schema, location=a.location + "/data/b")
    with pytest.raises(InvalidArgumentError, match="overlaps"):
        cat.create_table("db.c", sample().schema, location=str(tmp_path / "wh" / "db.db"))


def test_orphan_removal_refuses_a_location_holding_another_table(tmp_path):
    cat = make_catalog("sql", tmp_path)
    cat.create_namespace("db")
    a = cat.create_table("db.a", sample().schema)
    a.append(sample(3))
    # a table made elsewhere and registered at a location inside a's (create_table refuses that overlap)
    inner = FileSystemCatalog(str(tmp_path / "scratch")).create_table_at(a.location + "/data/inner",
                                                                          sample().schema)
    inner.append(sample(2))
    cat.register_table("db.inner", inner.metadata_location)
    before = tree(tmp_path)
    with pytest.raises(UnsafeLocationError, match="another table"):
        a.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000)
    assert tree(tmp_path) == before


def test_orphan_removal_refuses_hostile_metadata_location(tmp_path):
    cat = make_catalog("sql", tmp_path)
    cat.create_namespace("db")
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(3))
    doc = json.loads(open(t.metadata_location).read())
    (tmp_path / "keep.txt").write_text("precious")
    for evil_location in ("/", str(tmp_path), str(tmp_path / "wh")):
        doc["location"] = evil_location
        path = tmp_path / "wh" / f"evil-{len(evil_location)}.metadata.json"
        path.write_text(json.dumps(doc))
        name = f"db.evil{len(evil_location)}"
        with pytest.raises(InvalidArgumentError, match="cannot be owned"):
            cat.register_table(name, str(path))
        # the same pointer written into the catalog database by another tool
        cat.register_table(name, t.metadata_location)
        with sqlite3.connect(tmp_path / "cat.db") as conn:
            conn.execute("UPDATE iceberg_tables SET metadata_location=? WHERE table_name=?",
                         (str(path), name.split(".")[1]))
        ev = cat.load_table(name)
        before = tree(tmp_path)
        with pytest.raises(UnsafeLocationError):
            ev.append(sample(1, start=500))     # data, manifests, metadata would land under that location
        with pytest.raises(UnsafeLocationError):
            ev.delete(col("id") == 1)
        with pytest.raises(UnsafeLocationError):
            ev.new_snapshot("append")
        with pytest.raises(UnsafeLocationError):
            ev.set_properties({"a": "b"})
        assert tree(tmp_path) == before
        with pytest.raises(UnsafeLocationError):
            ev.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True)
        with pytest.raises(UnsafeLocationError):
            ev.expire_snapshots(older_than_ms=int(time.time() * 1000) + 60_000)
        with pytest.raises(UnsafeLocationError):
            cat.drop_table(name, purge=True)
    assert (tmp_path / "keep.txt").read_text() == "precious"
    assert cat.load_table("db.t").to_arrow().num_rows == 3
    # a file-system table whose metadata names another location
    fs = make_catalog("fs", tmp_path / "f")
    ft = fs.create_table("db.t", sample().schema)
    ft.append(sample(2))
    doc = json.loads(open(ft.metadata_location).read())
    doc["location"] = str(tmp_path)
    open(ft.metadata_location, "w").write(json.dumps(doc))
    with pytest.raises(UnsafeLocationError, match="lives in"):
        fs.load_table("db.t").remove_orphan_files(older_than=int(time.time() * 1000) + 60_000)
    assert (tmp_path / "keep.txt").read_text() == "precious"


def test_expire_refuses_files_outside_the_table(tmp_path):
    cat = make_catalog("sql", tmp_path)
    cat.create_namespace("db")
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(5))
    ext = _external_file(t, tmp_path / "elsewhere")
    t.delete(col("id") >= 900)                  # the external file loses all its rows and leaves the table
    with pytest.raises(UnsafeLocationError, match="left in place"):
        t.expire_snapshots(older_than_ms=int(time.time() * 1000) + 60_000)
    assert all(os.path.exists(p) for p in ext)
    assert len(t.refresh().snapshots()) == 1    # the snapshots were expired; only file deletion was refused
    assert sorted(t.to_arrow().column("id").to_pylist()) == list(range(5))


def test_failed_commit_cleans_only_its_own_files(tmp_path):
    cat = make_catalog("fs", tmp_path)
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(5))
    schema = t.schema()
    ext = write_data_files(t.io, str(tmp_path / "elsewhere"), prepare_arrow(sample(2, start=50), schema),
                           t.spec(), schema, t.metadata.properties)
    own = t._write(sample(2, start=60))
    p = t.new_snapshot("overwrite")
    for f in ext + own:
        p.add_data_file(f)
    p.remove_file(ext[0])                       # not live: validation fails, the commit aborts
    with pytest.raises(errors.CommitFailedError):
        p.commit()
    assert all(os.path.exists(f.file_path) for f in ext)
    assert not any(os.path.exists(f.file_path) for f in own)


def test_remove_orphan_files_window_and_dry_run(tmp_path):
    cat = make_catalog("fs", tmp_path)
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(5))
    stray = os.path.join(t.location, "data", "stray.parquet")
    with open(stray, "wb") as f:
        f.write(b"left by a killed writer")
    assert t.remove_orphan_files() == []                          # default window: 3 days
    assert t.remove_orphan_files(datetime.datetime.now() - datetime.timedelta(hours=1)) == []
    soon = datetime.datetime.now() + datetime.timedelta(minutes=1)
    assert t.remove_orphan_files(soon, dry_run=True) == [stray]
    assert os.path.exists(stray)
    old = time.time() - 4 * 24 * 3600
    os.utime(stray, (old, old))
    assert t.remove_orphan_files(dry_run=True) == [stray]
    assert t.remove_orphan_files() == [stray]
    assert not os.path.exists(stray)
    assert t.to_arrow().num_rows == 5
    with pytest.raises(InvalidArgumentError):
        t.remove_orphan_files(older_than="yesterday")
    with pytest.raises(InvalidArgumentError):
        t.remove_orphan_files(1, older_than_ms=2)
