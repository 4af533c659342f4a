import numpy as np
from hypothesis import given, settings, strategies as st

from .impls import check_vector_paths_live, implementations

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
        assert k.is_sorted(np.array([1, 2, 2, 5], dtype=np.int64)) == 1
        assert k.is_sorted(np.array([1, 2, 2, 5], dtype=np.int64), True) == 0
        assert k.is_sorted(np.array([1, 2, 3, 5], dtype=np.int64), True) == 1
        assert k.is_sorted(np.array([1, 3, 2], dtype=np.int64), True) == 0
        assert k.is_sorted(np.array([7], dtype=np.int64), True) == 1


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


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-5, 40)), max_size=50),
       st.lists(st.one_of(st.none(), st.integers(-5, 60)), max_size=80), st.booleans())
def test_probe_rows_match_probe_hash_table(build, probe, use_filter):
    """probe_rows / probe_int64_rows give the hits of probe_hash_table, compactly, in both implementations."""
    def col(vals):
        v = np.array([0 if x is None else x for x in vals], dtype=np.int64)
        valid = np.array([x is not None for x in vals], dtype=np.uint8)
        return v, (valid if not valid.all() else np.zeros(0, np.uint8))
    bv, bvalid = col(build)
    pv, pvalid = col(probe)
    results = []
    for k in KS:
        bh = np.zeros(len(build), np.uint64)
        k.hash_int64(bv, bvalid, bh, False)
        ph = np.zeros(len(probe), np.uint64)
        k.hash_int64(pv, pvalid, ph, False)
        m = 2
        while m <= 2 * len(build):
            m <<= 1
        slots = np.full(m, -1, np.int64)
        k.build_hash_table(bh, slots)
        bits = np.zeros(64 if use_filter else 0, np.uint8)
        if use_filter:
            k.build_filter(bh, bits)
        full = np.zeros(len(probe), np.int64)
        nfull = k.probe_hash_table(bh, slots, ph, full, bits)
        want_rows = np.flatnonzero(full >= 0)
        for fn, args in ((k.probe_rows, (bh, slots, ph, bits)),
                         (k.probe_int64_rows, (pv, pvalid, bh, slots, bits))):
            rows = np.full(len(probe), -7, np.int64)
            cands = np.full(len(probe), -7, np.int64)
            got = fn(*args, rows, cands)
            assert got == nfull == want_rows.size
            assert rows[:got].tolist() == want_rows.tolist()
            assert cands[:got].tolist() == full[want_rows].tolist()
            assert (rows[got:] == -7).all() and (cands[got:] == -7).all()   # nothing past the hits is written
        # the hits are the probe rows whose key (null matches null) is a build key
        keys = set(build)
        assert [probe[i] in keys for i in want_rows] == [True] * want_rows.size
        assert want_rows.size == sum(1 for x in probe if x in keys)
        results.append((nfull, want_rows.tolist()))
    assert all(r == results[0] for r in results)


def test_probe_rows_reject_bad_buffers():
    h = np.zeros(4, np.uint64)
    v = np.zeros(4, np.int64)
    slots = np.full(8, -1, np.int64)
    none = np.zeros(0, np.uint8)
    ok, short = np.zeros(4, np.int64), np.zeros(3, np.int64)
    for k in KS:
        assert k.probe_rows(h, slots, h, none, short, ok) == -4
        assert k.probe_rows(h, slots, h, none, ok, short) == -4
        assert k.probe_rows(h, np.full(6, -1, np.int64), h, none, ok, ok) == -4     # not a power of two
        assert k.probe_rows(h, slots, h, np.zeros(3, np.uint8), ok, ok) == -4       # filter not a power of two
        assert k.probe_int64_rows(v, np.zeros(3, np.uint8), h, slots, none, ok, ok) == -4   # short validity
        assert k.probe_int64_rows(v, none, h, slots, none, short, ok) == -4
        assert k.probe_rows(np.zeros(0, np.uint64), slots, h, none, ok, ok) == 0    # empty build side
        assert k.probe_int64_rows(v[:0], none, h, slots, none, ok, ok) == 0


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


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-20, 20)), max_size=60),
       st.integers(-(1 << 63), (1 << 63) - 1), st.integers(0, 40), st.binary(min_size=6, max_size=6), st.booleans())
def test_probe_int64_bitmap(values, lo, nbits, raw_bits, null_hit):
    bits = np.frombuffer(raw_bits, np.uint8)
    v = np.array([0 if x is None else x for x in values], dtype=np.int64)
    valid = np.array([x is not None for x in values], dtype=np.uint8)
    if valid.all():
        valid = np.zeros(0, np.uint8)

    def member(x):
        if x is None:
            return null_hit
        d = x - lo
        return 0 <= d < nbits and bool((raw_bits[d >> 3] >> (d & 7)) & 1)
    want = [i for i, x in enumerate(values) if member(x)]
    for k in KS:
        for miss in (False, True):
            out = np.full(len(values) + 2, 7, np.uint8)
            got = k.probe_int64_bitmap(v, valid, lo, bits, nbits, null_hit, miss, out)
            if nbits and lo + nbits - 1 >= 1 << 63:
                assert got == -4       # the range leaves int64: values below lo would wrap into it
                continue
            assert got == len(want)
            assert [i for i in range(len(values)) if out[i] != miss] == want
            assert set(out[:len(values)].tolist()) <= {0, 1}
            assert (out[len(values):] == 7).all()


