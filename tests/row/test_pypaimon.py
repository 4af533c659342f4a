"""Interop with pypaimon 2.1.0's FormatRowWriter / FormatRowReader, both ways."""
import datetime
import decimal
import io

import numpy as np
import pyarrow as pa
import pytest
import zstandard

pypaimon = pytest.importorskip("pypaimon")
from pypaimon.filesystem.local_file_io import LocalFileIO  # noqa: E402
from pypaimon.read.reader.format_row_reader import FormatRowReader  # noqa: E402
from pypaimon.schema import data_types as PT  # noqa: E402
from pypaimon.write.writer.format_row_writer import FormatRowWriter  # noqa: E402

from paimon_engine import types as T  # noqa: E402
from paimon_engine.formats.row import BlockIndex, Footer, RowFileReader, RowFileWriter  # noqa: E402

from .util import schema_of  # noqa: E402

FLAT = [
    ("b", "BOOLEAN"), ("i8", "TINYINT"), ("i16", "SMALLINT"), ("i32", "INT"), ("i64", "BIGINT"),
    ("f32", "FLOAT"), ("f64", "DOUBLE"), ("s", "STRING"), ("vc", "VARCHAR(20)"), ("bin", "BYTES"),
    ("d10", "DECIMAL(10, 2)"), ("d30", "DECIMAL(30, 5)"), ("date", "DATE"), ("time", "TIME(0)"),
    ("ts0", "TIMESTAMP(0)"), ("ts3", "TIMESTAMP(3)"), ("ts6", "TIMESTAMP(6)"),
    ("ltz3", "TIMESTAMP(3) WITH LOCAL TIME ZONE"), ("ltz6", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
]
NESTED = [("arr", "ARRAY<INT>"), ("arrs", "ARRAY<STRING>"), ("m", "MAP<STRING NOT NULL, BIGINT>"),
          ("r", "ROW<x INT, y STRING, z ARRAY<DOUBLE>>"), ("v", "VARIANT")]


def to_pypaimon(t):
    if isinstance(t, T.ArrayType):
        return PT.ArrayType(t.nullable, to_pypaimon(t.element))
    if isinstance(t, T.MapType):
        return PT.MapType(t.nullable, to_pypaimon(t.key), to_pypaimon(t.value))
    if isinstance(t, T.RowType):
        return PT.RowType(t.nullable, [PT.DataField(f.id, f.name, to_pypaimon(f.type)) for f in t.fields])
    return PT.AtomicType(t._paimon_body(), t.nullable)


def pp_fields(schema):
    return [PT.DataField(f.id, f.name, to_pypaimon(f.type)) for f in schema.fields]


def make_data(schema, n, seed):
    """(our Arrow table, the same values as pypaimon's writer wants them: integer epochs for timestamps)."""
    rng = np.random.default_rng(seed)
    cols, pp_cols = {}, {}
    for f in schema.fields:
        t = f.type
        null = rng.random(n) < 0.15
        vals = []
        for i in range(n):
            if null[i]:
                vals.append(None)
                continue
            vals.append(_value(t, rng, i))
        arr = pa.array(vals, type=t.to_arrow())
        cols[f.name] = arr
        if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
            unit = "ms" if t.precision <= 3 else "us"
            ints = arr.cast(pa.timestamp(unit, tz=arr.type.tz)).cast(pa.int64())
            if t.precision == 0:
                pass
            pp_cols[f.name] = ints
        elif isinstance(t, T.TimeType):
            pp_cols[f.name] = arr.cast(pa.int32())
        else:
            pp_cols[f.name] = arr
    return pa.table(cols), pa.table(pp_cols)


def _value(t, rng, i):
    if isinstance(t, T.BooleanType):
        return bool(rng.integers(2))
    if isinstance(t, T.TinyIntType):
        return int(rng.integers(-128, 128))
    if isinstance(t, T.SmallIntType):
        return int(rng.integers(-32768, 32768))
    if isinstance(t, T.IntType):
        return int(rng.integers(-2**31, 2**31))
    if isinstance(t, T.BigIntType):
        return int(rng.integers(-2**63, 2**63))
    if isinstance(t, (T.FloatType, T.DoubleType)):
        return float(np.float32(rng.normal() * 1e3)) if isinstance(t, T.FloatType) else float(rng.normal() * 1e6)
    if isinstance(t, (T.VarCharType, T.CharType)):
        return "".join(rng.choice(list("abcé✓xyz"), int(rng.integers(0, 15))))
    if isinstance(t, (T.VarBinaryType, T.BinaryType)):
        return rng.bytes(int(rng.integers(0, 10)))
    if isinstance(t, T.DecimalType):
        digits = int(rng.integers(1, t.precision + 1))
        u = int(rng.integers(0, 10**min(digits, 18))) * (10**max(digits - 18, 0))
        u = -u if rng.integers(2) else u
        return decimal.Decimal(u).scaleb(-t.scale)
    if isinstance(t, T.DateType):
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=int(rng.integers(-40000, 40000)))
    if isinstance(t, T.TimeType):
        return (datetime.datetime(2000, 1, 1) + datetime.timedelta(seconds=int(rng.integers(0, 86400)))).time()
    if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
        us = int(rng.integers(-2**50, 2**50))
        if t.precision <= 3:
            us -= us % 1000
        if t.precision == 0:
            us -= us % 1_000_000
        d = datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=us)
        return d.replace(tzinfo=datetime.timezone.utc) if isinstance(t, T.LocalZonedTimestampType) else d
    if isinstance(t, T.ArrayType):
        return [None if rng.random() < 0.2 else _value(t.element, rng, i) for _ in range(int(rng.integers(0, 4)))]
    if isinstance(t, T.MapType):
        return [(f"k{j}", None if rng.random() < 0.2 else _value(t.value, rng, i))
                for j in range(int(rng.integers(0, 3)))]
    if isinstance(t, T.RowType):
        return {f.name: None if rng.random() < 0.2 else _value(f.type, rng, i) for f in t.fields}
    if isinstance(t, T.VariantType):
        return {"value": rng.bytes(3), "metadata": rng.bytes(2)}
    raise AssertionError(t)


