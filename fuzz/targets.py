"""Fuzz targets: one function per decoder, each taking the bytes of one input.

A target runs its decoder fully (every block, every index body, every row; Arrow output is checked with
``validate(full=True)``). It returns normally when the input decodes and lets
:class:`paimon_engine.errors.PaimonEngineError` through when the decoder rejects it; anything else it raises is a
finding. :func:`outcome` classifies one run.

Inputs that name files (manifest lists, delete files) are written to an in-memory pyarrow filesystem, so a target
never touches the disk.
"""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np

from paimon_engine import types as T
from paimon_engine.errors import PaimonEngineError

__all__ = ["TARGETS", "outcome", "ROW_SCHEMA", "ROW_FLAT_SCHEMA", "INDEX_SCHEMA", "FORY_FIELDS", "DELETE_TABLE_SCHEMA",
           "FILTER_SCHEMA", "MEMORY_ROOT", "DATA_PATH", "memory_io", "fix_paimon_dv_crcs", "fix_puffin_dv_crc"]

MEMORY_ROOT = "fuzz"
DATA_PATH = MEMORY_ROOT + "/data.parquet"

# ---------------------------------------------------------------------------
# schemas the targets decode with (the seeds are written with the same ones)
# ---------------------------------------------------------------------------

ROW_SCHEMA = T.RowType.of(
    ("b", T.BooleanType()), ("i8", T.TinyIntType()), ("i16", T.SmallIntType()), ("i32", T.IntType()),
    ("i64", T.BigIntType()), ("f32", T.FloatType()), ("f64", T.DoubleType()), ("s", T.STRING()),
    ("bin", T.BYTES()), ("d", T.DateType()), ("t", T.TimeType(3)), ("ts3", T.TimestampType(3)),
    ("ts9", T.TimestampType(9)), ("ltz", T.LocalZonedTimestampType(6)), ("dec", T.DecimalType(10, 2)),
    ("big", T.DecimalType(30, 4)), ("arr", T.ArrayType(T.IntType())),
    ("m", T.MapType(T.STRING(), T.BigIntType())),
    ("r", T.RowType.of(("x", T.IntType()), ("y", T.STRING()))))

#: a schema of at most 8 fixed-width fields and one string (the compiled row decoder's row-shape walk)
ROW_FLAT_SCHEMA = T.RowType.of(
    ("i8", T.TinyIntType()), ("i64", T.BigIntType()), ("s", T.STRING()), ("i16", T.SmallIntType()),
    ("i32", T.IntType()), ("f64", T.DoubleType()))

#: columns of the file-index seeds, and the type each index body is read with
INDEX_SCHEMA = T.RowType.of(
    ("i32", T.IntType()), ("i64", T.BigIntType()), ("s", T.STRING()), ("d", T.DateType()),
    ("ts", T.TimestampType(3)), ("f64", T.DoubleType()), ("bin", T.BYTES()), ("dec", T.DecimalType(10, 2)))

#: (name, pyarrow type factory) of the Fory seed schema
FORY_FIELDS = (
    ("b", "bool_"), ("i8", "int8"), ("i16", "int16"), ("i32", "int32"), ("i64", "int64"), ("f32", "float32"),
    ("f64", "float64"), ("s", "string"), ("bin", "binary"), ("d", "date32"), ("ts", "timestamp_us"),
    ("dec", "decimal"), ("big", "decimal256"), ("l", "list_int64"), ("ls", "list_string"), ("m", "map"),
    ("st", "struct"))

#: the schema string filters are bound to (mixed-case names, so case-insensitive binding matters)
FILTER_SCHEMA = T.RowType([
    T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()), T.DataField(3, "tiny", T.TinyIntType()),
    T.DataField(4, "City", T.STRING()), T.DataField(5, "score", T.DoubleType()), T.DataField(6, "f", T.FloatType()),
    T.DataField(7, "ok", T.BooleanType()), T.DataField(8, "d", T.DateType()), T.DataField(9, "ts", T.TimestampType(6)),
    T.DataField(10, "ltz", T.LocalZonedTimestampType(6)), T.DataField(11, "dec", T.DecimalType(10, 2)),
    T.DataField(12, "big", T.DecimalType(38, 6)), T.DataField(13, "bin", T.BYTES()), T.DataField(14, "t", T.TimeType(6)),
    T.DataField(15, "u", T.UuidType()),
    T.DataField(16, "r", T.RowType([T.DataField(17, "x", T.IntType()), T.DataField(18, "y", T.STRING())])),
    T.DataField(19, "arr", T.ArrayType(T.IntType()))])

