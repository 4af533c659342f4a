"""The one exception hierarchy of paimon_engine.

Every error the engine raises on purpose derives from :class:`PaimonEngineError`.
Errors about bad bytes carry where they were found: the file (or source name),
the byte offset, and where known the block, row and field.
"""

from __future__ import annotations

__all__ = [
    "PaimonEngineError",
    "CorruptFileError",
    "ValueOutOfRangeError",
    "UnsupportedTypeError",
    "SchemaError",
    "CommitConflictError",
    "CommitFailedError",
    "CommitStateUnknownError",
    "CatalogUnreachableError",
    "CatalogSchemaError",
    "NotFoundError",
    "AlreadyExistsError",
    "InvalidArgumentError",
    "InvalidIdentifierError",
    "NamespaceNotEmptyError",
    "UnsafeLocationError",
]


class PaimonEngineError(Exception):
    """Root of every error raised by paimon_engine."""


class CorruptFileError(PaimonEngineError, ValueError):
    """Input bytes are truncated, malformed or inconsistent.

    ``path`` names the file or source, ``offset`` the byte offset where the
    problem was found; ``block``, ``row`` and ``field`` narrow it down further
    where the format has those notions.
    """

    def __init__(self, message, *, path=None, offset=None, block=None, row=None, field=None):
        self.reason = message
        self.path = path
        self.offset = offset
        self.block = block
        self.row = row
        self.field = field
        super().__init__(self._render())

    def _render(self):
        where = []
        if self.path is not None:
            where.append(f"file {self.path!s}")
        if self.block is not None:
            where.append(f"block {self.block}")
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.field is not None:
            where.append(f"field {self.field!s}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        return f"{self.reason} ({', '.join(where)})" if where else self.reason

    def located(self, *, path=None, offset=None, block=None, row=None, field=None):
        """Return a copy with the missing location parts filled in."""
        return type(self)(
            self.reason,
            path=self.path if self.path is not None else path,
            offset=self.offset if self.offset is not None else offset,
            block=self.block if self.block is not None else block,
            row=self.row if self.row is not None else row,
            field=self.field if self.field is not None else field,
        )


class ValueOutOfRangeError(PaimonEngineError, ValueError):
    """A valid stored value has no Python object of its type.

    Dates and timestamps are stored as day or microsecond counts whose range is
    far wider than :mod:`datetime` (years 1 to 9999). Readers that return Arrow
    arrays return such values as they are; readers that build Python objects
    (``decode_row``, ``RowView.get``, ``RowFileReader.get_row``) raise this
    error, naming the ``field`` and the stored ``value``. The bytes are not
    corrupt, so this is not a :class:`CorruptFileError`.
    """

    def __init__(self, message, *, field=None, value=None, path=None):
        self.reason = message
        self.field = field
        self.value = value
        self.path = path
        where = []
        if path is not None:
            where.append(f"file {path!s}")
        if field is not None:
            where.append(f"field {field!s}")
        if value is not None:
            where.append(f"stored value {value!r}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)


class UnsupportedTypeError(PaimonEngineError, TypeError):
    """A logical type, or a value, that this operation cannot handle."""


class SchemaError(PaimonEngineError, ValueError):
    """A schema is invalid, or data does not match the schema."""


class CommitConflictError(PaimonEngineError):
    """A concurrent commit changed the table; the operation may be retried."""


class CommitFailedError(PaimonEngineError):
    """A commit could not be completed (retries exhausted or validation failed)."""


class CommitStateUnknownError(CommitFailedError):
    """A commit was sent to the catalog but whether it took effect could not be confirmed (the connection was lost
    while it committed). It is not retried: reload the table to see whether the change is there. The new metadata
    file is left in place, since the catalog may point at it."""


class CatalogUnreachableError(PaimonEngineError, ConnectionError):
    """The catalog's database could not be reached. The message names host and port, never credentials."""


class CatalogSchemaError(SchemaError):
    """A catalog table in the database lacks a column the catalog needs, or has it with another type. ``table``
    and ``column`` name it; nothing was changed."""

    def __init__(self, message, *, table=None, column=None):
        self.table = table
        self.column = column
        super().__init__(message)


class NotFoundError(PaimonEngineError, LookupError):
    """A table, namespace, snapshot, file or column does not exist."""


class AlreadyExistsError(PaimonEngineError):
    """A table or namespace with that name exists already."""


class InvalidArgumentError(PaimonEngineError, ValueError):
    """An argument to a public API is out of range or inconsistent."""


class InvalidIdentifierError(InvalidArgumentError):
    """A namespace part or table name that no catalog accepts (``..``, a path separator, a control character, an
    empty or over-long part). ``part`` is the offending part, ``reason`` why it was refused."""

    def __init__(self, message, *, part=None, reason=None):
        self.part = part
        self.reason = reason
        super().__init__(message)


class NamespaceNotEmptyError(PaimonEngineError):
    """A namespace still holds tables or namespaces (at any depth) and cannot be dropped."""


class UnsafeLocationError(PaimonEngineError):
    """A delete (or a write) was refused because a path lies outside the table or warehouse location the
    operation owns, or the location cannot be owned by one table (a file-system root, the warehouse or above it).
    Checked after normalisation, before anything is deleted or written. ``path`` is the first offending path,
    ``root`` the location it had to lie under."""

    def __init__(self, message, *, path=None, root=None):
        self.path = path
        self.root = root
        super().__init__(message)
