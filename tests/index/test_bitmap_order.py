"""Bitmap index entry order: the iteration order of the java.util.HashMap Paimon's writer fills.

The writer adds each row with ``id2bitmap.computeIfAbsent(key, ...)`` and writes the bitmap bodies (and the v1
header) in ``forEach`` order. The expected orders below come from a small model of that map written here from the
JDK rules (spread hash, 16 buckets, lazy resize before insert when size > 0.75 * capacity, new keys at the head of
their bucket, order-preserving splits, treeifyBin resizing while the table is smaller than 64), not from the
code under test. The model refuses inputs that would treeify a bucket; trees are checked by hand-derived cases.
"""
import random
import struct

import mmh3
import pytest

from paimon_engine import types as T
from paimon_engine.index.bitmap import BitmapIndex
from paimon_engine.index.hashmap_order import binary_string_hash


# ---------------------------------------------------------------- Java hashCode() rules, written out here
def s32(x):
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def paimon_string_hash(b: bytes) -> int:
    """MurmurHashUtils.hashBytes, seed 42: LE words, then every tail byte mixed alone (sign-extended)."""
    def k(x):
        x = (x * 0xCC9E2D51) & 0xFFFFFFFF
        x = ((x << 15) | (x >> 17)) & 0xFFFFFFFF
        return (x * 0x1B873593) & 0xFFFFFFFF

    def h(acc, kk):
        acc ^= kk
        acc = ((acc << 13) | (acc >> 19)) & 0xFFFFFFFF
        return (acc * 5 + 0xE6546B64) & 0xFFFFFFFF

    acc = 42
    words = len(b) // 4
    for (w,) in struct.iter_unpack("<I", b[:4 * words]):
        acc = h(acc, k(w))
    for (t,) in struct.iter_unpack("b", b[4 * words:]):
        acc = h(acc, k(t & 0xFFFFFFFF))
    acc ^= len(b)
    acc ^= acc >> 16
    acc = (acc * 0x85EBCA6B) & 0xFFFFFFFF
    acc ^= acc >> 13
    acc = (acc * 0xC2B2AE35) & 0xFFFFFFFF
    acc ^= acc >> 16
    return s32(acc)


def hash_code(t, v):
    if isinstance(t, (T.VarCharType, T.CharType)):
        return paimon_string_hash(v.encode("utf-8"))
    if isinstance(t, T.BooleanType):
        return 1231 if v else 1237
    if isinstance(t, T.FloatType):
        return struct.unpack(">i", struct.pack(">f", v))[0]
    if isinstance(t, T.DoubleType):
        bits = struct.unpack(">Q", struct.pack(">d", v))[0]
        return s32(bits ^ (bits >> 32))
    if isinstance(t, T.BigIntType):
        u = v & 0xFFFFFFFFFFFFFFFF
        return s32(u ^ (u >> 32))
    return v  # Byte, Short, Integer


def hashmap_model(keys, hashes):
    """forEach order after computeIfAbsent of each distinct key, for maps that never treeify."""
    table, cap, size = None, 16, 0
    for key, hc in zip(keys, hashes):
        h = s32(hc ^ ((hc & 0xFFFFFFFF) >> 16))
        if table is None:
            table = [[] for _ in range(cap)]
        elif size > cap * 3 // 4:
            table, cap = _split(table, cap), cap * 2
        b = table[h & (cap - 1)]
        had = len(b)
        b.insert(0, (key, h))
        if had >= 7:
            assert cap < 64, "this key set would treeify a bucket; pick another"
            table, cap = _split(table, cap), cap * 2
        size += 1
    return [k for b in table for k, _ in b]


def _split(table, cap):
    new = [[] for _ in range(2 * cap)]
    for j, b in enumerate(table):
        for item in b:
            new[j + (cap if item[1] & cap else 0)].append(item)
    return new


def v1_order(t, values):
    idx = BitmapIndex(t, {"version": "1"})
    idx.add_values(values)
    return list(BitmapIndex.from_bytes(idx.to_bytes(), t).entries)


def v2_body_order(t, values):
    idx = BitmapIndex(t)
    idx.add_values(values + values)  # every key twice, so each has a body
    r = BitmapIndex.from_bytes(idx.to_bytes(), t)
    offs = {k: v for i in range(len(r.block_firsts)) for k, v in r._block(i).items()}
    return sorted(offs, key=lambda k: offs[k][0])


def as_key(t, v):
    """The key as the reader reports it: UTF-8 bytes, float/double bits, or the integer."""
    if isinstance(t, (T.VarCharType, T.CharType)):
        return v.encode("utf-8")
    if isinstance(t, T.FloatType):
        return struct.unpack(">i", struct.pack(">f", v))[0]
    if isinstance(t, T.DoubleType):
        return struct.unpack(">q", struct.pack(">d", v))[0]
    return v


