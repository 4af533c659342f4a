"""Pure-Python twin of ``paimon_engine/_kernels/bitmap.pyx`` (NumPy-vectorised)."""

import numpy as np

from .status import BAD_LENGTH


def _bits(bits, bit_offset, count, msb_first):
    raw = np.frombuffer(bits, dtype=np.uint8)
    first = bit_offset >> 3
    last = (bit_offset + count + 7) >> 3
    unpacked = np.unpackbits(raw[first:last], bitorder="big" if msb_first else "little")
    start = bit_offset & 7
    return unpacked[start:start + count]


def unpack_bits(bits, bit_offset, count, msb_first, invert, out):
    if count < 0 or bit_offset < 0 or len(out) < count:
        return BAD_LENGTH
    if count == 0:
        return 0
    if (bit_offset + count + 7) // 8 > len(bits):
        return BAD_LENGTH
    v = _bits(bits, bit_offset, count, msb_first)
    if invert:
        v = v ^ 1
    np.asarray(out)[:count] = v
    return int(v.sum())


def pack_bits(flags, msb_first, invert, out):
    f = np.frombuffer(flags, dtype=np.uint8) != 0
    n = len(f)
    nbytes = (n + 7) // 8
    if len(out) < nbytes:
        return BAD_LENGTH
    if invert:
        f = ~f
    packed = np.packbits(f, bitorder="big" if msb_first else "little")
    np.asarray(out)[:nbytes] = packed
    return int(f.sum())


def count_bits(bits, bit_offset, count, msb_first):
    if count < 0 or bit_offset < 0:
        return BAD_LENGTH
    if count == 0:
        return 0
    if (bit_offset + count + 7) // 8 > len(bits):
        return BAD_LENGTH
    return int(_bits(bits, bit_offset, count, msb_first).sum())


def nulls_to_validity(null_bits, bit_offset, count, msb_first, validity):
    nbytes = (count + 7) // 8
    if count < 0 or bit_offset < 0 or len(validity) < nbytes:
        return BAD_LENGTH
    if count == 0:
        return 0
    if (bit_offset + count + 7) // 8 > len(null_bits):
        return BAD_LENGTH
    nulls = _bits(null_bits, bit_offset, count, msb_first)
    np.asarray(validity)[:nbytes] = np.packbits(nulls ^ 1, bitorder="little")
    return int(nulls.sum())