#: the columns of the Parquet data-file seeds, as the table reads them (the page decoder reads every one of them
#: but the boolean, which goes through pyarrow)
PARQUET_DATA_SCHEMA = T.RowType([
    T.DataField(1, "i32", T.IntType()), T.DataField(2, "i64", T.BigIntType()), T.DataField(3, "f32", T.FloatType()),
    T.DataField(4, "f64", T.DoubleType()), T.DataField(5, "d", T.DateType()),
    T.DataField(6, "ts", T.TimestampType(6)), T.DataField(7, "s", T.STRING()), T.DataField(8, "bin", T.BYTES()),
    T.DataField(9, "ok", T.BooleanType())])

DELETE_TABLE_SCHEMA = T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                                 T.DataField(3, "s", T.STRING())])


def fory_schema():
    import pyarrow as pa
    make = {
        "bool_": pa.bool_(), "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
        "float32": pa.float32(), "float64": pa.float64(), "string": pa.string(), "binary": pa.binary(),
        "date32": pa.date32(), "timestamp_us": pa.timestamp("us"), "decimal": pa.decimal128(10, 2),
        "decimal256": pa.decimal256(40, 3), "list_int64": pa.list_(pa.int64()), "list_string": pa.list_(pa.string()),
        "map": pa.map_(pa.string(), pa.int32()),
        "struct": pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())]),
    }
    return pa.schema([pa.field(n, make[k]) for n, k in FORY_FIELDS])


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _validate(arrow_obj):
    arrow_obj.validate(full=True)
    return arrow_obj


_MEMORY = {}


def memory_io():
    """A FileIO over one in-memory pyarrow filesystem (per process); the delete targets' data file lives there."""
    got = _MEMORY.get("io")
    if got is None:
        from pyarrow.fs import _MockFileSystem
        from paimon_engine.io import FileIO
        fs = _MockFileSystem()
        fs.create_dir(MEMORY_ROOT)
        got = _MEMORY["io"] = FileIO(filesystem=fs)
        _MEMORY["fs"] = fs
    return got


def _put(path: str, data: bytes):
    memory_io()
    fs = _MEMORY["fs"]
    with fs.open_output_stream(path) as f:
        f.write(data)


def delete_data_table():
    """The data file the delete targets apply their delete files to (ids 0..39, k = id % 5)."""
    import pyarrow as pa
    n = 40
    return pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "k": pa.array((np.arange(n) % 5).astype(np.int32)),
                     "s": pa.array([f"v{i % 7}" for i in range(n)])})


def _ensure_data_file():
    if "data" not in _MEMORY:
        from paimon_engine.table.data_writer import prepare_arrow, write_parquet_file
        from paimon_engine.spec.schema import Schema
        io_ = memory_io()
        tbl = prepare_arrow(delete_data_table(), Schema(DELETE_TABLE_SCHEMA))
        write_parquet_file(io_, DATA_PATH, tbl, row_group_rows=16)
        _MEMORY["data"] = (DATA_PATH, tbl.num_rows, _MEMORY["fs"].get_file_info(DATA_PATH).size)
    return _MEMORY["data"]


# ---------------------------------------------------------------------------
# targets
# ---------------------------------------------------------------------------

def row_file(data: bytes):
    """A Paimon ``.row`` file: footer, block index, every block, then point reads."""
    from paimon_engine.formats.row import RowFileReader
    r = RowFileReader(io.BytesIO(data), ROW_SCHEMA, threads=1, cache_blocks=2)
    tbl = _validate(r.read_all().to_arrow())
    if r.num_rows:
        last = r.num_rows - 1
        _validate(r.take([last, 0, last]).to_arrow())
        r.get_row(last)
    # a projection decodes only some columns: a different path through the kernel
    _validate(r.read_all(columns=["s", "arr", "r"]).to_arrow())
    return tbl.num_rows


