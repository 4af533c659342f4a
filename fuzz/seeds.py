"""Seed inputs for every fuzz target, written by the project's own writers.

``python -m fuzz.seeds OUT_DIR`` writes ``OUT_DIR/<target>/<name>.bin``; :func:`build_seeds` returns the same as a
dict. Seeds are small (a few rows) so mutations stay cheap. The Puffin deletion-vector blob is the one seed framed
by hand: the project reads those blobs but has no writer for them.
"""
from __future__ import annotations

import datetime
import decimal
import gzip
import io
import os
import struct
import sys
import tempfile
import zlib

import numpy as np


from . import targets as TG

__all__ = ["build_seeds", "write_seeds"]


def _row_table(n):
    import pyarrow as pa
    rng = np.random.default_rng(n)
    ids = np.arange(n, dtype=np.int64)

    def nulls(values, every):
        return [None if i % every == 3 else v for i, v in enumerate(values)]
    cols = {
        "b": nulls([bool(i % 2) for i in range(n)], 5),
        "i8": pa.array(nulls([int(i % 100) - 50 for i in range(n)], 6), pa.int8()),
        "i16": pa.array([int(i) * 300 for i in range(n)], pa.int16()),
        "i32": pa.array(nulls([int(v) for v in rng.integers(-2**31, 2**31 - 1, n)], 4), pa.int32()),
        "i64": pa.array(ids * 1_000_003 - 7),
        "f32": pa.array([float(i) / 3 for i in range(n)], pa.float32()),
        "f64": pa.array(nulls([float("nan") if i == 2 else i * 0.25 for i in range(n)], 7)),
        "s": nulls([f"s{i}" * (i % 4) + "\u00e9" for i in range(n)], 3),
        "bin": [bytes([i % 256]) * (i % 5) for i in range(n)],
        "d": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=i) for i in range(n)]),
        "t": pa.array([i * 1000 for i in range(n)], pa.time32("ms")),
        "ts3": pa.array([1_700_000_000_000 + i for i in range(n)], pa.timestamp("ms")),
        "ts9": pa.array([1_700_000_000_000_000_123 + i * 1001 for i in range(n)], pa.timestamp("ns")),
        "ltz": pa.array([1_700_000_000_000_000 + i for i in range(n)], pa.timestamp("us", tz="UTC")),
        "dec": pa.array([decimal.Decimal(i) / 4 for i in range(n)], pa.decimal128(10, 2)),
        "big": pa.array([decimal.Decimal(10**20 + i) / 8 for i in range(n)], pa.decimal128(30, 4)),
        "arr": nulls([[i, None, -i][: i % 4] for i in range(n)], 5),
        "m": nulls([{f"k{j}": j * i for j in range(i % 3)} for i in range(n)], 6),
        "r": nulls([{"x": i, "y": None if i % 2 else f"y{i}"} for i in range(n)], 4),
    }
    schema = pa.schema(list(TG.ROW_SCHEMA.to_arrow()))
    return pa.table({f.name: pa.array(cols[f.name], f.type) if not isinstance(cols[f.name], pa.Array)
                     else cols[f.name].cast(f.type) for f in schema}, schema=schema)


def row_file_seeds():
    from paimon_engine.formats.row import RowFileWriter
    out = {}
    for name, rows, block in (("empty", 0, 4096), ("one_block", 6, 65536), ("blocks", 12, 160)):
        buf = io.BytesIO()
        with RowFileWriter(buf, TG.ROW_SCHEMA, block_size=block) as w:
            if rows:
                w.write(_row_table(rows))
        out[name] = buf.getvalue()
    return out


