"""Apache Fory rows: the standard layout (Java, C++, pyfory) and Java's compact layout.

``encode_rows`` turns a column batch into contiguous rows plus offsets and
``decode_rows`` turns rows back into Arrow columns (with projection), both in
the ``foryrow`` kernel. ``encode_row`` / ``decode_row`` handle one row as a
dict, and ``RowView`` reads single fields of a row in place.
"""

from .codec import decode_row, decode_rows, encode_row, encode_rows, split_rows
from .schema import COMPACT, LAYOUTS, STANDARD, ForySchema
from .view import __getattr__  # noqa: F401  (RowView, ArrayView, MapView come from the kernel)

__all__ = ["ForySchema", "STANDARD", "COMPACT", "LAYOUTS", "encode_rows", "decode_rows", "encode_row",
           "decode_row", "split_rows", "RowView", "ArrayView", "MapView"]