def row_file_flat(data: bytes):
    """A ``.row`` file of fixed-width fields and one string, read whole and as a projection by the reader's
    kernel and again by its pure-Python twin: both must give the same table, or both refuse the file with the
    same error (class, message, location)."""
    from paimon_engine import _speedups
    from paimon_engine.formats.row import RowFileReader

    src = io.BytesIO(data)   # one source for both readers: their errors name it alike

    def read(kernel, columns):
        r = RowFileReader(src, ROW_FLAT_SCHEMA, threads=1)
        if kernel is not None:
            r._kernel = kernel
        try:
            return _validate(r.read_all(columns=columns).to_arrow())
        except PaimonEngineError as e:
            return e

    twin = _speedups.twin("rowcodec")
    rows = 0
    for columns in (None, ["s", "i32"], ["i8", "f64"]):
        got, want = read(None, columns), read(twin, columns)
        if isinstance(want, PaimonEngineError) or isinstance(got, PaimonEngineError):
            if type(got) is not type(want) or str(got) != str(want):
                raise AssertionError(f"kernel and twin differ: {got!r} / {want!r}")
            raise got
        if not got.equals(want):
            raise AssertionError("kernel and twin read different tables")
        rows = got.num_rows
    return rows


def _exercise_index(idx, data_type, light=False):
    """Run every query of one opened index body with values of its type. ``light``: the first two probe values
    only and no queries that are complements of others (``file_index`` fuzzes the container; the body targets run
    the full set). Every stored value's bitmap is decoded either way (where a bad body shows)."""
    from paimon_engine.index.bitmap import BitmapReader
    from paimon_engine.index.bloom import BloomFilterIndex
    from paimon_engine.index.bsi import BsiIndex
    probes = _probes(data_type)
    if light:
        probes = probes[:2]
    if isinstance(idx, BitmapReader):
        idx.null_bitmap()
        keys = idx.values()
        for k in keys[:64]:
            idx._value_bitmap(k)   # the stored bitmap of every listed value
        idx.is_null(), idx.is_not_null()
        for v in probes:
            idx.eq(v)
            if not light:
                idx.ne(v)
            if idx.kind != "bytes":
                idx.lt(v)
                if not light:
                    idx.ge(v)
        idx.isin(probes)
    elif isinstance(idx, BloomFilterIndex):
        idx.might_contain(probes)
        idx.isin(probes)
    elif isinstance(idx, BsiIndex):
        idx.is_null(), idx.is_not_null()
        for v in probes:
            idx.eq(v), idx.lt(v)
            if not light:
                idx.le(v), idx.gt(v), idx.ge(v)
        idx.between(probes[0], probes[-1])


def _probes(data_type):
    import datetime
    import decimal
    if isinstance(data_type, (T.IntType, T.BigIntType)):
        return [-3, 0, 1, 7, 1000]
    if isinstance(data_type, T.DateType):
        return [datetime.date(1970, 1, 1), datetime.date(2024, 5, 17)]
    if isinstance(data_type, T.TimestampType):
        return [datetime.datetime(2024, 5, 17, 1, 2, 3), datetime.datetime(1969, 12, 31, 23, 59, 59)]
    if isinstance(data_type, T.DoubleType):
        return [0.0, -1.5, 2.25]
    if isinstance(data_type, T.DecimalType):
        return [decimal.Decimal("0.00"), decimal.Decimal("-12.34"), decimal.Decimal("99.99")]
    if isinstance(data_type, (T.BinaryType, T.VarBinaryType)):
        return [b"", b"a", b"\x00\xff"]
    return ["", "a", "v3", "\u00e9\u4e2d"]


_INDEX_TYPES = {f.name: f.type for f in INDEX_SCHEMA.fields}
_BODY_TYPES = tuple(f.type for f in INDEX_SCHEMA.fields)


def file_index(data: bytes):
    """A Paimon file-index container: the header, then every index body opened with its column's type and
    queried lightly (the bodies themselves are fuzzed by the bitmap, bloom and bsi targets)."""
    from paimon_engine.index import FileIndexReader
    r = FileIndexReader(data, path="fuzz.index")
    n = 0
    for column in r.columns():
        t = _INDEX_TYPES.get(column, T.STRING())
        for itype in r.index_types(column):
            r.index_bytes(column, itype)
            idx = r.open_index(column, itype, t)
            if idx is not None:
                _exercise_index(idx, t, light=True)
                n += 1
    return n