def pypaimon_write(path, schema, pp_table, block_size):
    with open(path, "wb") as f:
        w = FormatRowWriter(f, pp_fields(schema), block_size=block_size)
        w.write_table(pp_table)
        w.close()


def pypaimon_read(path, schema, row_indices=None):
    fields = pp_fields(schema)
    r = FormatRowReader(LocalFileIO(), str(path), [f.name for f in fields], fields, None, batch_size=1024,
                        row_indices=row_indices)
    batches = []
    while (b := r.read_arrow_batch()) is not None:
        batches.append(b)
    return pa.Table.from_batches(batches) if batches else None


def payloads(data):
    """Decompressed block payloads of a .row file."""
    ft = Footer.parse(data[-32:], len(data))
    ix = BlockIndex.parse(data[ft.index_offset:ft.index_offset + ft.index_length], ft)
    d = zstandard.ZstdDecompressor()
    return [d.decompress(data[o:o + c], max_output_size=u)
            for o, c, u in zip(ix.offsets, ix.compressed_sizes, ix.uncompressed_sizes)]


def ours(schema, table, block_size):
    buf = io.BytesIO()
    with RowFileWriter(buf, schema, block_size=block_size) as w:
        w.write(table)
    return buf.getvalue()


@pytest.mark.parametrize("cols", [FLAT, NESTED], ids=["flat", "nested"])
@pytest.mark.parametrize("block_size", [64, 1024, 65536])
def test_pypaimon_files_read_identically_and_payloads_match(tmp_path, cols, block_size):
    schema = schema_of(cols)
    table, pp_table = make_data(schema, 300, seed=block_size + len(cols))
    path = tmp_path / "pp.row"
    pypaimon_write(path, schema, pp_table, block_size)
    r = RowFileReader(str(path), schema)
    assert r.num_rows == 300
    assert r.to_arrow().to_pylist() == table.to_pylist()
    # the same rows from our writer: identical uncompressed blocks, cut at the same rows
    mine = ours(schema, table, block_size)
    theirs = path.read_bytes()
    assert payloads(mine) == payloads(theirs)
    assert r.num_blocks == len(payloads(mine))


@pytest.mark.parametrize("cols", [FLAT, NESTED], ids=["flat", "nested"])
def test_our_files_read_identically_by_pypaimon(tmp_path, cols):
    schema = schema_of(cols)
    table, pp_table = make_data(schema, 200, seed=7)
    path = tmp_path / "ours.row"
    path.write_bytes(ours(schema, table, 512))
    got = pypaimon_read(path, schema)
    want = pypaimon_read_reference(tmp_path, schema, pp_table)
    assert got.to_pylist() == want.to_pylist()
    some = [5, 0, 199, 64]
    assert pypaimon_read(path, schema, row_indices=sorted(some)).to_pylist() == \
        [want.to_pylist()[i] for i in sorted(some)]


def pypaimon_read_reference(tmp_path, schema, pp_table):
    ref = tmp_path / "ref.row"
    pypaimon_write(ref, schema, pp_table, 512)
    return pypaimon_read(ref, schema)


def test_empty_files_both_ways(tmp_path):
    schema = schema_of(FLAT)
    table, pp_table = make_data(schema, 0, seed=1)
    path = tmp_path / "empty.row"
    pypaimon_write(path, schema, pp_table, 65536)
    assert path.read_bytes() == ours(schema, table, 65536)
    assert RowFileReader(str(path), schema).read_all().num_rows == 0