def row_file_flat_seeds():
    """Rows enough for the row-shape walk (64 and more in a block), nulls in every column and rows of nulls,
    strings of 0 to 20 bytes (one not ASCII); one file of one block, one of blocks of about 100 rows."""
    import pyarrow as pa
    from paimon_engine.formats.row import RowFileWriter
    n = 200
    rng = np.random.default_rng(90)

    def col(values, p):
        return [None if rng.random() < p or i >= n - 2 else v for i, v in enumerate(values)]
    words = ["", "a", "twelve bytes", "ascii-16-bytes!!", "twenty bytes of text", "\u00e9t\u00e9"]
    tbl = pa.table({
        "i8": pa.array(col([i % 100 - 50 for i in range(n)], 0.05), pa.int8()),
        "i64": pa.array(col([i * 1_000_003 for i in range(n)], 0.05), pa.int64()),
        "s": pa.array(col([words[i % len(words)] for i in range(n)], 0.1), pa.string()),
        "i16": pa.array(col([i * 300 - 30000 for i in range(n)], 0.05), pa.int16()),
        "i32": pa.array(col([i * 7 for i in range(n)], 0.2), pa.int32()),
        "f64": pa.array(col([i * 0.25 for i in range(n)], 0.05), pa.float64()),
    })
    out = {}
    for name, block in (("one_block", 65536), ("blocks", 2600)):
        buf = io.BytesIO()
        with RowFileWriter(buf, TG.ROW_FLAT_SCHEMA, block_size=block) as w:
            w.write(tbl)
        out[name] = buf.getvalue()
    return out


def _index_batch(n=24):
    import pyarrow as pa
    from paimon_engine.batch import ColumnBatch
    vals = [None if i % 7 == 3 else (i * 37) % 11 - 4 for i in range(n)]
    tbl = pa.table({
        "i32": pa.array(vals, pa.int32()),
        "i64": pa.array([None if v is None else v * 10**12 for v in vals], pa.int64()),
        "s": pa.array([None if v is None else f"v{v}" for v in vals]),
        "d": pa.array([None if v is None else datetime.date(2024, 5, 1) + datetime.timedelta(days=v)
                       for v in vals]),
        "ts": pa.array([None if v is None else datetime.datetime(2024, 5, 17, 1, 2, abs(v)) for v in vals],
                       pa.timestamp("ms")),
        "f64": pa.array([None if v is None else v / 2 for v in vals]),
        "bin": pa.array([None if v is None else bytes([v % 256]) for v in vals]),
        "dec": pa.array([None if v is None else decimal.Decimal(v) / 4 for v in vals], pa.decimal128(10, 2)),
    })
    return ColumnBatch.from_arrow(tbl, TG.INDEX_SCHEMA)


def file_index_seeds():
    from paimon_engine.index import FileIndexBuilder
    batch = _index_batch()
    out = {}
    for name, options in (
            ("bitmap_v2", {"file-index.bitmap.columns": "i32,s,d,ts",
                           "file-index.bitmap.index-block-size": "32"}),
            ("bitmap_v1", {"file-index.bitmap.columns": "i64,s", "file-index.bitmap.version": "1"}),
            ("bloom", {"file-index.bloom-filter.columns": "i32,s,f64,bin",
                       "file-index.bloom-filter.items": "30"}),
            ("bsi", {"file-index.bsi.columns": "i32,i64,d,ts,dec"}),
            ("mixed", {"file-index.bitmap.columns": "s", "file-index.bloom-filter.columns": "s",
                       "file-index.bsi.columns": "i32", "file-index.bloom-filter.items": "20"})):
        b = FileIndexBuilder(TG.INDEX_SCHEMA, options)
        b.add(batch)
        out[name] = b.finish()
    return out


def _body_seeds(make):
    """One body per column type the target can pick: the type's position as the first byte."""
    batch = _index_batch()
    out = {}
    for pos, f in enumerate(TG.INDEX_SCHEMA.fields):
        for label, idx in make(f.type):
            if idx is None:
                continue
            idx.add_column(batch.column(f.name))
            out[f"{f.name}_{label}"] = bytes([pos]) + idx.to_bytes()
    return out