# ---------------------------------------------------------------- string hash
def test_string_hash_matches_murmur3_seed_42_on_whole_words():
    # on lengths that are multiples of 4 Paimon's hash is standard Murmur3 x86_32 with seed 42
    rnd = random.Random(3)
    for n in (0, 4, 8, 12, 64):
        for _ in range(20):
            b = bytes(rnd.randrange(256) for _ in range(n))
            assert binary_string_hash(b) == mmh3.hash(b, 42, signed=True)


def test_string_hash_mixes_tail_bytes_one_at_a_time_sign_extended():
    rnd = random.Random(4)
    for n in list(range(1, 12)) + [33]:
        for _ in range(20):
            b = bytes(rnd.randrange(256) for _ in range(n))
            assert binary_string_hash(b) == paimon_string_hash(b)
    # the tail rule differs from standard Murmur3 (which packs the tail into one word)
    assert binary_string_hash(b"abc") != mmh3.hash(b"abc", 42, signed=True)
    assert binary_string_hash("é".encode()) == paimon_string_hash("é".encode())


# ---------------------------------------------------------------- order against the model
def _string_keys(n, seed):
    rnd = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789é"
    out = []
    while len(out) < n:
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 9)))
        if s not in out:
            out.append(s)
    return out


_R = random.Random(7)
CASES = [
    ("string-small", T.STRING(), _string_keys(10, 1)),
    ("string-13", T.STRING(), _string_keys(13, 2)),       # exactly at the first lazy resize threshold
    ("string-14", T.STRING(), _string_keys(14, 2)),
    ("string-grow", T.STRING(), _string_keys(3000, 5)),   # 16 -> 4096 buckets
    ("char", T.CharType(5), [f"{i:05d}" for i in range(200)]),
    ("int-grow", T.IntType(), random.Random(6).sample(range(-10**9, 10**9), 2000)),
    ("int-stride", T.IntType(), [i * 1000003 for i in range(300)]),
    ("bigint-high-bits", T.BigIntType(), [(i << 32) | (i * 7919) for i in range(-300, 300)]),
    ("smallint", T.SmallIntType(), list(range(-500, 500, 3))),
    ("double", T.DoubleType(), [_R.uniform(-1e6, 1e6) for _ in range(400)] + [-0.0, float("inf")]),
    ("float", T.FloatType(), [struct.unpack(">f", struct.pack(">f", _R.uniform(-1e3, 1e3)))[0] for _ in range(300)]),
    ("bool", T.BooleanType(), [True, False]),
]


@pytest.mark.parametrize("name,t,values", CASES, ids=[c[0] for c in CASES])
def test_entry_order_matches_java_hashmap(name, t, values):
    values = list(dict.fromkeys(values))
    keys = [as_key(t, v) for v in values]
    want = hashmap_model(keys, [hash_code(t, v) for v in values])
    assert v1_order(t, values) == want
    assert v2_body_order(t, values) == want


def test_tree_bucket_iterates_root_first():
    # INT keys 0, 64, ..., 576 all fall in bucket 0. computeIfAbsent prepends, so the bucket's list is
    # 576, 512, ..., 0; the 8th and 9th keys resize 16 -> 32 -> 64 instead of treeifying, the 10th treeifies.
    # Inserting 576, 512, ..., 0 (descending) into a red-black tree gives root 384 (the mirror of 1..10 -> 4);
    # the root moves to the front of the list, the others keep their order.
    values = [64 * i for i in range(10)]
    want = [384, 576, 512, 448, 320, 256, 192, 128, 64, 0]
    assert v1_order(T.IntType(), values) == want
    assert v2_body_order(T.IntType(), values) == want
    # an 11th key (640) hangs under 576, which is black in that tree: no rebalancing, and the new node is linked
    # right after its tree parent
    values.append(640)
    want = [384, 576, 640, 512, 448, 320, 256, 192, 128, 64, 0]
    assert v1_order(T.IntType(), values) == want
    assert v2_body_order(T.IntType(), values) == want


def test_tree_bucket_untreeifies_when_a_resize_splits_it_small():
    # the 10 keys above plus 39 keys in other buckets: the 50th key finds size 49 > 48 and resizes to 128,
    # which splits bucket 0 into lo (multiples of 128: 5 keys) and hi (5 keys); both are <= 6 and become
    # plain lists in the tree's list order
    tree = [64 * i for i in range(10)]
    others = [1 + i for i in range(39)]
    extra = [1000]
    values = tree + others + extra
    before = [384, 576, 512, 448, 320, 256, 192, 128, 64, 0]
    got = v1_order(T.IntType(), values)
    assert got[:5] == [k for k in before if k % 128 == 0]
    rest = [k for k in got if k % 64 == 0 and k % 128 and k < 1000]
    assert rest == [k for k in before if k % 128]


def test_golden_int_index_still_byte_identical(golden_dir):
    for line in (golden_dir / "paimon-java-vectors.txt").read_text().splitlines():
        if line.startswith("bitmap_v2_int "):
            want = bytes.fromhex(line.split()[1])
    idx = BitmapIndex(T.IntType())
    idx.add_values([1, 2, None, 1, 3, None, 2, 2, 5])
    assert idx.to_bytes() == want