def _body(data: bytes):
    """First byte: the column type; the rest: one index body."""
    if not data:
        return T.IntType(), b""
    return _BODY_TYPES[data[0] % len(_BODY_TYPES)], data[1:]


def bitmap_index(data: bytes):
    from paimon_engine.index import BitmapIndex
    t, body = _body(data)
    idx = BitmapIndex.from_bytes(body, t, path="fuzz.bitmap")
    _exercise_index(idx, t)


def bloom_filter(data: bytes):
    from paimon_engine.index import BloomFilterIndex
    t, body = _body(data)
    idx = BloomFilterIndex.from_bytes(body, t, path="fuzz.bloom")
    _exercise_index(idx, t)


def bsi_index(data: bytes):
    from paimon_engine.index import BsiIndex
    t, body = _body(data)
    if isinstance(t, (T.VarCharType, T.BinaryType, T.VarBinaryType, T.DoubleType)):
        t = T.BigIntType()   # the bsi index takes integer-like columns only
    idx = BsiIndex.from_bytes(body, t, path="fuzz.bsi")
    _exercise_index(idx, t)


def fix_paimon_dv_crcs(data: bytes) -> bytes:
    """The input with the CRC of every entry it frames recomputed (so mutations reach the bitmap parser)."""
    out = bytearray(data)
    pos = 1
    while pos + 8 <= len(out):
        size = struct.unpack_from(">i", out, pos)[0]
        if size < 4 or pos + 8 + size > len(out):
            break
        struct.pack_into(">I", out, pos + 4 + size, zlib.crc32(bytes(out[pos + 4:pos + 4 + size])))
        pos += size + 8
    return bytes(out)


def _paimon_dv_once(data: bytes):
    from paimon_engine.index.deletion_vector import DeletionVectorMeta, read_deletion_vector_index, \
        scan_deletion_vector_index
    entries = scan_deletion_vector_index(data, path="fuzz.dv")
    metas = {}
    for i, (off, length, dv) in enumerate(entries):
        card = dv.cardinality
        # a 32-bit vector masks from its checked bytes until its bitmap is built: both must agree
        lazy = dv.keep_mask(0, 4096), dv.keep_mask(65_000, 140_000)
        dv.to_selection(1 << 20)
        built = dv.keep_mask(0, 4096), dv.keep_mask(65_000, 140_000)
        assert all((a == b).all() for a, b in zip(lazy, built)), "keep masks from the bytes and the bitmap differ"
        assert card == len(dv.bitmap), "the cardinality read from the bytes is not the bitmap's"
        metas[f"f{i}"] = DeletionVectorMeta(off, length, dv.cardinality)
    read_deletion_vector_index(data, metas, path="fuzz.dv")


def deletion_vectors(data: bytes):
    """A Paimon deletion-vector index file, walked entry by entry; again with every entry's CRC repaired."""
    fixed = fix_paimon_dv_crcs(data)
    if fixed != data:
        try:
            _paimon_dv_once(fixed)
        except PaimonEngineError:
            pass
    _paimon_dv_once(data)


def fix_puffin_dv_crc(data: bytes) -> bytes:
    if len(data) < 12:
        return data
    (length,) = struct.unpack_from(">I", data, 0)
    if length + 8 != len(data) or length < 4:
        return data
    body = data[4:4 + length]
    return data[:4 + length] + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def puffin_deletion_vector(data: bytes):
    """An Iceberg ``deletion-vector-v1`` Puffin blob as the scan decodes it; again with its CRC repaired."""
    from paimon_engine.scan.reader import read_deletion_vector
    fixed = fix_puffin_dv_crc(data)
    if fixed != data:
        try:
            read_deletion_vector(fixed, "fuzz.puffin", 4)
        except PaimonEngineError:
            pass
    pos = read_deletion_vector(data, "fuzz.puffin", 4)
    assert pos.dtype == np.int64


def _split_fory(data: bytes):
    """First byte: row count (0..7); then one uint16 LE length per row; the rest is the rows back to back.
    Lengths are clipped to what is left, so every input is a valid framing."""
    if not data:
        return b"", np.zeros(1, np.int64)
    n = data[0] % 8
    pos = 1
    lengths = []
    for _ in range(n):
        if pos + 2 <= len(data):
            lengths.append(struct.unpack_from("<H", data, pos)[0])
            pos += 2
        else:
            lengths.append(0)
    body = data[pos:]
    offs = [0]
    for ln in lengths:
        offs.append(min(offs[-1] + ln, len(body)))
    if n == 0:
        offs = [0, len(body)]
    return body, np.array(offs, dtype=np.int64)