def _maybe(cls, t, options=None):
    from paimon_engine.errors import UnsupportedTypeError
    try:
        return cls(t, options)
    except UnsupportedTypeError:
        return None


def bitmap_index_seeds():
    from paimon_engine.index import BitmapIndex
    return _body_seeds(lambda t: [("v2", _maybe(BitmapIndex, t, {"index-block-size": "24"})),
                                  ("v1", _maybe(BitmapIndex, t, {"version": "1"}))])


def bloom_filter_seeds():
    from paimon_engine.index import BloomFilterIndex
    return _body_seeds(lambda t: [("bloom", _maybe(BloomFilterIndex, t, {"items": "16"}))])


def bsi_index_seeds():
    from paimon_engine.index import BsiIndex
    return _body_seeds(lambda t: [("bsi", _maybe(BsiIndex, t))])


def deletion_vectors_seeds():
    from paimon_engine.index import DeletionVector, write_deletion_vector_index
    small, _ = write_deletion_vector_index({"a": DeletionVector([1, 5, 9, 4000]),
                                            "b": DeletionVector(list(range(0, 300, 3)))})
    wide, _ = write_deletion_vector_index({"c": DeletionVector([2, (1 << 32) + 7, (3 << 32) + 1], bit64=True)})
    runs, _ = write_deletion_vector_index({"d": DeletionVector(np.arange(10_000, 14_000))})
    return {"two_32bit": small, "one_64bit": wide, "run_container": runs}


def puffin_deletion_vector_seeds():
    from pyroaring import BitMap64
    out = {}
    for name, positions in (("small", [1, 2, 40]), ("wide", [0, 7, (1 << 32) + 3]), ("empty", [])):
        bm = BitMap64(positions)
        bm.run_optimize()
        body = b"\xd1\xd3\x39\x64" + bm.serialize()
        out[name] = struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    return out


def variant_seeds():
    """Variants framed as the ``variant`` target reads them: every primitive type, a short string, an object
    (its values stored out of key order) holding an array and a nested object, and wide offsets."""
    def frame(metadata, value):
        return struct.pack("<H", len(metadata)) + metadata + value

    def meta(*keys):
        raw = [k.encode() for k in keys]
        offs = [0]
        for r in raw:
            offs.append(offs[-1] + len(r))
        return bytes([0x11, len(keys)]) + bytes(offs) + b"".join(raw)
    empty = b"\x01\x00\x00"
    prims = (b"\x00", b"\x04", b"\x08", b"\x0c\x85", b"\x10" + struct.pack("<h", -300),
             b"\x14" + struct.pack("<i", 7), b"\x18" + struct.pack("<q", -(1 << 40)),
             b"\x1c" + struct.pack("<d", 2.5), b"\x20\x02" + struct.pack("<i", -1234),
             b"\x24\x03" + struct.pack("<q", 10 ** 12), b"\x28\x04" + (10 ** 30).to_bytes(16, "little"),
             b"\x2c" + struct.pack("<i", 19000), b"\x30" + struct.pack("<q", 1_500_000),
             b"\x34" + struct.pack("<q", -1), b"\x38" + struct.pack("<f", 0.5),
             b"\x3c" + struct.pack("<I", 3) + b"\x00\xff\x10", b"\x40" + struct.pack("<I", 4) + "h\u00e9".encode() + b"!",
             b"\x44" + struct.pack("<q", 3_723_000_001), b"\x48" + struct.pack("<q", 10 ** 18),
             b"\x4c" + struct.pack("<q", -(10 ** 18)), b"\x50" + bytes(range(16)))
    out = {f"primitive_{i:02d}": frame(empty, v) for i, v in enumerate(prims)}
    out["short_string"] = frame(empty, b"\x15hello")
    m = meta("a", "b", "c")
    inner = bytes([2, 1, 0, 0, 2]) + b"\x0c\x01"                                 # {"a": 1}
    items = bytes([3, 3, 0, 1, 4, 4 + len(inner)]) + b"\x00" + b"\x09hi" + inner  # [null, "hi", {"a": 1}]
    c_val = b"\x04"                                                               # true
    # keys a and c in key order; the value of c is stored first
    out["object_array_nested"] = frame(m, bytes([2, 2, 0, 2, len(c_val), 0, len(c_val) + len(items)]) + c_val +
                                       items)
    out["wide_array"] = frame(empty, bytes([3 | ((1 | (1 << 2)) << 2)]) + struct.pack("<I", 2) +
                              struct.pack("<HHH", 0, 1, 2) + b"\x00\x04")
    return out


