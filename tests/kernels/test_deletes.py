import numpy as np
from hypothesis import given, settings, strategies as st

from .impls import implementations

IMPLS = implementations("deletes")
KS = [p.values[0] for p in IMPLS]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-5, 120), max_size=60), st.integers(-10, 100), st.integers(0, 60))
def test_mask_positions_matches_naive(pos, start, count):
    positions = np.array(sorted(pos), dtype=np.int64)
    expected = np.ones(count, dtype=np.uint8)
    for p in set(pos):
        if start <= p < start + count:
            expected[p - start] = 0
    for k in KS:
        keep = np.ones(count, dtype=np.uint8)
        assert k.mask_positions(positions, start, count, keep) == count - int(expected.sum())
        assert keep.tolist() == expected.tolist()


def test_mask_positions_short_buffer_and_cleared_count():
    for k in KS:
        assert k.mask_positions(np.array([1], dtype=np.int64), 0, 10, np.ones(5, np.uint8)) == -4
        keep = np.ones(4, np.uint8)
        keep[1] = 0
        # position 1 already cleared: not counted again
        assert k.mask_positions(np.array([1, 2], dtype=np.int64), 0, 4, keep) == 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-50, 50), max_size=40), st.lists(st.integers(-50, 50), max_size=40))
def test_merge_sorted_unique(a, b):
    a = np.array(sorted(a), dtype=np.int64)
    b = np.array(sorted(b), dtype=np.int64)
    expected = sorted(set(a.tolist()) | set(b.tolist()))
    for k in KS:
        out = np.zeros(len(a) + len(b), dtype=np.int64)
        n = k.merge_sorted_unique(a, b, out)
        assert out[:n].tolist() == expected
        assert k.merge_sorted_unique(a, b, np.zeros(max(0, len(a) + len(b) - 1), np.int64)) == (
            -4 if len(a) + len(b) else 0)
        assert k.is_sorted(a) == 1


def test_is_sorted():
    for k in KS:
        assert k.is_sorted(np.array([3, 1], dtype=np.int64)) == 0
        assert k.is_sorted(np.array([], dtype=np.int64)) == 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), max_size=30),
       st.lists(st.one_of(st.none(), st.binary(max_size=12)), max_size=30))
def test_hashes_identical_across_impls(ints, blobs):
    results = []
    for k in KS:
        vals = np.array([0 if v is None else v for v in ints], dtype=np.int64)
        valid = np.array([v is not None for v in ints], dtype=np.uint8)
        h = np.zeros(len(ints), dtype=np.uint64)
        assert k.hash_int64(vals, valid, h, False) == len(ints)
        h2 = h.copy()
        assert k.hash_int64(vals, np.zeros(0, np.uint8), h2, True) == len(ints)
        offs = np.zeros(len(blobs) + 1, dtype=np.int64)
        data = b"".join(b or b"" for b in blobs)
        np.cumsum([len(b or b"") for b in blobs], out=offs[1:])
        bvalid = np.array([b is not None for b in blobs], dtype=np.uint8)
        hb = np.zeros(len(blobs), dtype=np.uint64)
        assert k.hash_binary(offs, np.frombuffer(data, np.uint8), bvalid, hb, False) == len(blobs)
        results.append((h.tolist(), h2.tolist(), hb.tolist()))
    assert all(r == results[0] for r in results)
    h, _, hb = results[0]
    # equal values hash equal, nulls hash equal
    for i, a in enumerate(ints):
        for j, b in enumerate(ints):
            if a == b:
                assert h[i] == h[j]
    for i, a in enumerate(blobs):
        for j, b in enumerate(blobs):
            if a == b:
                assert hb[i] == hb[j]


