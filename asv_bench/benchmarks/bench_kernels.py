"""Varint and bitmap kernels: compiled vs pure-Python twin vs a NumPy-only baseline."""
import numpy as np

from paimon_engine import _speedups

N = 200_000


def _numpy_delta_zigzag_varint(values):
    """NumPy-only baseline: vectorised delta + zigzag, LEB128 by byte planes."""
    d = np.diff(values, prepend=np.int64(0))
    z = ((d << 1) ^ (d >> 63)).view(np.uint64)
    nbytes = np.ones(len(z), dtype=np.int64)
    t = z >> np.uint64(7)
    while t.any():
        nbytes += (t > 0)
        t >>= np.uint64(7)
    out = np.zeros(int(nbytes.sum()), dtype=np.uint8)
    starts = np.concatenate(([0], np.cumsum(nbytes)[:-1]))
    for k in range(int(nbytes.max())):
        sel = nbytes > k
        byte = ((z[sel] >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        byte |= np.where(nbytes[sel] > k + 1, 0x80, 0).astype(np.uint8)
        out[starts[sel] + k] = byte
    return out.tobytes()


class DeltaVarint:
    params = ["cython", "python", "numpy"]
    param_names = ["impl"]

    def setup(self, impl):
        rng = np.random.default_rng(0)
        self.values = np.cumsum(rng.integers(0, 5000, size=N)).astype(np.int64)
        if impl == "cython" and _speedups.compiled("varint") is None:
            raise NotImplementedError("compiled kernels not built")
        self.k = _speedups.compiled("varint") if impl == "cython" else _speedups.twin("varint")
        self.blob = self.k.encode_delta_varint(self.values)
        self.out = np.empty(N, dtype=np.int64)
        if impl == "python":
            self.values = self.values[: N // 20]  # the twin is slow: time a twentieth
            self.blob = self.k.encode_delta_varint(self.values)

    def time_encode(self, impl):
        if impl == "numpy":
            _numpy_delta_zigzag_varint(self.values)
        else:
            self.k.encode_delta_varint(self.values)



class DeltaVarintDecode:
    params = ["cython", "python"]
    param_names = ["impl"]
    setup = DeltaVarint.setup

    def time_decode(self, impl):
        self.k.decode_delta_varint(self.blob, 0, len(self.values), self.out)


class NullBitmap:
    params = ["cython", "python", "numpy"]
    param_names = ["impl"]

    def setup(self, impl):
        rng = np.random.default_rng(0)
        self.bits = np.packbits(rng.random(N * 8) < 0.1, bitorder="little").tobytes()
        self.count = N * 8
        self.out = np.empty((self.count + 7) // 8, dtype=np.uint8)
        if impl == "cython" and _speedups.compiled("bitmap") is None:
            raise NotImplementedError("compiled kernels not built")
        self.k = _speedups.compiled("bitmap") if impl == "cython" else _speedups.twin("bitmap")

    def time_nulls_to_validity(self, impl):
        if impl == "numpy":
            bits = np.unpackbits(np.frombuffer(self.bits, np.uint8), bitorder="little")
            np.packbits(bits ^ 1, bitorder="little")
            int(bits.sum())
        else:
            self.k.nulls_to_validity(self.bits, 0, self.count, False, self.out)