def _fory_frame(buf, offsets):
    n = len(offsets) - 1
    lengths = [int(offsets[i + 1] - offsets[i]) for i in range(n)]
    return bytes([n]) + b"".join(struct.pack("<H", ln) for ln in lengths) + bytes(buf)


def _fory_seeds(layout):
    import pyarrow as pa
    from paimon_engine.formats import fory
    schema = TG.fory_schema()
    rows = []
    for i in range(3):
        rows.append({"b": i % 2 == 0, "i8": i - 1, "i16": 300 * i, "i32": None if i == 1 else i * 70000,
                     "i64": -i * 10**12, "f32": i / 2, "f64": i / 3, "s": "x" * i + "\u00e9",
                     "bin": bytes(range(i)), "d": datetime.date(2024, 1, 1 + i),
                     "ts": datetime.datetime(2024, 1, 1, 0, 0, i), "dec": decimal.Decimal(i) / 4,
                     "big": None if i == 2 else decimal.Decimal(10**30 + i) / 1000,
                     "l": [i, None, 3][: i + 1], "ls": ["a" * i, None], "m": [("k", i), ("z", None)],
                     "st": None if i == 0 else {"x": i, "y": "y" * i}})
    rb = pa.RecordBatch.from_pylist(rows, schema=schema)
    buf, offsets = fory.encode_rows(rb, schema, layout)
    one = fory.encode_row({"i64": 5, "s": "only"}, schema, layout)
    return {"three_rows": _fory_frame(buf, offsets), "one_sparse_row": _fory_frame(one, [0, len(one)]),
            "no_rows": b"\x00"}


def _table_files():
    """Metadata, manifest lists and manifests of a small partitioned table with position and equality deletes."""
    import pyarrow as pa
    from paimon_engine.expressions import col
    from paimon_engine.catalog import FileSystemCatalog
    from paimon_engine.spec.manifest_list import read_manifest_list
    files = {}
    with tempfile.TemporaryDirectory() as wh:
        cat = FileSystemCatalog(wh)
        cat.create_namespace("db")
        data = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "city": ["Oslo", "Rome", "Lima", None],
                         "when": pa.array([datetime.date(2024, 1, d) for d in (1, 2, 3, 4)]),
                         "amount": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50"),
                                             decimal.Decimal("0.01")], pa.decimal128(9, 2))})
        for version in (1, 2):
            t = cat.create_table(f"db.t{version}", data.schema, [("id", "bucket[4]"), ("when", "month")],
                                 properties={"format-version": str(version)})
            t.append(data)
            if version == 2:
                t.delete(col("city") == "Rome")
                t.delete(col("id") == 4, mode="equality", equality_columns=["id"])
            md_path = t.metadata_location
            with open(md_path, "rb") as f:
                files[f"metadata_v{version}"] = f.read()
            for snap in t.metadata.snapshots:
                if not snap.manifest_list:
                    continue
                with open(snap.manifest_list, "rb") as f:
                    files[f"list_v{version}_{snap.snapshot_id % 1000}"] = f.read()
                for m in read_manifest_list(t.io, snap.manifest_list):
                    with open(m.manifest_path, "rb") as f:
                        files[f"manifest_v{version}_c{m.content}_{os.path.basename(m.manifest_path)[:8]}"] = f.read()
    return files


