import datetime
import decimal

import pyarrow as pa
import pytest

from paimon_engine import _speedups
from paimon_engine.errors import CorruptFileError
from paimon_engine.scan.avro import read_manifest_entries
from paimon_engine.table.catalog import FileSystemCatalog
from paimon_engine.table.manifest import read_manifest
from paimon_engine.table.manifest_list import read_manifest_list
from paimon_engine.table.partitioning import PartitionSpec
from paimon_engine.table.schema import Schema

from .builder import MiniTable


def _same(a, b):
    assert (a.status, a.snapshot_id, a.sequence_number, a.file_sequence_number) == \
        (b.status, b.snapshot_id, b.sequence_number, b.file_sequence_number)
    for s in ("content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes",
              "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds",
              "split_offsets", "equality_ids", "referenced_data_file", "spec_id"):
        assert getattr(a.data_file, s) == getattr(b.data_file, s), s


@pytest.mark.parametrize("impl", ["compiled", "twin"])
def test_fast_reader_matches_table_reader(tmp_path, impl, monkeypatch):
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
        got = read_manifest_entries(t.io, m, pt, metrics=True)
        assert len(ref) == len(got)
        for a, b in zip(ref, got):
            _same(a, b)
            n += 1
        lean = read_manifest_entries(t.io, m, pt, metrics=False)
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
            read_manifest_entries(t.io, m, None, data=bad)
        assert m.manifest_path in str(ei.value)
