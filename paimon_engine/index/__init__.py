"""Paimon data-file indexes (bloom filter, bitmap v1/v2, BSI) and deletion vectors."""
from .result import SKIP, REMAIN, BitmapResult, FileIndexResult
from .container import FileIndexWriter, FileIndexReader
from .bloom import BloomFilterIndex, bloom_params
from .bitmap import BitmapIndex
from .bsi import BsiIndex
from .builder import FileIndexBuilder, should_embed, index_file_name
from .evaluate import evaluate_file_index
from .deletion_vector import (DeletionVector, DeletionVectorMeta, write_deletion_vector_index,
                              read_deletion_vector, read_deletion_vector_index, scan_deletion_vector_index)

__all__ = ["SKIP", "REMAIN", "BitmapResult", "FileIndexResult", "FileIndexWriter", "FileIndexReader",
           "BloomFilterIndex", "bloom_params", "BsiIndex", "FileIndexBuilder", "should_embed",
           "index_file_name", "evaluate_file_index", "BitmapIndex", "DeletionVector", "DeletionVectorMeta",
           "write_deletion_vector_index", "read_deletion_vector", "read_deletion_vector_index",
           "scan_deletion_vector_index"]
