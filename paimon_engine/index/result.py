"""Results of asking a file index about a predicate.

A result is one of:

* :data:`SKIP`: no row of the file can match, the file need not be read;
* :data:`REMAIN`: the index cannot tell, every row must be read;
* a :class:`BitmapResult` holding a ``pyroaring.BitMap`` of the candidate rows
  (a superset of the matching rows; exact for bitmap and BSI indexes).

Results combine with ``&`` (and), ``|`` (or); :meth:`selection` turns any result
into a ``BitMap`` usable as a reader's row selection.
"""
from __future__ import annotations

from pyroaring import BitMap

__all__ = ["FileIndexResult", "SKIP", "REMAIN", "BitmapResult", "result_of"]


class FileIndexResult:
    """Base of the three kinds of result."""

    def remain(self) -> bool:
        """True when some row may match (the file must be read)."""
        raise NotImplementedError

    def __and__(self, other):
        return _and(self, result_of(other))

    def __or__(self, other):
        return _or(self, result_of(other))

    __rand__ = __and__
    __ror__ = __or__

    def selection(self, num_rows: int) -> BitMap:
        """Candidate rows as a BitMap over ``[0, num_rows)``."""
        raise NotImplementedError


class _Skip(FileIndexResult):
    def remain(self):
        return False

    def selection(self, num_rows):
        return BitMap()

    def __repr__(self):
        return "SKIP"

    def __reduce__(self):
        return "SKIP"


class _Remain(FileIndexResult):
    def remain(self):
        return True

    def selection(self, num_rows):
        bm = BitMap()
        if num_rows > 0:
            bm.add_range(0, num_rows)
        return bm

    def __repr__(self):
        return "REMAIN"

    def __reduce__(self):
        return "REMAIN"


SKIP = _Skip()
REMAIN = _Remain()


class BitmapResult(FileIndexResult):
    """Candidate rows known exactly as a bitmap."""

    __slots__ = ("bitmap",)

    def __init__(self, bitmap):
        self.bitmap = bitmap if isinstance(bitmap, BitMap) else BitMap(bitmap)

    def remain(self):
        return len(self.bitmap) > 0

    def selection(self, num_rows):
        bm = self.bitmap
        if len(bm) and bm.max() >= num_rows:
            bm = _clip(bm, num_rows)
        return bm

    def __eq__(self, other):
        return isinstance(other, BitmapResult) and self.bitmap == other.bitmap

    def __hash__(self):
        return hash(tuple(self.bitmap))

    def __repr__(self):
        return f"BitmapResult({len(self.bitmap)} rows)"


def _clip(bm, n):
    r = BitMap()
    r.add_range(0, n)
    return bm & r


def result_of(obj) -> FileIndexResult:
    """Coerce a BitMap (or iterable of rows) or a result to a result."""
    if isinstance(obj, FileIndexResult):
        return obj
    if obj is True:
        return REMAIN
    if obj is False:
        return SKIP
    return BitmapResult(obj)


def _and(a, b):
    if a is SKIP or b is SKIP:
        return SKIP
    if a is REMAIN:
        return b
    if b is REMAIN:
        return a
    return BitmapResult(a.bitmap & b.bitmap)


def _or(a, b):
    if a is REMAIN or b is REMAIN:
        return REMAIN
    if a is SKIP:
        return b
    if b is SKIP:
        return a
    return BitmapResult(a.bitmap | b.bitmap)
