"""The rowindex kernel (decoding and checking a .row block index): compiled and twin agree on good and bad
indexes, value for value and status for status."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from paimon_engine import _speedups
from paimon_engine.encoding import encode_delta_varint, encode_uvarint32

from .impls import implementations

IMPLS = implementations("rowindex")


def index_bytes(csz, usz, starts):
    out = b""
    for arr in (csz, usz, starts):
        enc = encode_delta_varint(np.asarray(arr, dtype=np.int64))
        out += encode_uvarint32(len(enc)) + enc
    return out


def run(impl, data, n, rows, ioff, max_block=-1):
    out = np.full(4 * n if 0 <= n <= len(data) else 0, -7, dtype=np.int64)
    state = np.zeros(5, dtype=np.int64)
    st_ = impl.check_block_index(data, n, rows, ioff, max_block, out, state)
    return st_, state.tolist(), out


@pytest.mark.parametrize("impl", IMPLS)
def test_good_index_decodes_with_offsets(impl):
    csz, usz, starts = [10, 20, 5], [100, 200, 40], [0, 7, 30]
    st_, _, out = run(impl, index_bytes(csz, usz, starts), 3, 33, 35)
    assert st_ == 0
    assert out.tolist() == csz + usz + starts + [0, 10, 30]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("kwargs, check", [
    (dict(csz=[10, -1]), "IX_NEGATIVE"),
    (dict(usz=[100, -1]), "IX_NEGATIVE"),
    (dict(csz=[10, 99]), "IX_CSZ_BIG"),
    (dict(csz=[10, 19]), "IX_SUM"),
    (dict(starts=[1, 7]), "IX_STARTS"),
    (dict(starts=[0, 0]), "IX_STARTS"),
    (dict(starts=[0, 40]), "IX_STARTS"),
    (dict(usz=[100, 4 * 26 + 3]), "IX_SMALL"),
    (dict(usz=[100, 20 * 32768 + 1025]), "IX_RATIO"),
    (dict(max_block=150), "IX_MAX"),
])
def test_each_invariant(impl, kwargs, check):
    csz, usz, starts = kwargs.get("csz", [10, 20]), kwargs.get("usz", [100, 200]), kwargs.get("starts", [0, 7])
    st_, state, _ = run(impl, index_bytes(csz, usz, starts), 2, 33, 30, kwargs.get("max_block", -1))
    assert st_ < 0 and state[0] == getattr(impl, check)
    assert st_ == run(_speedups.twin("rowindex"), index_bytes(csz, usz, starts), 2, 33, 30,
                      kwargs.get("max_block", -1))[0]


@pytest.mark.parametrize("impl", IMPLS)
def test_smallest_block_that_holds_its_rows(impl):
    # 26 rows need 4 * 26 + 4 bytes of offsets and count
    assert run(impl, index_bytes([10, 20], [100, 4 * 26 + 4], [0, 7]), 2, 33, 30)[0] == 0
    assert run(impl, index_bytes([10, 20], [100, 4 * 26 + 3], [0, 7]), 2, 33, 30)[0] < 0


@pytest.mark.parametrize("impl", IMPLS)
def test_framing_errors(impl):
    good = index_bytes([10, 20], [100, 200], [0, 7])
    assert run(impl, good + b"\x00", 2, 33, 30)[1][0] == impl.IX_STRAY
    assert run(impl, good[:-1], 2, 33, 30)[1][0] == impl.IX_LEN_FIT
    assert run(impl, b"\x80", 2, 33, 30)[1][0] == impl.IX_LEN_VARINT
    assert run(impl, good, 3, 33, 30)[1][0] == impl.IX_COUNT_FIT
    assert run(impl, good, 1, 33, 30)[1][0] == impl.IX_EXTRA
    assert run(impl, b"\x02\x80\x80" + good[3:], 2, 33, 30)[1][0] == impl.IX_VALUES
    assert run(impl, b"\x00\x00\x00", 0, 5, 0)[1][0] == impl.IX_EMPTY
    assert run(impl, b"\x00\x00\x00", 0, 0, 0)[0] == 0
    assert run(impl, good, 2_000_000_000, 33, 30)[1][0] == impl.IX_COUNT_FIT  # no allocation for the claim


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=40), n=st.integers(0, 6), rows=st.integers(0, 50), ioff=st.integers(0, 80),
       max_block=st.sampled_from([-1, 64]))
def test_compiled_and_twin_agree_on_any_bytes(data, n, rows, ioff, max_block):
    twin = _speedups.twin("rowindex")
    expect = run(twin, data, n, rows, ioff, max_block)
    for impl in IMPLS:
        got = run(impl.values[0], data, n, rows, ioff, max_block)
        assert got[0] == expect[0] and got[1] == expect[1]
        if expect[0] == 0:
            assert got[2].tolist() == expect[2].tolist()


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.tuples(st.integers(-3, 40), st.integers(-3, 3000), st.integers(-2, 60)), max_size=6),
       rows=st.integers(0, 70), ioff=st.integers(0, 120), max_block=st.sampled_from([-1, 1500]))
def test_compiled_and_twin_agree_on_well_framed_indexes(values, rows, ioff, max_block):
    csz, usz, starts = ([v[i] for v in values] for i in range(3))
    data = index_bytes(csz, usz, starts)
    twin = _speedups.twin("rowindex")
    expect = run(twin, data, len(values), rows, ioff, max_block)
    for impl in IMPLS:
        got = run(impl.values[0], data, len(values), rows, ioff, max_block)
        assert got[0] == expect[0] and got[1] == expect[1]
        if expect[0] == 0:
            assert got[2].tolist() == expect[2].tolist()


def test_compiled_and_twin_agree_next_to_every_boundary():
    """A valid index with each value moved by -1, +1 and to the nearest edge of its invariant: the compiled
    kernel's one-pass check and the twin's ordered checks give the same status and location."""
    twin = _speedups.twin("rowindex")
    base = [[30, 2, 40], [4 * 5 + 4, 2 * 32768 + 1024, 4 * 7 + 4], [0, 5, 6]]  # rows 5, 1, 7 -> 13
    for impl in IMPLS:
        for a in range(3):
            for b in range(3):
                for new in {base[a][b] - 1, base[a][b] + 1, 0, 1, 3, 4, 12, 13, 72, 73, 2 * 32768 + 1025}:
                    arrs = [list(x) for x in base]
                    arrs[a][b] = new
                    data = index_bytes(*arrs)
                    for ioff, mb in ((72, -1), (72, 2 * 32768 + 1023), (71, -1)):
                        expect = run(twin, data, 3, 13, ioff, mb)
                        got = run(impl.values[0], data, 3, 13, ioff, mb)
                        assert got[0] == expect[0] and got[1] == expect[1], (a, b, new, ioff, mb)
    assert run(twin, index_bytes(*base), 3, 13, 72)[0] == 0


@pytest.mark.parametrize("impl", IMPLS)
@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.tuples(st.integers(-2, 1 << 40), st.integers(-2, 1 << 40), st.integers(-2, 1 << 40)),
                       max_size=8),
       cut=st.integers(0, 3), flip=st.integers(0, 400))
def test_wide_values_any_input_form(impl, values, cut, flip):
    """Varints of one to six bytes, the index cut short or with one byte changed: each implementation agrees
    with the twin, and gives the same answer for bytes and exact NumPy arrays as for other buffers (a bytearray
    or a memoryview of the index; the compiled kernel also takes the arrays behind memoryviews)."""
    n = len(values)
    csz, usz, starts = ([v[i] for v in values] for i in range(3))
    data = bytearray(index_bytes(csz, usz, starts))
    if cut:
        del data[len(data) - cut:]
    if data and flip < 4 * len(data):
        data[flip % len(data)] ^= 1 << (flip % 8)
    data = bytes(data)
    ioff = sum(max(c, 0) for c in csz)
    rows = (max(starts) + 5) if starts else 0
    want = run(_speedups.twin("rowindex"), data, n, rows, ioff)
    got = run(impl, data, n, rows, ioff)
    assert got[0] == want[0] and got[1] == want[1]
    if want[0] == 0:
        assert got[2].tolist() == want[2].tolist()
    views = impl is not _speedups.twin("rowindex")
    for form in (bytearray(data), memoryview(data)):
        out = np.full(len(got[2]), -7, dtype=np.int64)
        state = np.zeros(5, dtype=np.int64)
        st_ = impl.check_block_index(form, n, rows, ioff, -1, memoryview(out) if views else out,
                                     memoryview(state) if views else state)
        assert (st_, state.tolist()) == got[:2]
        if st_ == 0:
            assert out.tolist() == got[2].tolist()


def test_selected_rows_are_block_local_and_cut_per_block():
    """selected_rows gives each block's flagged rows as block-local numbers, one block after another, with the
    place where each block's begin: against numpy for random block sizes (empty blocks included), drop rates from
    none to all and flags other than 0 and 1; a room short by one row, starts that do not ascend from 0 to the
    flag count and too few cut entries are refused before anything is written."""
    rng = np.random.default_rng(3)
    for k in [p.values[0] for p in IMPLS]:
        for trial in range(300):
            sizes = rng.integers(0, 40, int(rng.integers(0, 12)))
            if trial % 5 == 0 and len(sizes):
                sizes[int(rng.integers(0, len(sizes)))] = 0
            starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            n = int(starts[-1])
            flags = (rng.random(n) >= (0.0, 0.05, 0.5, 1.0)[trial % 4]).astype(np.uint8)
            if trial % 3 == 1:
                flags *= rng.integers(1, 256, n, dtype=np.uint8)
            rows = np.flatnonzero(flags)
            block = np.searchsorted(starts, rows, side="right") - 1
            want_local = (rows - starts[block]).tolist()
            want_cuts = np.searchsorted(rows, starts).tolist()
            local = np.full(len(rows) + 3, -7, np.int32)
            cuts = np.full(len(starts) + 2, -7, np.int64)
            room = local[:len(rows)]
            assert k.selected_rows(flags, starts, room, cuts) == len(rows), trial
            assert local[:len(rows)].tolist() == want_local, trial
            assert (local[len(rows):] == -7).all(), trial
            assert cuts[:len(starts)].tolist() == want_cuts, trial
            if len(rows):
                short = np.full(len(rows) - 1, -7, np.int32)
                assert k.selected_rows(flags, starts, short, cuts) == -4, trial
                assert (short == -7).all(), trial
            assert k.selected_rows(flags, starts, room, cuts[:len(starts) - 1]) == -4, trial
            if n:
                bad = starts.copy()
                bad[-1] += 1
                assert k.selected_rows(flags, bad, room, cuts) == -5, trial
                if len(starts) > 2:
                    bad = starts.copy()
                    bad[1] = bad[2] + 1
                    assert k.selected_rows(flags, bad, room, cuts) == -5, trial


def _tail_file(csz, usz, starts, rows, lead=0, ioff=None):
    """(The bytes of a file's last part: ``lead`` bytes of blocks before the index, the index, the footer; the
    file's size). The index starts at ``ioff`` (default: after the compressed sizes)."""
    import struct
    index = index_bytes(csz, usz, starts)
    ioff = sum(max(c, 0) for c in csz) if ioff is None else ioff
    footer = struct.pack("<qiqib3xI", rows, len(csz), ioff, len(index), 1, 0x524F5753)
    return bytes(lead) + index + footer, ioff + len(index) + 32


def _tail(impl, tail, size, max_block=-1):
    got = impl.open_tail(tail, size, max_block)
    decoded = got[5]
    # (on a failed check the decoded values are whatever was written before it)
    return got[:5] + (None if decoded is None or got[0] != 0 else decoded.tolist(), got[6])


@pytest.mark.parametrize("impl", IMPLS)
def test_open_tail_checks_footer_and_index_in_one_call(impl):
    csz, usz, starts = [10, 20, 5], [100, 200, 40], [0, 7, 30]
    tail, size = _tail_file(csz, usz, starts, 33, lead=35)
    st_, rows, blocks, ioff, ilen, decoded, state = _tail(impl, tail, size)
    assert (st_, rows, blocks, ioff, ilen, state) == (0, 33, 3, 35, len(tail) - 35 - 32, None)
    assert decoded == csz + usz + starts + [0, 10, 30]
    # the index starting before the tail: the footer alone, the index left to the caller
    assert _tail(impl, tail[36:], size) == (impl.TAIL_INDEX, 33, 3, 35, len(tail) - 67, None, None)
    # a broken index: check_block_index's status and state
    bad, _ = _tail_file([10, 20, 6], usz, starts, 33, lead=35, ioff=35)
    st_, *_, state = _tail(impl, bad, size)
    assert st_ < 0 and state[0] == impl.IX_SUM
    assert _tail(impl, tail, size, max_block=150)[6][0] == impl.IX_MAX


@pytest.mark.parametrize("impl", IMPLS)
def test_open_tail_refuses_every_broken_footer_rule(impl):
    import struct
    tail, size = _tail_file([10, 20, 5], [100, 200, 40], [0, 7, 30], 33, lead=35)
    body, foot = tail[:-32], list(struct.unpack("<qiqib3sI", tail[-32:]))
    for i, value in ((0, -1), (0, 2), (1, -1), (1, 34), (2, -1), (2, 36), (3, -1), (3, 9), (4, 2),
                     (5, b"\0\1\0"), (6, 0x524F5754)):
        f = list(foot)
        f[i] = value
        got = _tail(impl, body + struct.pack("<qiqib3sI", *f), size)
        assert got == (impl.TAIL_FOOTER, 0, 0, 0, 0, None, None), (i, value)
    assert _tail(impl, tail[-31:], size)[0] == impl.TAIL_FOOTER      # shorter than a footer
    assert _tail(impl, tail, len(tail) - 1)[0] == impl.TAIL_FOOTER   # more bytes than the file
    # an index offset near the largest int64 does not wrap around into a valid sum
    f = list(foot)
    f[2] = (1 << 63) - 1
    assert _tail(impl, body + struct.pack("<qiqib3sI", *f), size)[0] == impl.TAIL_FOOTER


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.tuples(st.integers(-2, 40), st.integers(-2, 3000), st.integers(-2, 60)), max_size=6),
       rows=st.integers(0, 70), lead=st.integers(0, 3), cut=st.integers(0, 90), flip=st.integers(0, 1200),
       max_block=st.sampled_from([-1, 1500]))