def _same(a, b) -> bool:
    """Equal values, with NaN equal to NaN (rows decoded two ways compare equal value by value)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _fory(data: bytes, layout: str):
    from paimon_engine.formats import fory
    schema = _MEMORY.get("fory")
    if schema is None:
        schema = _MEMORY["fory"] = fory.ForySchema(fory_schema())
    body, offs = _split_fory(data)
    rb = fory.decode_rows(body, offs, schema, layout, source="fuzz.fory")
    _validate(rb)
    fory.decode_rows(body, offs, schema, layout, columns=["s", "l", "m"], output="batch")
    n = len(offs) - 1
    # every row through RowView; the first and the last also through decode_row, and where the paths produce
    # Python values they must be the same values
    sample = {0, n - 1} if n else set()
    try:
        batch_rows = rb.to_pylist()
    except (OverflowError, ValueError):   # a stored date beyond datetime: compared row by row below
        batch_rows = None
    for i in range(n):
        row = body[offs[i]:offs[i + 1]]
        view = fory.RowView(row, schema, layout)
        as_view = view.to_dict()
        for j, (name, _) in enumerate(FORY_FIELDS):
            view.is_null(j)
            if name in ("l", "ls"):
                a = view.get_array(j)
                if a is not None:
                    a.to_list()
            elif name == "m":
                m = view.get_map(j)
                if m is not None:
                    m.to_dict()
            elif name == "st":
                st = view.get_struct(j)
                if st is not None:
                    st.to_dict()
            else:
                view.get(j)
        if batch_rows is not None:
            assert _same(as_view, batch_rows[i]), f"row {i}: decode_rows and RowView disagree"
        if i in sample:
            as_row = fory.decode_row(row, schema, layout)
            try:
                as_batch = rb.slice(i, 1).to_pylist()[0]
            except (OverflowError, ValueError):   # a stored date beyond datetime: decode_row raised already
                continue
            assert _same(as_row, as_batch) and _same(as_view, as_batch), \
                f"row {i}: decode_rows, decode_row and RowView disagree"


def fory_standard(data: bytes):
    """Fory rows, standard layout: decode_rows (all and projected), RowView on every row, decode_row on the first
    and last row; the values must agree."""
    _fory(data, "standard")


def fory_compact(data: bytes):
    """Fory rows, compact layout: decode_rows (all and projected), RowView on every row, decode_row on the first
    and last row; the values must agree."""
    _fory(data, "compact")


def table_metadata(data: bytes):
    """Iceberg table metadata JSON (plain or gzip); what parses must serialize and parse again."""
    import json
    from paimon_engine.spec.metadata import parse_metadata
    md = parse_metadata(data, "fuzz.metadata.json")
    again = parse_metadata(json.dumps(md.to_dict()).encode(), "fuzz.again.json")
    assert again.to_dict() == md.to_dict(), "metadata changes on a second round trip"


def manifest_list(data: bytes):
    """An Avro manifest list read by ``read_manifest_list``."""
    from paimon_engine.spec.manifest_list import read_manifest_list
    path = MEMORY_ROOT + "/snap.avro"
    _put(path, data)
    return read_manifest_list(memory_io(), path)


def _manifest_file(path):
    from paimon_engine.spec.manifest_list import ManifestFile
    return ManifestFile(path, 0, 0, 0, sequence_number=7, min_sequence_number=7, added_snapshot_id=11)


def manifest(data: bytes):
    """An Avro manifest read by ``spec.manifest.read_manifest`` (partition type from its own metadata)."""
    from paimon_engine.spec.manifest import read_manifest
    path = MEMORY_ROOT + "/m.avro"
    _put(path, data)
    return read_manifest(memory_io(), _manifest_file(path))


def manifest_avro(data: bytes):
    """An Avro manifest read the way the planner reads it (``read_manifest`` in planning mode: only the fields
    planning needs, with and without the metric maps), by the same decoder as :func:`manifest`."""
    from paimon_engine.spec.manifest import read_manifest
    mf = _manifest_file(MEMORY_ROOT + "/m.avro")
    read_manifest(None, mf, None, metrics=True, full=False, data=data)
    return read_manifest(None, mf, None, metrics=False, full=False, include_deleted=False, data=data)


def _task_reader():
    """One TaskReader per process (its delete caches are emptied before every input)."""
    reader = _MEMORY.get("task_reader")
    if reader is None:
        from paimon_engine.scan.reader import TaskReader
        reader = _MEMORY["task_reader"] = TaskReader(memory_io(), DELETE_TABLE_SCHEMA, DELETE_TABLE_SCHEMA,
                                                     metadata_columns=("_pos",))
    reader._pos_cache.clear()
    reader._eq_cache.clear()
    return reader


def _read_task(delete_file):
    import pyarrow as pa
    from paimon_engine.scan.tasks import FileScanTask
    path, rows, size = _ensure_data_file()
    reader = _task_reader()
    task = FileScanTask(path, "PARQUET", rows, size, deletes=[delete_file])
    # the delete file first, by the calls read_task makes for it: most inputs are rejected here, before the
    # data file is read; an accepted one is cached and applied by read_task below
    reader._task_positions(task)
    reader._eq_groups(task)
    batches = list(reader.read_task(task))
    tbl = pa.Table.from_batches(batches, schema=reader.output_schema) if batches else None
    if tbl is not None:
        tbl.validate(full=True)
        for b in batches:
            b.validate(full=True)
    return tbl


def position_deletes(data: bytes):
    """A Parquet position-delete file applied by the scan's task reader to a 40-row data file."""
    from paimon_engine.scan.delete_index import POSITION, DeleteFile
    path = MEMORY_ROOT + "/pos-deletes.parquet"
    _put(path, data)
    _read_task(DeleteFile(path, POSITION, "parquet", 2, file_size=len(data), referenced_data_file=DATA_PATH))


