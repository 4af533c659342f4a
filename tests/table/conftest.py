import datetime

import pyarrow as pa
import pytest


def sample(n=40, start=0, extra=False):
    ids = list(range(start, start + n))
    cols = {
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([None if i % 7 == 3 else f"name-{i:04d}-long-enough-to-truncate" for i in ids]),
        "ts": pa.array([datetime.datetime(2023, 12, 30) + datetime.timedelta(hours=13 * i) for i in ids],
                       pa.timestamp("us")),
        "d": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=40 * i) for i in ids], pa.date32()),
        "amount": pa.array([i * 1.5 if i % 11 else float("nan") for i in ids], pa.float64()),
        "qty": pa.array([i % 5 for i in ids], pa.int32()),
    }
    if extra:
        cols["note"] = pa.array([f"n{i}" for i in ids])
    return pa.table(cols)


def canon(tbl, cols=None):
    """Rows sorted by id as python dicts (NaN made comparable)."""
    import math
    cols = cols or tbl.column_names
    rows = tbl.select(cols).to_pylist()
    for r in rows:
        for k, v in r.items():
            if isinstance(v, float) and math.isnan(v):
                r[k] = "NaN"
    return sorted(rows, key=lambda r: r["id"])


@pytest.fixture
def sql_uri(tmp_path):
    return f"sqlite:///{tmp_path}/catalog.db"


@pytest.fixture
def ours(tmp_path, sql_uri):
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=sql_uri, warehouse=str(tmp_path / "wh"))
    return cat


@pytest.fixture
def theirs(tmp_path, sql_uri, ours):
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    return PySqlCatalog("default", uri=sql_uri, warehouse=f"file://{tmp_path}/wh")


from .pg_fixture import _pg_database_for_pg_kind, pg_server, pg_uri  # noqa: E402,F401  (PostgreSQL for the SQL catalog tests)
