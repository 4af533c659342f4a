import datetime
import decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from paimon_engine.errors import InvalidArgumentError, SchemaError
from paimon_engine.expressions import (
    AlwaysFalse, AlwaysTrue, And, Not, Or, Predicate, col, evaluate_arrow, evaluate_numpy, parse, referenced_names,
    rewrite_not, simplify, to_arrow_expression,
)
from paimon_engine.types import parse_paimon_type

SCHEMA = parse_paimon_type(
    "ROW<x INT, y STRING, z DOUBLE, d DATE, ts TIMESTAMP(6), dec DECIMAL(10, 2), s ROW<a BIGINT>, b BYTES>")


def test_builder_and_parser_agree():
    built = ((col("x") > 5) & col("y").isin(["a", "b"])) | ~col("z").is_null()
    assert parse("x > 5 and y in ('a', 'b') or not z is null") == built
    assert parse("5 < x") == (col("x") > 5)
    assert parse("`weird name` = 'it''s'") == (col("weird name") == "it's")
    assert parse("x between 1 and 3") == And(col("x") >= 1, col("x") <= 3)
    assert parse("y like 'ab%'") == col("y").starts_with("ab")
    assert parse("y not like 'ab%'") == col("y").not_starts_with("ab")
    assert parse("d = date '2024-02-29'") == (col("d") == datetime.date(2024, 2, 29))
    assert parse("s.a is not null") == col("s.a").not_null()
    assert parse("x not in (1, 2)") == col("x").not_in([1, 2])
    assert parse("b = X'00ff'") == (col("b") == b"\x00\xff")
    assert parse("is_nan(z)") == col("z").is_nan()
    assert parse("") == AlwaysTrue() and parse("false") == AlwaysFalse()
    assert (col("x") == None) == col("x").is_null()  # noqa: E711


@pytest.mark.parametrize("bad", ["x >", "x = = 1", "(x = 1", "x = 1 y", "x like 'a%b'", "x = null", "x in ()",
                                 "'a' 'b'", "x ~ 1", "date 'nope' = d"])
def test_parser_errors(bad):
    with pytest.raises(InvalidArgumentError):
        parse(bad)


def test_repr_roundtrips_through_the_parser():
    e = parse("x >= 2 and (y = 'a''b' or y is null) and not ts < timestamp '2024-01-01T00:00:00'")
    assert parse(repr(e)) == e


def test_bind_converts_literals_and_records_ids():
    b = parse("x = 5.0 and dec < 1.5 and d > '2020-01-01' and s.a in (1, 2)").bind(SCHEMA)
    leaves = [b.left.left.left, b.left.left.right, b.left.right, b.right]
    assert leaves[0].literal == 5 and isinstance(leaves[0].literal, int) and leaves[0].field_id == 0
    assert leaves[1].literal == decimal.Decimal("1.50")
    assert leaves[2].literal == datetime.date(2020, 1, 1)
    assert leaves[3].field_id == 0 and leaves[3].name == "s.a"
    with pytest.raises(SchemaError, match="no column"):
        parse("nope = 1").bind(SCHEMA)
    with pytest.raises(InvalidArgumentError, match="out of range"):
        (col("x") == 1 << 40).bind(SCHEMA)
    with pytest.raises(InvalidArgumentError):
        (col("dec") == decimal.Decimal("1.234")).bind(SCHEMA)
    with pytest.raises(SchemaError):
        col("x").is_nan().bind(SCHEMA)
    with pytest.raises(SchemaError):
        (col("s") == 1).bind(SCHEMA)
    assert col("x").isin([]).bind(SCHEMA) == AlwaysFalse()
    assert col("X").is_null().bind(SCHEMA, case_sensitive=False).field_id == 0


def test_rewrite_not_and_simplify():
    e = ~((col("x") > 1) & ~col("y").is_null())
    assert rewrite_not(e) == Or(col("x") <= 1, col("y").is_null())
    assert simplify(And(AlwaysTrue(), col("x") == 1)) == (col("x") == 1)
    assert simplify(Or(AlwaysTrue(), col("x") == 1)) == AlwaysTrue()
    assert simplify(Not(AlwaysFalse())) == AlwaysTrue()
    assert referenced_names(e) == {"x", "y"}
    with pytest.raises(TypeError):
        bool(col("x") == 1)


TABLE = pa.table({
    "x": pa.array([1, 5, None, 7], pa.int32()),
    "y": pa.array(["ab", None, "abc", "b"]),
    "z": pa.array([1.0, float("nan"), None, 2.0]),
    "s": pa.array([{"a": 1}, {"a": None}, None, {"a": 4}]),
})


