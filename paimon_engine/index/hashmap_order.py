"""The iteration order of the ``java.util.HashMap`` Paimon's bitmap index writer fills.

Paimon's ``BitmapFileIndex`` writer keeps ``Map<Object, RoaringBitmap32> id2bitmap =
new HashMap<>()`` and adds each row with ``computeIfAbsent(key, ...)``; the bitmap bodies
(and the v1 header entries) are written in that map's ``forEach`` order. Reproducing the
bytes therefore means reproducing the map's layout after inserting the distinct keys in
order of first appearance:

* the key's ``hashCode()`` (see :func:`java_hash_code`) is spread as ``h ^ (h >>> 16)``;
* the table starts at 16 buckets, and ``computeIfAbsent`` resizes (doubling, each bucket
  split into a "lo" and a "hi" list that keep their relative order) *before* inserting
  when ``size > 0.75 * capacity``;
* a new key goes to the **head** of its bucket's list (``computeIfAbsent`` prepends,
  unlike ``put``);
* when the bucket already held 7 or more keys, the bucket is treeified, or, while the
  table has fewer than 64 buckets, the table is resized instead. A tree bucket is a
  red-black tree ordered by (spread hash as a signed int, then ``compareTo``) whose
  iteration order is a linked list: the root is moved to the front after every change,
  and a key added to the tree is linked right after its tree parent. A tree split by a
  resize keeps its list order and becomes a plain list again at 6 keys or fewer.

Iteration is bucket by bucket, following each bucket's list.
"""
from __future__ import annotations

__all__ = ["java_hashmap_order", "java_hash_code", "binary_string_hash"]

_M32 = 0xFFFFFFFF
TREEIFY_THRESHOLD = 8
UNTREEIFY_THRESHOLD = 6
MIN_TREEIFY_CAPACITY = 64


def _i32(x: int) -> int:
    x &= _M32
    return x - (1 << 32) if x & 0x80000000 else x