def test_hash_binary_bad_offsets():
    for k in KS:
        data = np.frombuffer(b"abc", np.uint8)
        h = np.zeros(2, np.uint64)
        assert k.hash_binary(np.array([0, 5, 3], np.int64), data, np.zeros(0, np.uint8), h, False) == -5
        assert k.hash_binary(np.array([0, 2, 1], np.int64), data, np.zeros(0, np.uint8), h, False) == -5
        assert k.hash_binary(np.array([-1, 2, 3], np.int64), data, np.zeros(0, np.uint8), h, False) == -5
        assert k.hash_binary(np.array([0, 1, 3], np.int64), data, np.zeros(0, np.uint8),
                             np.zeros(1, np.uint64), False) == -4


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=50), st.lists(st.integers(0, 60), max_size=80))
def test_build_and_probe(build, probe):
    bh = np.array(build, dtype=np.uint64)
    ph = np.array(probe, dtype=np.uint64)
    first = {}
    for i, v in enumerate(build):
        first.setdefault(v, i)
    expected = [first.get(v, -1) for v in probe]
    m = 1
    while m <= len(build):
        m <<= 1
    filters = []
    for k in KS:
        slots = np.full(m, -1, dtype=np.int64)
        assert k.build_hash_table(bh, slots) == len(first)
        out = np.zeros(len(probe), dtype=np.int64)
        assert k.probe_hash_table(bh, slots, ph, out, np.zeros(0, np.uint8)) == sum(1 for v in probe if v in first)
        assert out.tolist() == expected
        # with the Bloom filter of the build side: same answers
        bits = np.zeros(8, np.uint8)
        wide_b = (bh << np.uint64(32)) | bh
        wide_p = (ph << np.uint64(32)) | ph
        assert k.build_filter(wide_b, bits) == len(build)
        slots2 = np.full(m, -1, dtype=np.int64)
        k.build_hash_table(wide_b, slots2)
        out2 = np.zeros(len(probe), dtype=np.int64)
        assert k.probe_hash_table(wide_b, slots2, wide_p, out2, bits) == sum(1 for v in probe if v in first)
        assert out2.tolist() == expected
        filters.append(bits.tolist())
    assert all(f == filters[0] for f in filters)


def test_build_rejects_bad_tables():
    for k in KS:
        h = np.arange(4, dtype=np.uint64)
        assert k.build_hash_table(h, np.full(4, -1, np.int64)) == -4   # too small
        assert k.build_hash_table(h, np.full(6, -1, np.int64)) == -4   # not a power of two
        # a table full of foreign entries: no hang
        assert k.build_hash_table(h, np.full(8, 100, np.int64)) == -5
        none = np.zeros(0, np.uint8)
        assert k.probe_hash_table(h, np.full(8, 100, np.int64), h, np.zeros(4, np.int64), none) == 0
        assert k.probe_hash_table(h, np.zeros(0, np.int64), h, np.zeros(4, np.int64), none) == -4
        assert k.probe_hash_table(h, np.full(8, -1, np.int64), h, np.zeros(4, np.int64), np.zeros(3, np.uint8)) == -4
        assert k.build_filter(h, np.zeros(3, np.uint8)) == -4
        assert k.build_filter(h, none) == -4


@settings(max_examples=80, deadline=None)
@given(st.lists(st.binary(max_size=20), min_size=1, max_size=10), st.lists(st.binary(max_size=20), min_size=1,
                                                                           max_size=10), st.data())
def test_equal_binary(a, b, data):
    def pack(vals):
        offs = np.zeros(len(vals) + 1, np.int64)
        np.cumsum([len(v) for v in vals], out=offs[1:])
        return offs, np.frombuffer(b"".join(vals) or b"\0", np.uint8)
    ao, ad = pack(a)
    bo, bd = pack(b)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, len(a) - 1), st.integers(0, len(b) - 1)), max_size=15))
    ar = np.array([p[0] for p in pairs], np.int64)
    br = np.array([p[1] for p in pairs], np.int64)
    want = [int(a[x] == b[y]) for x, y in pairs]
    for k in KS:
        out = np.zeros(len(pairs), np.uint8)
        assert k.equal_binary(ao, ad, ar, bo, bd, br, out) == sum(want)
        assert out.tolist() == want
        assert k.equal_binary(ao, ad, np.array([len(a)], np.int64), bo, bd, np.array([0], np.int64),
                              np.zeros(1, np.uint8)) == -5
        bad = ao.copy()
        bad[-1] = 10**6
        assert k.equal_binary(bad, ad, np.array([len(a) - 1], np.int64), bo, bd, np.array([0], np.int64),
                              np.zeros(1, np.uint8)) == -5
