import datetime
import decimal

import pyarrow as pa
import pytest

from paimon_engine import _speedups
from paimon_engine.errors import CorruptFileError
from paimon_engine.catalog import FileSystemCatalog
from paimon_engine.spec.manifest import read_manifest
from paimon_engine.spec.manifest_list import read_manifest_list
from paimon_engine.spec.partitioning import PartitionSpec
from paimon_engine.spec.schema import Schema

from .builder import MiniTable


def _same(a, b):
    assert (a.status, a.snapshot_id, a.sequence_number, a.file_sequence_number) == \
        (b.status, b.snapshot_id, b.sequence_number, b.file_sequence_number)
    for s in ("content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes",
              "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds",
              "split_offsets", "equality_ids", "referenced_data_file", "spec_id"):
        assert getattr(a.data_file, s) == getattr(b.data_file, s), s


def _fastavro_entries(t, m):
    """The same manifest decoded by fastavro, an independent Avro implementation."""
    import io

    import fastavro
    return list(fastavro.reader(io.BytesIO(t.io.read_bytes(m.manifest_path)), return_record_name=False))


@pytest.mark.parametrize("impl", ["compiled", "twin"])
def test_manifest_reader_modes_agree_with_an_independent_decoder(tmp_path, impl, monkeypatch):
    k = _speedups.compiled("avro") if impl == "compiled" else _speedups.twin("avro")
    if k is None:
        pytest.skip("not built")
    monkeypatch.setitem(_speedups._loaded, "avro", k)
    tbl = pa.table({"id": pa.array(range(20), pa.int64()),
                    "d": pa.array([datetime.date(2024, 1, 1 + i % 3) for i in range(20)]),
                    "dec": pa.array([decimal.Decimal("1.25") * (i % 2) for i in range(20)], pa.decimal128(9, 2)),
                    "s": [None if i % 5 == 0 else f"v{i}" for i in range(20)]})
    schema = Schema.from_arrow(tbl.schema)
    t = MiniTable(tmp_path, schema, PartitionSpec.build(schema, ("d", "day"), ("dec", "identity"),
                                                        ("s", "truncate[2]")))
    dfs = t.append(tbl)
    t.commit([t.write_position_deletes(dfs[0].file_path, [0], dfs[0].partition, referenced=True)])
    t.commit([t.write_equality_deletes([4], [("v7",), (None,)], dfs[1].partition)])
    md = t.md
    n = 0
    for m in read_manifest_list(t.io, md.current_snapshot().manifest_list):
        pt = md.spec(m.partition_spec_id).partition_type(md.schema())
        ref = read_manifest(t.io, m, pt, include_deleted=False)
        got = read_manifest(t.io, m, pt, include_deleted=False, metrics=True, full=False)
        assert len(ref) == len(got)
        for a, b in zip(ref, got):
            _same(a, b)
            n += 1
        raw = [r for r in _fastavro_entries(t, m) if r["status"] != 2]
        assert len(raw) == len(ref)
        for r, e in zip(raw, ref):
            df = r["data_file"]
            assert (r["status"], df["file_path"], df["record_count"], df["file_size_in_bytes"]) == \
                (e.status, e.data_file.file_path, e.data_file.record_count, e.data_file.file_size_in_bytes)
            for name in ("column_sizes", "value_counts", "null_value_counts", "lower_bounds", "upper_bounds"):
                expect = None if df.get(name) is None else {kv["key"]: kv["value"] for kv in df[name]}
                assert getattr(e.data_file, name) == expect, name
            assert e.data_file.partition[0] == (df["partition"]["d_day"] - datetime.date(1970, 1, 1)).days
        lean = read_manifest(t.io, m, pt, include_deleted=False, metrics=False, full=False)
        assert all(e.data_file.lower_bounds is None for e in lean)
    assert n > 5


