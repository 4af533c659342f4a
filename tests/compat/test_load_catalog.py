import pytest

import paimon_engine
from paimon_engine.catalog import SqlCatalog, FileSystemCatalog, load_catalog
from paimon_engine.errors import InvalidArgumentError


def test_type_config_file_and_env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for k in list(__import__("os").environ):
        if k.upper().startswith(("PYICEBERG_", "PAIMON_ENGINE_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert isinstance(load_catalog("x", type="sql", uri=f"sqlite:///{tmp_path}/a.db", warehouse=str(tmp_path)),
                      SqlCatalog)
    assert isinstance(paimon_engine.load_catalog("fs", warehouse=str(tmp_path / "w")), FileSystemCatalog)
    (tmp_path / ".pyiceberg.yaml").write_text(f"catalog:\n  prod:\n    uri: sqlite:///{tmp_path}/p.db\n"
                                              f"    warehouse: {tmp_path}/wh\n")
    cat = load_catalog("prod")
    assert isinstance(cat, SqlCatalog) and cat.name == "prod"
    monkeypatch.setenv("PAIMON_ENGINE_CATALOG__ENVCAT__TYPE", "filesystem")
    monkeypatch.setenv("PAIMON_ENGINE_CATALOG__ENVCAT__WAREHOUSE", str(tmp_path / "ew"))
    assert isinstance(load_catalog("envcat"), FileSystemCatalog)
    with pytest.raises(InvalidArgumentError, match="unknown catalog type"):
        load_catalog("y", type="nope")


def test_unknown_scan_keyword_is_a_type_error(tmp_path):
    import pyarrow as pa
    cat = load_catalog("c", type="sql", uri=f"sqlite:///{tmp_path}/a.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", pa.schema([("id", pa.int64())]))
    with pytest.raises(TypeError):
        t.scan(bogus=1)
    assert t.scan(limit=0).to_arrow().num_rows == 0