def test_open_tail_compiled_and_twin_agree(values, rows, lead, cut, flip, max_block):
    csz, usz, starts = ([v[i] for v in values] for i in range(3))
    tail, size = _tail_file(csz, usz, starts, rows, lead)
    tail = bytearray(tail[min(cut, len(tail)):])
    if tail and flip < 8 * len(tail):
        tail[flip // 8 % len(tail)] ^= 1 << (flip % 8)
    want = _tail(_speedups.twin("rowindex"), bytes(tail), size, max_block)
    for impl in IMPLS:
        for form in (bytes(tail), bytearray(tail)):
            assert _tail(impl.values[0], form, size, max_block) == want


@pytest.mark.parametrize("impl", IMPLS)
def test_locate_finds_each_rows_block(impl):
    rng = np.random.default_rng(5)
    for trial in range(60):
        sizes = rng.integers(1, 9, int(rng.integers(1, 12)))
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        rows = int(sizes.sum())
        csz = rng.integers(1, 50, len(sizes))
        usz = rng.integers(100, 900, len(sizes))
        offsets = np.concatenate([[0], np.cumsum(csz)[:-1]])
        packed = np.concatenate([csz, usz, starts, offsets]).astype(np.int64)
        for row in range(rows):
            b = int(np.searchsorted(starts, row, side="right")) - 1
            assert impl.locate(packed, len(sizes), rows, row) == (
                b, int(offsets[b]), int(csz[b]), int(usz[b]), int(starts[b]), int(sizes[b])), (trial, row)
        for row in (-1, rows, rows + 5):
            assert impl.locate(packed, len(sizes), rows, row) is None
        assert impl.locate(packed[:-1], len(sizes), rows, 0) is None   # fewer values than 4 per block
        assert impl.locate(packed, 0, rows, 0) is None
