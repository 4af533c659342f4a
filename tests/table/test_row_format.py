"""``write.format.default=row``: data and delete files in Paimon's .row format."""
import importlib.util

import pytest

from paimon_engine.errors import InvalidArgumentError
from paimon_engine.expressions import col
from paimon_engine.table.catalog import FileSystemCatalog

from .conftest import canon, sample

HAVE_ROW = importlib.util.find_spec("paimon_engine.formats") is not None and \
    importlib.util.find_spec("paimon_engine.formats.row") is not None


def test_row_format_tables(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema, [("qty", "identity")],
                         properties={"write.format.default": "row"})
    if not HAVE_ROW:
        with pytest.raises(InvalidArgumentError, match="row format layer"):
            t.append(sample(10))
        return
    t.append(sample(30))
    files = t.data_files()
    assert {e.data_file.file_format for e in files} == {"ROW"}
    assert all(e.data_file.writer_schema_id == t.schema().schema_id for e in files)
    t.delete(col("id").isin([3, 4, 5]))
    assert {d.data_file.file_format for d in t.delete_files()} == {"ROW"}
    want = [r for r in canon(sample(30)) if r["id"] not in (3, 4, 5)]
    assert canon(t.to_arrow()) == want
    t.delete(col("id") == 7, mode="equality", equality_columns=["id"])
    assert 7 not in t.to_arrow().column("id").to_pylist()