def equality_deletes(data: bytes):
    """A Parquet equality-delete file (keys: id, s) applied by the scan's task reader to a 40-row data file."""
    from paimon_engine.scan.delete_index import EQUALITY, DeleteFile
    path = MEMORY_ROOT + "/eq-deletes.parquet"
    _put(path, data)
    _read_task(DeleteFile(path, EQUALITY, "parquet", 2, file_size=len(data), equality_ids=(1, 3)))


def parquet_data(data: bytes):
    """A Parquet data file read by the scan's task reader (the page decoder for every flat column it takes, pyarrow
    for the rest): the whole file, then with a residual filter (late materialization reads the filter column
    first, and only the passing rows of the others), then in batches of 5 rows (the decoder page by page), then
    with a row selection dropping every third row (the decoder writes only the kept rows of each page)."""
    import numpy as np
    import pyarrow as pa
    from paimon_engine.expressions import col
    from paimon_engine.scan.reader import TaskReader
    from paimon_engine.scan.tasks import FileScanTask
    path = MEMORY_ROOT + "/fuzz-data.parquet"
    _put(path, data)
    reader = _MEMORY.get("parquet_reader")
    if reader is None:
        reader = _MEMORY["parquet_reader"] = TaskReader(memory_io(), PARQUET_DATA_SCHEMA, PARQUET_DATA_SCHEMA)
    every_third_dropped = np.flatnonzero(np.arange(1 << 16) % 3)    # (rows past these are not selected)
    for residual, batch_size, selection in ((None, None, None), (col("i32") > 40, None, None), (None, 5, None),
                                            (None, None, every_third_dropped)):
        task = FileScanTask(path, "PARQUET", -1, len(data))
        if residual is not None:
            task.residual = residual.bind(PARQUET_DATA_SCHEMA)
        task.selection = selection
        batches = list(reader.read_task(task, batch_size))
        if batches:
            tbl = pa.Table.from_batches(batches, schema=reader.output_schema)
            tbl.validate(full=True)


