"""Apache Paimon ``.row`` files: zstd blocks of compact rows, a block index and a 32-byte footer.

``RowFileWriter`` encodes column batches with the ``rowcodec`` kernel;
``RowFileReader`` decodes whole blocks into column buffers, with projection,
row selection (``pyroaring.BitMap``) and point lookups.
"""

from .footer import FOOTER_SIZE, MAGIC, VERSION, BlockIndex, Footer
from .reader import RowFileReader
from .writer import RowFileMetadata, RowFileWriter

__all__ = ["RowFileWriter", "RowFileReader", "RowFileMetadata", "Footer", "BlockIndex", "FOOTER_SIZE",
           "MAGIC", "VERSION"]
