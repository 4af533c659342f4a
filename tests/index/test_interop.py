"""Deletion vectors against pypaimon's implementation (the peer reads ours, we read the peer's)."""
import numpy as np
import pytest

from paimon_engine.index import DeletionVector, DeletionVectorMeta, read_deletion_vector, \
    write_deletion_vector_index

pytest.importorskip("pypaimon")


def _peer_io():
    from pypaimon.filesystem.local_file_io import LocalFileIO
    try:
        return LocalFileIO()
    except TypeError:
        return LocalFileIO("file:///")


@pytest.mark.parametrize("positions", [[2, 3], [1], list(range(0, 100000, 7)), [0, 65535, 65536, 2 ** 31 - 5]])
def test_pypaimon_reads_our_index_file(tmp_path, positions):
    from pypaimon.deletionvectors.deletion_vector import DeletionVector as PeerDV
    from pypaimon.table.source.deletion_file import DeletionFile
    data, metas = write_deletion_vector_index({"a": DeletionVector([5, 6]), "b": DeletionVector(positions)})
    path = tmp_path / "index-1"
    path.write_bytes(data)
    m = metas["b"]
    dv = PeerDV.read(_peer_io(), DeletionFile(str(path), m.offset, m.length, m.cardinality))
    assert dv.get_cardinality() == len(positions)
    assert all(dv.is_deleted(p) for p in positions[:50])


def test_we_read_pypaimon_entries():
    from pypaimon.deletionvectors.bitmap_deletion_vector import BitmapDeletionVector
    rng = np.random.default_rng(0)
    for positions in ([2, 3], sorted(set(rng.integers(0, 1 << 20, 5000).tolist()))):
        peer = BitmapDeletionVector()
        for p in positions:
            peer.delete(p)
        entry = peer.serialize()
        blob = b"\x01" + entry
        ours = read_deletion_vector(blob, DeletionVectorMeta(1, len(entry) - 8, len(positions)))
        assert list(ours.bitmap) == positions
        # same bytes as the peer when no runs are worth encoding
        assert DeletionVector(positions).serialize() == entry


def test_32bit_positions_are_capped_like_java():
    from paimon_engine.errors import InvalidArgumentError
    with pytest.raises(InvalidArgumentError):
        DeletionVector([2 ** 31])
    dv = DeletionVector([1])
    with pytest.raises(InvalidArgumentError):
        dv.delete(2 ** 31)
    assert len(DeletionVector([2 ** 31], bit64=True)) == 1