def test_corrupt_manifest(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", pa.schema([("id", pa.int64())]))
    t.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    (m,) = read_manifest_list(t.io, t.metadata.current_snapshot().manifest_list)
    raw = open(m.manifest_path.replace("file://", ""), "rb").read()
    for bad in (raw[:len(raw) // 2], raw[:-1], b"xxxx" + raw[4:]):
        with pytest.raises(CorruptFileError) as ei:
            read_manifest(t.io, m, None, data=bad)
        assert m.manifest_path in str(ei.value)


def _one_manifest(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", pa.schema([("id", pa.int64())]))
    t.append(pa.table({"id": pa.array(range(100), pa.int64())}))
    (m,) = read_manifest_list(t.io, t.metadata.current_snapshot().manifest_list)
    return t, m, open(m.manifest_path.replace("file://", ""), "rb").read()


def _zigzag(v):
    """Avro's long encoding: zigzag, then unsigned LEB128."""
    from paimon_engine.encoding import encode_uvarint64, zigzag_encode
    return encode_uvarint64(int(zigzag_encode([v])[0]))


def _first_block(raw):
    """Offset of the first data block (just after the header's 16-byte sync marker) and the marker."""
    import fastavro
    import io
    r = fastavro.reader(io.BytesIO(raw))
    sync = r._header["sync"]
    pos = raw.index(sync) + 16
    return pos, sync


def test_absurd_block_record_count_is_refused_without_allocating(tmp_path):
    t, m, raw = _one_manifest(tmp_path)
    pos, _ = _first_block(raw)
    # the block's record count becomes 2^60: the reader must refuse it from the block size, not try it
    count_len = 1
    while raw[pos + count_len - 1] & 0x80:
        count_len += 1
    bad = raw[:pos] + _zigzag(1 << 60) + raw[pos + count_len:]
    with pytest.raises(CorruptFileError, match="claims") as ei:
        read_manifest(t.io, m, None, data=bad)
    assert ei.value.path == m.manifest_path and ei.value.offset == pos


def test_deflate_block_expanding_beyond_the_bound_is_refused(tmp_path, monkeypatch):
    import zlib

    from paimon_engine.formats import avro
    t, m, raw = _one_manifest(tmp_path)
    pos, sync = _first_block(raw)
    bomb = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = bomb.compress(b"\0" * (4 << 20)) + bomb.flush()
    block = _zigzag(1) + _zigzag(len(body)) + body + sync
    data = raw[:pos] + block
    monkeypatch.setattr(avro, "MIN_BLOCK_LIMIT", 1 << 20)
    with pytest.raises(CorruptFileError, match="expands to more than") as ei:
        read_manifest(t.io, m, None, data=data)
    assert ei.value.offset == pos


def test_manifest_list_is_read_by_the_same_decoder(tmp_path):
    t, m, raw = _one_manifest(tmp_path)
    path = t.metadata.current_snapshot().manifest_list
    data = t.io.read_bytes(path)
    for bad in (data[:len(data) // 2], b"Obj\x02" + data[4:]):
        p = str(tmp_path / "bad.avro")
        open(p, "wb").write(bad)
        with pytest.raises(CorruptFileError) as ei:
            read_manifest_list(t.io, p)
        assert "bad.avro" in str(ei.value)


def test_fastavro_is_out_of_every_read_path(tmp_path, monkeypatch):
    import sys
    t, m, raw = _one_manifest(tmp_path)
    monkeypatch.setitem(sys.modules, "fastavro", None)   # importing it now fails
    assert t.scan().to_arrow().num_rows == 100
    assert len(t.data_files()) == 1
    assert t.to_arrow().num_rows == 100
    assert len(read_manifest(t.io, m)) == 1


def test_wide_decimal_bounds_are_exact():
    from paimon_engine import types as T
    from paimon_engine.spec.conversions import from_bound_bytes
    for unscaled in (2 ** 94 + 12345, -(10 ** 37) + 7, 10 ** 38 - 1):
        raw = unscaled.to_bytes(16, "big", signed=True)
        got = from_bound_bytes(T.DecimalType(38, 3), raw)
        assert got.as_tuple().digits == tuple(int(ch) for ch in str(abs(unscaled)))
        assert got.as_tuple().exponent == -3


def test_planning_shares_a_decoded_manifest_list_only_while_its_bytes_are_the_same(tmp_path, monkeypatch):
    import shutil
    from paimon_engine.spec import manifest_list as ML
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", pa.schema([("k", pa.int32()), ("v", pa.int64())]), [("k", "identity")])
    for k in range(3):
        t.append(pa.table({"k": pa.array([k] * 4, pa.int32()), "v": pa.array(range(4), pa.int64())}))
    t2 = cat.create_table("db.t2", pa.schema([("k", pa.int32()), ("v", pa.int64())]))
    t2.append(pa.table({"k": pa.array([9], pa.int32()), "v": pa.array([1], pa.int64())}))
    decoded = []
    real = ML._decode_manifest_list
    monkeypatch.setattr(ML, "_decode_manifest_list", lambda data, path: decoded.append(path) or real(data, path))
    path = t.metadata.current_snapshot().manifest_list
    first = read_manifest_list(t.io, path, shared=True)
    again = read_manifest_list(t.io, path, shared=True)
    assert decoded == [path] and len(first) == 3 and all(a is b for a, b in zip(first, again))
    assert first is not again                                  # the list itself is the caller's
    fresh = read_manifest_list(t.io, path)                     # without shared=True: objects of its own
    assert len(decoded) == 2 and not any(a is b for a, b in zip(first, fresh))
    assert [len(t.scan(filter=f"k = {k}").plan_files()) for k in range(4)] == [1, 1, 1, 0]
    assert len(decoded) == 2                                   # planning used the shared list
    # the same path with other bytes (here another table's list copied over it) is decoded again
    shutil.copy(t2.metadata.current_snapshot().manifest_list, path)
    assert [m.manifest_path for m in read_manifest_list(t.io, path, shared=True)] == \
        [m.manifest_path for m in read_manifest_list(t2.io, t2.metadata.current_snapshot().manifest_list)]
    assert len(decoded) == 4


def test_inside_table_answers_are_remembered_per_table_root(tmp_path):
    from paimon_engine.spec.metadata import TableMetadata
    from paimon_engine.spec.snapshots import inside_table_check

    def md(location):
        m = TableMetadata(location=location, properties={}, metadata_location=f"{location}/metadata/v1.metadata.json")
        return m

    a, b = md(str(tmp_path / "a")), md(str(tmp_path / "b"))
    inside = str(tmp_path / "a" / "metadata" / "snap-1.avro")
    inside_table_check(a)(inside, "manifest list")
    inside_table_check(a)(inside, "manifest list")             # answered from the memo
    with pytest.raises(CorruptFileError, match="outside the table location") as ei:
        inside_table_check(b)(inside, "manifest list")         # another root: checked, and refused
    assert ei.value.path == b.metadata_location
    with pytest.raises(CorruptFileError, match="outside the table location"):
        inside_table_check(a)(str(tmp_path / "a" / ".." / "b" / "x.avro"), "manifest")


def test_shared_manifest_lists_are_bounded(tmp_path, monkeypatch):
    from paimon_engine.spec import manifest_list as ML
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", pa.schema([("v", pa.int64())]))
    lists = []
    for i in range(4):
        t.append(pa.table({"v": pa.array([i], pa.int64())}))
        lists.append(t.metadata.current_snapshot().manifest_list)
    sizes = [len(t.io.read_bytes(p)) for p in lists]
    monkeypatch.setattr(ML, "_SHARED", {})
    monkeypatch.setattr(ML, "_SHARED_MAX_TOTAL", sizes[0] + sizes[1] + sizes[2] - 1)   # room for two of them
    for p in lists[:3]:
        read_manifest_list(t.io, p, shared=True)
    assert [len(k) for k in ML._SHARED] == sizes[1:3]
    monkeypatch.setattr(ML, "_SHARED_ENTRIES", 1)
    read_manifest_list(t.io, lists[3], shared=True)
    assert [len(k) for k in ML._SHARED] == sizes[3:4]
    monkeypatch.setattr(ML, "_SHARED_MAX_BYTES", sizes[0] - 1)                         # too big to keep
    read_manifest_list(t.io, lists[0], shared=True)
    assert [len(k) for k in ML._SHARED] == sizes[3:4]
    assert [m.manifest_path for m in read_manifest_list(t.io, lists[0], shared=True)] == \
        [m.manifest_path for m in read_manifest_list(t.io, lists[0])]