def filter_table():
    """Four rows of FILTER_SCHEMA (one all-null) that parsed filters are evaluated on."""
    import datetime
    import decimal
    import uuid
    import pyarrow as pa
    rows = [
        {"id": 1, "k": 5, "tiny": -3, "City": "Oslo", "score": 1.5, "f": float("nan"), "ok": True,
         "d": datetime.date(2024, 1, 31), "ts": datetime.datetime(2024, 1, 31, 10, 0),
         "ltz": datetime.datetime(2024, 1, 31, 10, 0, tzinfo=datetime.timezone.utc), "dec": decimal.Decimal("1.25"),
         "big": decimal.Decimal("123456.000001"), "bin": b"\x00\xff", "t": datetime.time(10, 0),
         "u": uuid.UUID(int=7).bytes, "r": {"x": 1, "y": "a"}, "arr": [1, 2]},
        {"id": -(1 << 63), "k": 2**31 - 1, "tiny": 127, "City": "", "score": float("-inf"), "f": 0.0, "ok": False,
         "d": datetime.date(1, 1, 1), "ts": datetime.datetime(1970, 1, 1),
         "ltz": datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc), "dec": decimal.Decimal("-99999999.99"),
         "big": decimal.Decimal("0"), "bin": b"", "t": datetime.time(0), "u": uuid.UUID(int=0).bytes,
         "r": {"x": None, "y": None}, "arr": []},
        {"id": 7, "k": 0, "tiny": 0, "City": "\u00e9a", "score": 0.0, "f": -1.5, "ok": None,
         "d": datetime.date(9999, 12, 31), "ts": datetime.datetime(2262, 4, 11), "ltz": None, "dec": None,
         "big": None, "bin": b"a", "t": None, "u": None, "r": None, "arr": None},
        {n: None for n in FILTER_SCHEMA.names},
    ]
    return pa.Table.from_pylist(rows, schema=pa.schema(list(FILTER_SCHEMA.to_arrow())))


def row_filter(data: bytes):
    """A string filter (``row_filter="id > 5 and ..."``): parsed, bound to a schema case-sensitively and not,
    then evaluated on a small table of that schema and turned into a pyarrow dataset expression."""
    from paimon_engine.errors import SchemaError
    from paimon_engine.expressions import evaluate_arrow, parse, referenced_names, simplify, to_arrow_expression
    text = data.decode("utf-8", "replace")
    expr = parse(text)
    repr(expr)
    referenced_names(expr)
    for case_sensitive in (True, False):
        try:
            bound = simplify(expr.bind(FILTER_SCHEMA, case_sensitive))
        except SchemaError:   # an unknown column or an operation the column type lacks: the documented outcome
            continue
        table = _MEMORY.get("filter_table")
        if table is None:
            table = _MEMORY["filter_table"] = filter_table()
        mask = evaluate_arrow(bound, table)
        mask.validate(full=True)
        assert len(mask) == table.num_rows and mask.null_count == 0, "the mask has a row per row and no nulls"
        to_arrow_expression(bound)
        repr(bound)


def variant(data: bytes):
    """A Variant (Parquet Variant encoding): a 2-byte LE metadata length, the metadata, then the value; decoded to
    Python objects and to JSON text (which must parse)."""
    import json

    from paimon_engine.formats.variant import decode, to_json
    n = int.from_bytes(data[:2], "little") if len(data) >= 2 else 0
    metadata, value = data[2:2 + n], data[2 + n:]
    decode(metadata, value, column="v", row=0)
    json.loads(to_json(metadata, value, column="v", row=0))


#: target name -> function(bytes)
TARGETS = {
    "row_file": row_file,
    "row_file_flat": row_file_flat,
    "file_index": file_index,
    "bitmap_index": bitmap_index,
    "bloom_filter": bloom_filter,
    "bsi_index": bsi_index,
    "deletion_vectors": deletion_vectors,
    "puffin_deletion_vector": puffin_deletion_vector,
    "fory_standard": fory_standard,
    "fory_compact": fory_compact,
    "table_metadata": table_metadata,
    "manifest_list": manifest_list,
    "manifest": manifest,
    "manifest_avro": manifest_avro,
    "position_deletes": position_deletes,
    "equality_deletes": equality_deletes,
    "variant": variant,
    "parquet_data": parquet_data,
    "row_filter": row_filter,
}


def outcome(target: str, data: bytes):
    """``("ok", None)``, ``("rejected", error class name)`` or ``("finding", exception)`` for one input."""
    try:
        TARGETS[target](data)
    except PaimonEngineError as exc:
        return "rejected", type(exc).__name__
    except Exception as exc:   # every other exception is what the fuzzer looks for
        return "finding", exc
    return "ok", None