def test_probe_int64_bitmap_vector_and_scalar_paths():
    """The AVX-512 path of probe_int64_bitmap (eight values at a time, the bitmap's 32-bit words gathered) and
    the value-at-a-time loop give the same count and flags for values inside, below and above the span and at
    the int64 extremes, spans ending anywhere in a word, set padding bits past the span (never a hit), bitmaps
    of whole words (the vector path) or not (the loop), with ``miss`` off and on, and write nothing past the
    rows."""
    rng = np.random.default_rng(5)
    none = np.zeros(0, np.uint8)
    for k in KS:
        before = k.vector_paths()
        try:
            for vector in (True, False):
                k.vector_paths(vector)
                for trial in range(300):
                    nbits = int(rng.integers(1, 3000))
                    lo = int(rng.integers(-(1 << 62), 1 << 62)) if trial % 3 == 0 else int(rng.integers(-50, 50))
                    nbytes = 4 * -(-nbits // 32) if trial % 4 != 3 else -(-nbits // 8)
                    raw = rng.integers(0, 256, nbytes, dtype=np.uint8)
                    n = int(rng.integers(0, 100))
                    v = np.int64(lo) + rng.integers(-40, nbits + 40, n).astype(np.int64)
                    if n > 3:
                        v[:2] = [np.iinfo(np.int64).min, np.iinfo(np.int64).max]
                    want = [i for i, x in enumerate(v.tolist())
                            if 0 <= x - lo < nbits and (int(raw[(x - lo) >> 3]) >> ((x - lo) & 7)) & 1]
                    for miss in (False, True):
                        out = np.full(n + 3, 7, np.uint8)
                        assert k.probe_int64_bitmap(v, none, lo, raw, nbits, False, miss, out) == len(want), trial
                        assert [i for i in range(n) if out[i] != miss] == want, trial
                        assert set(out[:n].tolist()) <= {0, 1} and (out[n:] == 7).all(), trial
        finally:
            k.vector_paths(before)


def test_the_vector_path_is_live_where_the_processor_has_it():
    """The compiled deletes kernel takes its AVX-512 path exactly where the processor has AVX-512 F, BW, VL."""
    check_vector_paths_live(KS)


def test_probe_int64_bitmap_rejects_bad_buffers():
    v = np.zeros(4, np.int64)
    none = np.zeros(0, np.uint8)
    for k in KS:
        assert k.probe_int64_bitmap(v, none, 0, np.zeros(1, np.uint8), 9, False, False, np.zeros(4, np.uint8)) == -4
        assert k.probe_int64_bitmap(v, none, 0, np.zeros(1, np.uint8), -1, False, False, np.zeros(4, np.uint8)) == -4
        assert k.probe_int64_bitmap(v, none, 0, np.zeros(1, np.uint8), 8, False, False, np.zeros(3, np.uint8)) == -4
        assert k.probe_int64_bitmap(v, np.ones(3, np.uint8), 0, np.zeros(1, np.uint8), 8, False, False,
                                    np.zeros(4, np.uint8)) == -4
        assert k.probe_int64_bitmap(v, none, 0, np.ones(1, np.uint8), 8, False, False, np.zeros(4, np.uint8)) == 4


def test_lookup_flags_vector_and_scalar_paths():
    """lookup_flags on both paths (the AVX-512 one takes tables of at most 1,024 flags, 16 indices at a time; the
    loop the rest and the last indices) and in the twin: every index's flag, the count of rows flagged, table
    entries other than 0 and 1 read as set, nothing written past the rows; an index outside the table (at the
    table's size, far above it, negative) anywhere, in a group of 16 or in the tail, fails the call."""
    rng = np.random.default_rng(11)
    for k in KS:
        before = k.vector_paths()
        try:
            for vector in (True, False):
                k.vector_paths(vector)
                for m in (1, 2, 31, 32, 33, 500, 1000, 1023, 1024, 1025, 4000):
                    for n in (1, 15, 16, 17, 33, 100, 1000):
                        table = rng.integers(0, 3, m).astype(np.uint8)
                        idx = rng.integers(0, m, n).astype(np.int32)
                        idx[0] = m - 1
                        want = (table[idx] != 0).astype(np.uint8)
                        out = np.full(n + 5, 7, np.uint8)
                        assert k.lookup_flags(table, idx, out) == int(want.sum()), (vector, m, n)
                        assert (out[:n] == want).all() and (out[n:] == 7).all(), (vector, m, n)
                        for at in {0, n // 2, n - 1}:
                            for bad in (m, m + 1, 1 << 30, -1, np.iinfo(np.int32).min):
                                wrong = idx.copy()
                                wrong[at] = bad
                                assert k.lookup_flags(table, wrong, out) == -5, (vector, m, n, at, bad)
        finally:
            k.vector_paths(before)


def test_lookup_flags_rejects_bad_buffers():
    for k in KS:
        idx = np.zeros(20, np.int32)
        assert k.lookup_flags(np.ones(3, np.uint8), idx, np.zeros(19, np.uint8)) == -4
        assert k.lookup_flags(np.zeros(0, np.uint8), idx, np.zeros(20, np.uint8)) == -5
        assert k.lookup_flags(np.zeros(0, np.uint8), idx[:0], np.zeros(0, np.uint8)) == 0
        assert k.lookup_flags(np.ones(1, np.uint8), idx, np.zeros(20, np.uint8)) == 20
