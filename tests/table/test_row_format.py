"""``write.format.default=row``: data and delete files in Paimon's .row format."""
import importlib.util

import pytest

from paimon_engine.errors import InvalidArgumentError
from paimon_engine.expressions import col
from paimon_engine.catalog import FileSystemCatalog

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
    # schema evolution: old row files are read with their writer schema and projected by field id
    from paimon_engine import types as T
    with t.update_schema() as u:
        u.rename_column("name", "label")
        u.add_column("note", T.STRING())
        u.update_column("qty", T.BigIntType())
    t.append(sample(2, start=200).rename_columns(["id", "label", "ts", "d", "amount", "qty"]))
    out = t.to_arrow()
    assert out.column_names == ["id", "label", "ts", "d", "amount", "qty", "note"]
    assert {e.data_file.writer_schema_id for e in t.data_files()} == {0, 1}
    got = {r["id"]: r for r in out.to_pylist()}
    assert got[200]["label"] == "name-0200-long-enough-to-truncate" and got[0]["label"] == sample(1).to_pylist()[0]["name"]
    assert got[8]["qty"] == 3 and got[8]["note"] is None
    # the writer schema id travels in the manifest's extension field
    import fastavro
    from paimon_engine.spec.manifest_list import read_manifest_list
    ml = read_manifest_list(t.io, t.current_snapshot().manifest_list)
    with open([m for m in ml if m.content == 0][0].manifest_path, "rb") as f:
        recs = list(fastavro.reader(f))
    assert {r["data_file"]["pe_writer_schema_id"] for r in recs} <= {0, 1}