def test_evaluate_sql_null_semantics():
    ev = lambda text: evaluate_arrow(parse(text), TABLE).to_pylist()  # noqa: E731
    assert ev("x > 1") == [False, True, False, True]
    assert ev("not x > 1") == [True, False, False, False]  # null is neither
    assert ev("x != 5") == [True, False, False, True]
    assert ev("x in (1, 7)") == [True, False, False, True]
    assert ev("x not in (1, 7)") == [False, True, False, False]
    assert ev("x is null") == [False, False, True, False]
    assert ev("y like 'ab%'") == [True, False, True, False]
    assert ev("is_nan(z)") == [False, True, False, False]
    assert ev("s.a >= 1") == [True, False, False, True]
    assert ev("true") == [True] * 4
    assert ev("x > 1 or y is null") == [False, True, False, True]
    assert evaluate_arrow(col("x") > 1, TABLE.to_batches()[0]).null_count == 0


def test_arrow_expression_matches_evaluate():
    import pyarrow.dataset as ds
    for text in ["x > 1", "not x > 1", "x not in (1, 7)", "y like 'ab%' or x is null", "x != 5"]:
        expected = TABLE.filter(evaluate_arrow(parse(text), TABLE))
        got = ds.dataset(TABLE).to_table(filter=to_arrow_expression(parse(text)))
        assert got.select(["x", "y"]).to_pylist() == expected.select(["x", "y"]).to_pylist(), text


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=1, max_size=20),
       st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]), st.integers(-5, 5), st.booleans())
def test_evaluate_matches_python(values, op, lit, negate):
    import operator
    table = pa.table({"v": pa.array(values, pa.int64())})
    e = Predicate(op, "v", lit)
    e = ~e if negate else e
    fn = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
          "ge": operator.ge}[op]
    expected = [v is not None and (fn(v, lit) != negate) for v in values]
    assert evaluate_arrow(e, table).to_pylist() == expected


def test_case_insensitive_binding_reads_the_schemas_spelling(tmp_path):
    import pyarrow as pa

    from paimon_engine.expressions import EqualTo
    from paimon_engine.catalog import FileSystemCatalog
    t = FileSystemCatalog(str(tmp_path)).create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    t.append(pa.table({"id": pa.array([1, 2, 3, 4, 5], pa.int64()), "v": list("abcde")}))
    t.append(pa.table({"id": pa.array([4, 6], pa.int64()), "v": list("xy")}))
    got = t.scan(row_filter=EqualTo("ID", 4), case_sensitive=False).to_arrow()
    assert sorted(got.column("v").to_pylist()) == ["d", "x"]
    with pytest.raises(SchemaError):
        t.scan(row_filter=EqualTo("ID", 4)).to_arrow()


_INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_INT_TYPES + [pa.float32(), pa.float64(), pa.string(), pa.large_string(), pa.bool_(),
                                     pa.date32()]),
       st.one_of(st.integers(min_value=-(1 << 70), max_value=1 << 70), st.floats(allow_nan=True), st.text(),
                 st.booleans(), st.none()))
