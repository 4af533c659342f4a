import pytest



def test_create_table_at_a_path_and_load_it_back(tmp_path):
    import pyarrow as pa
    from paimon_engine.errors import AlreadyExistsError
    from paimon_engine.catalog import FileSystemCatalog
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    loc = str(tmp_path / "elsewhere" / "t")
    t = cat.create_table_at(loc, pa.schema([("id", pa.int64())]), [("id", "bucket[4]")])
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    again = cat.load_table_at(loc)
    assert sorted(again.to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert str(again.spec().fields[0].transform) == "bucket[4]"
    with pytest.raises(AlreadyExistsError):
        cat.create_table_at(loc, pa.schema([("id", pa.int64())]))