def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def _mix_k1(k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & _M32
    k1 = _rotl32(k1, 15)
    return (k1 * 0x1B873593) & _M32


def _mix_h1(h1: int, k1: int) -> int:
    h1 = _rotl32(h1 ^ k1, 13)
    return (h1 * 5 + 0xE6546B64) & _M32


def binary_string_hash(data: bytes) -> int:
    """``BinaryString.hashCode()``: Paimon's ``MurmurHashUtils.hashBytes`` (seed 42).

    Whole 4-byte words are read little-endian (the segment's native order); each byte of
    the tail is mixed on its own as a sign-extended int (this is where it differs from
    standard Murmur3 x86_32, which packs the tail into one word). Returns a signed int32.
    """
    n = len(data)
    aligned = n - n % 4
    h1 = 42
    for i in range(0, aligned, 4):
        h1 = _mix_h1(h1, _mix_k1(int.from_bytes(data[i:i + 4], "little")))
    for i in range(aligned, n):
        b = data[i]
        h1 = _mix_h1(h1, _mix_k1((b - 256 if b >= 128 else b) & _M32))
    h = h1 ^ n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return _i32(h)


def java_hash_code(kind: str, key, wide: bool = False) -> int:
    """``hashCode()`` (signed int32) of the boxed Java key the bitmap writer stores.

    ``kind`` is the index key kind: ``bytes`` (BinaryString), ``bool`` (Boolean),
    ``float`` (Float: its canonical int bits), ``double`` (Double: its canonical long
    bits), ``long`` (Byte/Short/Integer when ``wide`` is false, Long when true).
    """
    if kind == "bytes":
        return binary_string_hash(key)
    if kind == "bool":
        return 1231 if key else 1237
    if kind == "double" or (kind == "long" and wide):
        u = key & 0xFFFFFFFFFFFFFFFF
        return _i32(u ^ (u >> 32))
    return _i32(key)


class _Node:
    __slots__ = ("key", "hash", "item", "left", "right", "parent", "red")

    def __init__(self, key, h, item):
        self.key, self.hash, self.item = key, h, item
        self.left = self.right = self.parent = None
        self.red = False


class _TreeBin:
    """A treeified bucket: a red-black tree plus the linked list iteration follows."""

    __slots__ = ("order", "root", "cmp")

    def __init__(self, nodes, cmp):
        self.cmp = cmp
        self.order = list(nodes)
        self.root = None
        for x in self.order:
            x.left = x.right = x.parent = None
            if self.root is None:
                x.red = False
                self.root = x
                continue
            p = self.root
            while True:
                d = self._dir(x, p)
                if (p.left if d <= 0 else p.right) is None:
                    x.parent = p
                    if d <= 0:
                        p.left = x
                    else:
                        p.right = x
                    self.root = self._balance_insertion(self.root, x)
                    break
                p = p.left if d <= 0 else p.right
        self._root_to_front()

    def _dir(self, x, p) -> int:
        if p.hash > x.hash:
            return -1
        if p.hash < x.hash:
            return 1
        # distinct keys of one Comparable class never compare equal, so Java's identity
        # tie-break is never reached
        return self.cmp(x.key, p.key)

    def insert(self, x):
        p = self.root
        while True:
            d = self._dir(x, p)
            child = p.left if d <= 0 else p.right
            if child is None:
                x.parent = p
                if d <= 0:
                    p.left = x
                else:
                    p.right = x
                self.order.insert(self.order.index(p) + 1, x)  # linked right after its tree parent
                self.root = self._balance_insertion(self.root, x)
                self._root_to_front()
                return
            p = child

    def _root_to_front(self):
        if self.order[0] is not self.root:
            self.order.remove(self.root)
            self.order.insert(0, self.root)

    @staticmethod
    def _rotate_left(root, p):
        r = p.right
        if r is None:
            return root
        p.right = rl = r.left
        if rl is not None:
            rl.parent = p
        r.parent = pp = p.parent
        if pp is None:
            root = r
            r.red = False
        elif pp.left is p:
            pp.left = r
        else:
            pp.right = r
        r.left = p
        p.parent = r
        return root

    @staticmethod
    def _rotate_right(root, p):
        lft = p.left
        if lft is None:
            return root
        p.left = lr = lft.right
        if lr is not None:
            lr.parent = p
        lft.parent = pp = p.parent
        if pp is None:
            root = lft
            lft.red = False
        elif pp.right is p:
            pp.right = lft
        else:
            pp.left = lft
        lft.right = p
        p.parent = lft
        return root

    @classmethod
    def _balance_insertion(cls, root, x):
        x.red = True
        while True:
            xp = x.parent
            if xp is None:
                x.red = False
                return x
            xpp = xp.parent
            if not xp.red or xpp is None:
                return root
            xppl = xpp.left
            if xp is xppl:
                xppr = xpp.right
                if xppr is not None and xppr.red:
                    xppr.red = False
                    xp.red = False
                    xpp.red = True
                    x = xpp
                else:
                    if x is xp.right:
                        x = xp
                        root = cls._rotate_left(root, x)
                        xp = x.parent
                        xpp = None if xp is None else xp.parent
                    if xp is not None:
                        xp.red = False
                        if xpp is not None:
                            xpp.red = True
                            root = cls._rotate_right(root, xpp)
            else:
                if xppl is not None and xppl.red:
                    xppl.red = False
                    xp.red = False
                    xpp.red = True
                    x = xpp
                else:
                    if x is xp.left:
                        x = xp
                        root = cls._rotate_right(root, x)
                        xp = x.parent
                        xpp = None if xp is None else xp.parent
                    if xp is not None:
                        xp.red = False
                        if xpp is not None:
                            xpp.red = True
                            root = cls._rotate_left(root, xpp)


def java_hashmap_order(keys, hashes, cmp) -> list:
    """Indexes into ``keys`` in the ``forEach`` order of a ``java.util.HashMap`` after
    ``computeIfAbsent`` of each (distinct) key in the given order.

    ``hashes[i]`` is ``keys[i].hashCode()`` as a signed int32; ``cmp(a, b)`` is the keys'
    ``compareTo`` (negative, zero, positive), used only inside treeified buckets.
    """
    cap, threshold, size = 0, 0, 0
    table: list = []

    def resize():
        nonlocal cap, threshold, table
        if cap == 0:
            cap, threshold = 16, 12
            table = [None] * cap
            return
        old, old_cap = table, cap
        cap, threshold = cap * 2, threshold * 2
        table = [None] * cap
        for j, b in enumerate(old):
            if b is None:
                continue
            nodes = b.order if isinstance(b, _TreeBin) else b
            lo = [e for e in nodes if not e.hash & old_cap]
            hi = [e for e in nodes if e.hash & old_cap]
            if not isinstance(b, _TreeBin):
                table[j] = lo or None
                table[j + old_cap] = hi or None
                continue
            for idx, part, other in ((j, lo, hi), (j + old_cap, hi, lo)):
                if not part:
                    continue
                if len(part) <= UNTREEIFY_THRESHOLD:
                    table[idx] = part
                elif other:
                    table[idx] = _TreeBin(part, cmp)
                else:
                    table[idx] = b  # the whole tree moved unchanged

    for item, (key, hc) in enumerate(zip(keys, hashes)):
        h = _i32(hc ^ ((hc & _M32) >> 16))
        if size > threshold or cap == 0:
            resize()
        i = h & (cap - 1)
        node = _Node(key, h, item)
        b = table[i]
        if isinstance(b, _TreeBin):
            b.insert(node)
        else:
            count = 0 if b is None else len(b)
            table[i] = [node] + (b or [])
            if count >= TREEIFY_THRESHOLD - 1:
                if cap < MIN_TREEIFY_CAPACITY:
                    resize()
                else:
                    table[i] = _TreeBin(table[i], cmp)
        size += 1
    out = []
    for b in table:
        if b is not None:
            out.extend(e.item for e in (b.order if isinstance(b, _TreeBin) else b))
    return out