def test_literal_scalars_are_the_ones_arrow_converts(arrow_type, value):
    # a literal built from its bytes is the scalar pa.scalar gives, and a literal pa.scalar refuses is still refused
    from paimon_engine.expressions import _bytes_scalar, _scalar
    try:
        want = pa.scalar(value, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        want = None
    def same(a, b):     # (NaN equal to NaN)
        if a.type != b.type:
            return False
        if pa.types.is_floating(a.type) and a.is_valid and b.is_valid and a.as_py() != a.as_py():
            return b.as_py() != b.as_py()
        return pa.array([a], a.type).equals(pa.array([b], b.type))
    fast = _bytes_scalar(value, arrow_type)
    if fast is not None:
        assert want is not None and same(fast, want), (value, arrow_type)
    if want is None:
        with pytest.raises(InvalidArgumentError):
            _scalar(value, arrow_type)
    else:
        assert same(_scalar(value, arrow_type), want)


def test_literal_scalars_at_the_edges_of_their_types():
    from paimon_engine.expressions import _bytes_scalar
    for t in _INT_TYPES:
        signed = pa.types.is_signed_integer(t)
        lo = -(1 << (t.bit_width - 1)) if signed else 0
        hi = (1 << (t.bit_width - 1)) - 1 if signed else (1 << t.bit_width) - 1
        assert _bytes_scalar(lo, t).as_py() == lo and _bytes_scalar(hi, t).as_py() == hi
        assert _bytes_scalar(lo - 1, t) is None and _bytes_scalar(hi + 1, t) is None
    assert _bytes_scalar(1 << 53, pa.float64()).as_py() == float(1 << 53)
    assert _bytes_scalar((1 << 53) + 1, pa.float64()) is None     # not exactly a double: pa.scalar says why
    assert _bytes_scalar(True, pa.int32()) is None                 # a bool is not taken for an int
    assert _bytes_scalar("\ud800", pa.string()) is None            # a lone surrogate is not UTF-8
    assert _bytes_scalar("é€", pa.large_string()).as_py() == "é€"


def test_evaluating_a_filter_does_not_import_pandas():
    # Arrow's conversion of Python values imports pandas on its first use (a fifth of a second): comparisons
    # with int, float and str literals, set membership misses and the null fill avoid it
    import subprocess
    import sys
    code = (
        "import sys\n"
        "import pyarrow as pa\n"
        "from paimon_engine.batch import numbers_to_arrow\n"
        "from paimon_engine.expressions import evaluate_arrow, parse\n"
        "import numpy as np\n"
        "t = pa.Table.from_arrays([numbers_to_arrow(np.arange(10, dtype=np.int32)),\n"
        "                          numbers_to_arrow(np.linspace(0, 1, 10))], names=['k', 'v'])\n"
        "m = evaluate_arrow(parse(\"k < 5 and v >= 0.25 or not (k = 7)\"), t)\n"
        "assert m.to_pylist() == [k < 5 and v >= 0.25 or k != 7 for k, v in zip(range(10), np.linspace(0, 1, 10))]\n"
        "print('pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


_NUMBER_TYPES = _INT_TYPES + [pa.float32(), pa.float64()]


@st.composite
def _number_columns(draw):
    t = draw(st.sampled_from(_NUMBER_TYPES))
    if pa.types.is_floating(t):
        width = 32 if pa.types.is_float32(t) else 64
        value = st.one_of(st.floats(width=width, allow_nan=True), st.sampled_from([0.0, -0.0, 1.5]))
    else:
        signed = pa.types.is_signed_integer(t)
        lo = -(1 << (t.bit_width - 1)) if signed else 0
        hi = (1 << (t.bit_width - 1)) - 1 if signed else (1 << t.bit_width) - 1
        value = st.one_of(st.integers(lo, hi), st.integers(-3, 3).filter(lambda v: lo <= v <= hi))
    values = draw(st.lists(st.one_of(st.none(), value), min_size=0, max_size=30))
    arr = pa.array(values, t)
    start = draw(st.integers(0, len(values)))
    arr = arr.slice(start, draw(st.integers(0, len(values) - start)))
    literal = draw(st.one_of(value.filter(lambda v: v is not None), st.integers(-(1 << 70), 1 << 70),
                             st.floats(allow_nan=True)))
    return arr, literal


@settings(max_examples=400, deadline=None)
@given(_number_columns(), st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "is_null", "not_null"]),
       st.booleans(), st.sampled_from(["and", "or", "alone"]))
def test_number_filters_computed_with_numpy_agree_with_arrow(column, op, negate, join):
    # comparisons of number columns (sliced, with nulls, NaN and -0.0) are computed from their buffers: the same
    # masks as Arrow's compute functions, and a literal Arrow refuses is refused the same way
    import pyarrow.compute as pc
    arr, literal = column
    table = pa.table({"v": arr, "w": pa.array(range(len(arr)), pa.int64())})
    e = Predicate(op, "v") if op in ("is_null", "not_null") else Predicate(op, "v", literal)
    if negate:
        e = ~e
    other = Predicate("lt", "w", 5)
    e = e & other if join == "and" else e | other if join == "or" else e

    def arrow_mask(p):
        if isinstance(p, Not):
            return pc.invert(arrow_mask(p.child))
        if isinstance(p, And):
            return pc.and_(arrow_mask(p.left), arrow_mask(p.right))
        if isinstance(p, Or):
            return pc.or_(arrow_mask(p.left), arrow_mask(p.right))
        col_ = table.column(p.name).combine_chunks()
        if p.op == "is_null":
            return pc.is_null(col_)
        if p.op == "not_null":
            return pc.is_valid(col_)
        fn = {"eq": pc.equal, "ne": pc.not_equal, "lt": pc.less, "le": pc.less_equal, "gt": pc.greater,
              "ge": pc.greater_equal}[p.op]
        return fn(col_, pa.scalar(p.literal, type=col_.type)).fill_null(False)

    try:
        want = arrow_mask(rewrite_not(e)).to_pylist()
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        with pytest.raises(InvalidArgumentError):
            evaluate_arrow(e, table)
        return
    got = evaluate_arrow(e, table)
    assert got.null_count == 0 and got.to_pylist() == want
    flags = evaluate_numpy(e, table)
    assert flags.dtype == np.bool_ and flags.tolist() == want