def table_seeds():
    files = _table_files()
    md = {k: v for k, v in files.items() if k.startswith("metadata")}
    md["metadata_v2_gzip"] = gzip.compress(md["metadata_v2"], mtime=0)
    lists = {k: v for k, v in files.items() if k.startswith("list")}
    manifests = {k: v for k, v in files.items() if k.startswith("manifest")}
    return {"table_metadata": md, "manifest_list": lists, "manifest": manifests, "manifest_avro": manifests}


def delete_seeds():
    import pyarrow as pa
    from paimon_engine.table.data_writer import write_equality_deletes, write_position_deletes
    io_ = TG.memory_io()
    pos = {}
    write_position_deletes(io_, TG.MEMORY_ROOT + "/seed-pos.parquet", TG.DATA_PATH, [1, 2, 39], (), 0)
    pos["three_positions"] = io_.read_bytes(TG.MEMORY_ROOT + "/seed-pos.parquet")
    write_position_deletes(io_, TG.MEMORY_ROOT + "/seed-pos2.parquet", "other/file.parquet", [0, 5], (), 0,
                           compression="none")
    pos["other_file"] = io_.read_bytes(TG.MEMORY_ROOT + "/seed-pos2.parquet")
    id_field = TG.DELETE_TABLE_SCHEMA.fields[0]
    s_field = TG.DELETE_TABLE_SCHEMA.fields[2]

    def keys(ids, ss):
        return pa.table([pa.array(ids, pa.int64()), pa.array(ss, pa.string())],
                        schema=pa.schema([pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"1"}),
                                          pa.field("s", pa.string(), metadata={b"PARQUET:field_id": b"3"})]))
    eq = {}
    write_equality_deletes(io_, TG.MEMORY_ROOT + "/seed-eq.parquet", keys([3, 4, None], ["v3", "v0", None]),
                           [id_field.id, s_field.id], (), 0)
    eq["three_keys"] = io_.read_bytes(TG.MEMORY_ROOT + "/seed-eq.parquet")
    write_equality_deletes(io_, TG.MEMORY_ROOT + "/seed-eq2.parquet", keys([], []), [id_field.id, s_field.id],
                           (), 0, compression="none")
    eq["no_keys"] = io_.read_bytes(TG.MEMORY_ROOT + "/seed-eq2.parquet")
    return {"position_deletes": pos, "equality_deletes": eq}


#: string filters in the forms the docs and tests use, over the columns of ``targets.FILTER_SCHEMA``
FILTER_SEEDS = (
    "id > 5 and City = 'Oslo'",
    "id > 1 and city in ('a', 'c')",
    "k >= 2 and (City = 'a''b' or City is null) and not ts < timestamp '2024-01-01T00:00:00'",
    "5 < k or not score is null",
    "`City` like 'Os%' and City not like 'x%'",
    "d = date '2024-02-29' or d between '2020-01-01' and '2020-12-31'",
    "r.x is not null and r.y != 'q'",
    "k not in (1, 2, 3) and tiny <> -3",
    "bin = X'00ff' or bin in (X'', X'61')",
    "is_nan(score) or isnan(f)",
    "dec < 1.5 and big >= -12.000001 and score == 1e3",
    "ltz >= timestamp '2024-01-31T10:00:00+02:00' and t < '10:30:00'",
    "u = '00000000-0000-0000-0000-000000000007' and ok = true",
    "true and not false",
    "\"City\" = 'Oslo' or ID = 7",
    "",
)


def row_filter_seeds():
    return {f"filter_{i}": text.encode() for i, text in enumerate(FILTER_SEEDS)}


