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


# -- hostile filter strings: refused with InvalidArgumentError naming the position, never a foreign error -------

@pytest.mark.parametrize("text, match", [
    ("(" * 150 + "id = 1" + ")" * 150, "nest deeper than 100 levels at position 100"),
    ("not " * 150 + "id = 1", "nest deeper than 100 levels at position 400"),
    ("id = " + "9" * 5000, "expected a number of at most .* digits at position 5"),
    ("name = X'abc'", "expected an even number of hex digits at position 7"),
])
def test_hostile_syntax_is_refused_with_a_position(text, match):
    with pytest.raises(InvalidArgumentError, match=match):
        parse(text)


def test_nesting_up_to_the_limit_parses():
    from paimon_engine.expressions import MAX_FILTER_DEPTH
    e = parse("(" * MAX_FILTER_DEPTH + "id = 1" + ")" * MAX_FILTER_DEPTH)
    assert e == parse("id = 1")
    assert parse("not " * 3 + "id = 1").bind(SCHEMA) is not None


def test_long_chains_bind_and_evaluate():
    from paimon_engine.expressions import And, evaluate_arrow
    # thousands of terms: grouped as a balanced tree, so binding and evaluating do not recurse thousands deep
    text = " and ".join(f"id != {i}" for i in range(3000)) + " or id = 1"
    e = parse(text).bind(SCHEMA)
    data = pa.table({"id": pa.array([1, 2, 5000], pa.int64()), "name": ["a", "b", "c"],
                     "score": [1.0, 2.0, 3.0]})
    assert evaluate_arrow(e, data).to_pylist() == [True, False, True]
    repr(e)
    # short chains keep their left fold
    assert parse("id = 1 and id = 2 and id = 3") == And(And(parse("id = 1"), parse("id = 2")), parse("id = 3"))


@pytest.mark.parametrize("literal, column_type", [
    ("1e400", T.DecimalType(10, 2)),                  # a float that overflowed to inf
    ("'Infinity'", T.DecimalType(10, 2)),
    ("'1e999999'", T.DecimalType(38, 6)),             # quantizing needs more digits than the context has
    ("99999999999999", T.DateType()),                 # days since the epoch beyond year 9999
    ("timestamp '0001-01-01T00:00:00+01:00'", T.TimestampType(6)),
    ("timestamp '9999-12-31T23:00:00-05:00'", T.LocalZonedTimestampType(6)),
    ("1" + "0" * 400, T.DoubleType()),                # an int too large for a float
])
def test_out_of_range_literals_are_bind_errors(literal, column_type):
    schema = T.RowType([T.DataField(1, "c", column_type)])
    with pytest.raises(InvalidArgumentError, match="position 0"):
        parse(f"c = {literal}").bind(schema)


def test_uuid_literals_evaluate_against_uuid_columns():
    import uuid
    from paimon_engine.expressions import evaluate_arrow, to_arrow_expression
    schema = T.RowType([T.DataField(1, "u", T.UuidType())])
    data = pa.table({"u": pa.array([uuid.UUID(int=7).bytes, uuid.UUID(int=8).bytes, None], pa.binary(16))})
    text = "u = '00000000-0000-0000-0000-000000000007' or u in ('00000000-0000-0000-0000-000000000008')"
    e = parse(text).bind(schema)
    assert evaluate_arrow(e, data).to_pylist() == [True, True, False]
    to_arrow_expression(e)
