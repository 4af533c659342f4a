"""FileIndexBuilder options, validation, placement and the container it produces."""
import numpy as np
import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.batch import ColumnBatch
from paimon_engine.errors import InvalidArgumentError, SchemaError, UnsupportedTypeError
from paimon_engine.expressions import col
from paimon_engine.index import (BitmapIndex, BloomFilterIndex, FileIndexBuilder, FileIndexReader, SKIP,
                                 evaluate_file_index, index_file_name, should_embed)
from paimon_engine.io import FileIO

SCHEMA = T.parse_paimon_type("ROW<id BIGINT, name STRING, score DOUBLE, flag BOOLEAN, amount DECIMAL(10, 2)>")


def _batch(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    import decimal
    return ColumnBatch.from_arrow(pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "name": pa.array([f"user{i % 37}" for i in range(n)]),
        "score": pa.array(rng.random(n)),
        "flag": pa.array(rng.random(n) < 0.5),
        "amount": pa.array([decimal.Decimal(i) / 100 for i in range(n)], type=pa.decimal128(10, 2)),
    }), SCHEMA)


@pytest.mark.parametrize("options,error", [
    ({"file-index.zorder.columns": "id"}, InvalidArgumentError),
    ({"file-index.bitmap.columns": "nope"}, SchemaError),
    ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.size": "3"}, InvalidArgumentError),
    ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.name.fpp": "0.1"}, InvalidArgumentError),
    ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.fpp": "2"}, InvalidArgumentError),
    ({"file-index.bitmap.columns": "id", "file-index.bitmap.version": "3"}, InvalidArgumentError),
    ({"file-index.bitmap.columns": "id", "file-index.bitmap.id.index-block-size": "lots"}, InvalidArgumentError),
    ({"file-index.bsi.columns": "name"}, UnsupportedTypeError),
    ({"file-index.bsi.columns": "id", "file-index.bsi.id.x": "1"}, InvalidArgumentError),
    ({"file-index.bloom-filter.columns": "flag"}, UnsupportedTypeError),
    ({"file-index.bitmap.columns": "amount"}, UnsupportedTypeError),
    ({"file-index.bitmap": "id"}, InvalidArgumentError),
])
def test_bad_options_fail_early(options, error):
    with pytest.raises(error):
        FileIndexBuilder(SCHEMA, options)


def test_options_reach_the_indexes_and_placement(tmp_path):
    b = FileIndexBuilder(SCHEMA, {
        "file-index.bloom-filter.columns": "name,id",
        "file-index.bloom-filter.id.items": "1000",
        "file-index.bloom-filter.fpp": "0.01",
        "file-index.bitmap.columns": "flag, name",
        "file-index.bitmap.version": "1",
        "file-index.bsi.columns": "amount",
        "file-index.in-manifest-threshold": "100",
        "bucket": "4",  # not ours
    })
    batch = _batch()
    b.add(batch.slice(0, 400))
    b.add(batch.slice(400, 1000))
    data = b.finish()
    r = FileIndexReader(data, schema=SCHEMA)
    assert r.columns() == ["name", "id", "flag", "amount"]
    assert r.index_types("name") == ["bloom-filter", "bitmap"]
    bloom = BloomFilterIndex.from_bytes(r.index_bytes("id", "bloom-filter"), T.BigIntType())
    assert bloom.k == 7 and bloom.num_bits == 9592  # items 1000, fpp 0.01
    bm = BitmapIndex.from_bytes(r.index_bytes("flag", "bitmap"), T.BooleanType())
    assert bm.version == 1
    assert not b.embed(data) and not should_embed(data, 100) and should_embed(data, len(data))
    io = FileIO()
    loc = str(tmp_path / "data-1.row")
    embedded, where = b.write(io, loc)
    assert embedded is None and where == index_file_name(loc) and io.read_bytes(where) == data
    small = FileIndexBuilder(SCHEMA, {"file-index.bitmap.columns": "flag"})
    small.add(_batch(20))
    embedded, where = small.write(io, str(tmp_path / "data-2.row"))
    assert where is None and embedded is not None and len(embedded) <= 500
    assert FileIndexBuilder(SCHEMA, {}).finish() == b""


def test_evaluate_from_a_file(tmp_path):
    b = FileIndexBuilder(SCHEMA, {"file-index.bitmap.columns": "name", "file-index.bsi.columns": "amount,id"})
    batch = _batch()
    b.add(batch)
    io = FileIO()
    loc = str(tmp_path / "x.index")
    io.write_bytes(loc, b.finish())
    r = FileIndexReader(io.open_input(loc), schema=SCHEMA)
    res = evaluate_file_index((col("name") == "user3") & (col("amount") < 1), r)
    assert list(res.bitmap) == [3, 40, 77]
    assert evaluate_file_index(col("name") == "zz", r) is SKIP
    assert list(evaluate_file_index(col("id") >= 998, r).bitmap) == [998, 999]


def test_point_query_reads_one_block(tmp_path):
    """A point query answered by a bitmap index decodes only the block holding the row."""
    from paimon_engine.formats.row import RowFileReader, RowFileWriter
    n = 200_000
    schema = T.parse_paimon_type("ROW<id BIGINT, name STRING>")
    batch = ColumnBatch.from_arrow(pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                                             "name": pa.array([f"n{i}" for i in range(n)])}), schema)
    path = str(tmp_path / "f.row")
    with RowFileWriter(path, schema, block_size=16384) as w:
        w.write(batch)
    builder = FileIndexBuilder(schema, {"file-index.bitmap.columns": "id"})
    builder.add(batch)
    index = FileIndexReader(builder.finish(), schema=schema)
    reader = RowFileReader(path, schema)
    assert reader.index.block_count > 50
    result = evaluate_file_index(col("id") == 123_456, index)
    got = reader.read_all(selection=result.selection(reader.num_rows))
    assert got.to_pylist() == [{"id": 123_456, "name": "n123456"}]
    assert reader.blocks_read == 1
    assert evaluate_file_index(col("id") == n + 5, index) is SKIP