def parquet_data_seeds():
    """Small Parquet data files of ``targets.PARQUET_DATA_SCHEMA`` (field ids in the schema, as the table's writer
    stores them): data pages v1 and v2, dictionary, PLAIN and delta-encoded pages, with and without nulls, three codecs."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    n = 24
    rng = np.random.default_rng(5)
    mask = rng.random(n) < 0.25
    arrays = [pa.array(rng.integers(-50, 50, n).astype(np.int32), mask=mask),
              pa.array(np.arange(n, dtype=np.int64) * 1_000_003),
              pa.array(rng.random(n).astype(np.float32), mask=mask), pa.array(rng.random(n)),
              pa.array(np.arange(n, dtype=np.int32), mask=mask).cast(pa.date32()),
              pa.array(np.arange(n, dtype=np.int64) * 10**6).cast(pa.timestamp("us")),
              pa.array([f"v{i % 5}" for i in range(n)], mask=mask), pa.array([bytes([i]) * (i % 4) for i in range(n)]),
              pa.array([i % 3 == 0 for i in range(n)])]
    fields = [pa.field(f.name, a.type, metadata={b"PARQUET:field_id": str(f.id).encode()})
              for f, a in zip(TG.PARQUET_DATA_SCHEMA.fields, arrays)]
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    out = {}
    for version in ("1.0", "2.0"):
        for comp in ("none", "zstd", "snappy"):
            for dictionary in (True, False):
                buf = io.BytesIO()
                pq.write_table(table, buf, data_page_version=version, compression=comp, use_dictionary=dictionary,
                               data_page_size=64, row_group_size=16)
                out[f"v{version[0]}_{comp}_{'dict' if dictionary else 'plain'}"] = buf.getvalue()
        for comp in ("none", "zstd"):
            # the integer columns delta-encoded (DELTA_BINARY_PACKED)
            buf = io.BytesIO()
            ints = [f.name for f, a in zip(fields, arrays) if a.type in (pa.int32(), pa.int64(), pa.date32())
                    or pa.types.is_timestamp(a.type)]
            pq.write_table(table, buf, data_page_version=version, compression=comp, use_dictionary=False,
                           column_encoding={name: "DELTA_BINARY_PACKED" for name in ints}, data_page_size=64,
                           row_group_size=16)
            out[f"v{version[0]}_{comp}_delta"] = buf.getvalue()
    return out


def build_seeds(targets=None) -> dict:
    """``{target: {seed name: bytes}}`` for the named targets (default all)."""
    wanted = set(targets or TG.TARGETS)
    out = {}
    simple = {"row_file": row_file_seeds, "row_file_flat": row_file_flat_seeds, "file_index": file_index_seeds,
              "bitmap_index": bitmap_index_seeds, "bloom_filter": bloom_filter_seeds, "bsi_index": bsi_index_seeds,
              "deletion_vectors": deletion_vectors_seeds, "puffin_deletion_vector": puffin_deletion_vector_seeds,
              "fory_standard": lambda: _fory_seeds("standard"), "fory_compact": lambda: _fory_seeds("compact"),
              "variant": variant_seeds, "row_filter": row_filter_seeds, "parquet_data": parquet_data_seeds}
    for name, make in simple.items():
        if name in wanted:
            out[name] = make()
    if wanted & {"table_metadata", "manifest_list", "manifest", "manifest_avro"}:
        out.update({k: v for k, v in table_seeds().items() if k in wanted})
    if wanted & {"position_deletes", "equality_deletes"}:
        out.update({k: v for k, v in delete_seeds().items() if k in wanted})
    return out


def write_seeds(out_dir, targets=None) -> dict:
    """Write every seed to ``out_dir/<target>/<name>.bin``; -> ``{target: count}``."""
    counts = {}
    for target, seeds in build_seeds(targets).items():
        d = os.path.join(out_dir, target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name + ".bin"), "wb") as f:
                f.write(data)
        counts[target] = len(seeds)
    return counts


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m fuzz.seeds OUT_DIR [TARGET...]")
    for t, n in sorted(write_seeds(sys.argv[1], sys.argv[2:] or None).items()):
        print(f"{t}: {n} seeds")
