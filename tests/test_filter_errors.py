"""String filters: a bind error names the column and its position in the filter text."""
import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.catalog import load_catalog
from paimon_engine.errors import InvalidArgumentError, SchemaError
from paimon_engine.expressions import parse

SCHEMA = T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "name", T.STRING()),
                    T.DataField(3, "score", T.DoubleType())])


@pytest.mark.parametrize("text, error, column, pos", [
    ("id > 5 and nme = 1", SchemaError, "nme", 11),
    ("id > 'abc'", InvalidArgumentError, "id", 0),
    ("name = 'x' and (id in (1, 'z') or id is null)", InvalidArgumentError, "id", 16),
    ("id > 5 and name like 'a%' and id between 1 and 'q'", InvalidArgumentError, "id", 30),
    ("3 < nope", SchemaError, "nope", 4),
    ("not (id = 1 or is_nan(name))", SchemaError, "name", 22),
    ("id = 1 and name like 'a%' and score like 'b%'", SchemaError, "score", 30),
])
def test_bind_error_points_at_column_and_position(text, error, column, pos):
    with pytest.raises(error) as info:
        parse(text).bind(SCHEMA)
    msg = str(info.value)
    assert f"column {column!r} at position {pos} of filter" in msg
    assert text[pos:pos + len(column)] == column


def test_syntax_error_names_position():
    with pytest.raises(InvalidArgumentError, match="expected more input at position 4"):
        parse("id >")
    with pytest.raises(InvalidArgumentError, match="expected a literal .* at position 5"):
        parse("id = null")


def test_built_expressions_keep_their_message():
    from paimon_engine.expressions import EqualTo
    with pytest.raises(SchemaError) as info:
        EqualTo("nme", 1).bind(SCHEMA)
    assert "position" not in str(info.value)


def test_scan_and_delete_report_the_position(tmp_path):
    cat = load_catalog("x", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path))
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=pa.schema([pa.field("id", pa.int64()), pa.field("city", pa.string())]))
    t.append(pa.table({"id": pa.array([1], pa.int64()), "city": ["a"]}))
    with pytest.raises(SchemaError, match="column 'cty' at position 11"):
        t.scan(row_filter="id >= 0 or cty = 'a'").to_arrow()
    with pytest.raises(InvalidArgumentError, match="column 'id' at position 15"):
        t.delete(delete_filter="city = 'a' and id = 'one'")
    assert t.scan().count() == 1
