"""The one check of namespace and table names, used by every catalog before anything touches storage.

A name part (a namespace level or a table name) becomes a directory name in a file-system catalog and part of a
location in a SQL catalog, so it must be safe as one path component on every store:

* not empty, not ``.`` or ``..``;
* no path separator (``/`` or ``\\``) and no ``.`` (catalogs join namespace levels with dots, so a dot inside a
  part would name another namespace);
* no NUL or other control character (Unicode category ``Cc``), no line/paragraph separator, no lone surrogate;
* at most :data:`MAX_PART_BYTES` (255) bytes in UTF-8, the limit of common local file systems.

A refused part raises :class:`~paimon_engine.errors.InvalidIdentifierError` naming the part and the reason.
"""

from __future__ import annotations

import unicodedata

from ..errors import InvalidIdentifierError

__all__ = ["MAX_PART_BYTES", "check_part", "check_namespace", "parse_identifier"]

MAX_PART_BYTES = 255

_REFUSED_CATEGORIES = {"Cc": "a control character", "Cs": "a lone surrogate", "Zl": "a line separator",
                       "Zp": "a paragraph separator"}


def _show(part) -> str:
    text = repr(part)
    return text if len(text) <= 60 else f"{text[:40]}...({len(text)} characters)"


def _refuse(part, what, reason):
    raise InvalidIdentifierError(f"invalid {what} {_show(part)}: {reason}", part=part, reason=reason)


def check_part(part, what: str = "name part") -> str:
    """Return ``part`` if it is a valid namespace part or table name, else raise InvalidIdentifierError."""
    if not isinstance(part, str):
        _refuse(part, what, f"must be a string, not {type(part).__name__}")
    if not part:
        _refuse(part, what, "is empty")
    if part in (".", ".."):
        _refuse(part, what, "is a relative path component")
    for ch in part:
        if ch in "/\\":
            _refuse(part, what, f"contains the path separator {ch!r}")
        if ch == ".":
            _refuse(part, what, "contains '.', the namespace separator")
        category = unicodedata.category(ch)
        if category in _REFUSED_CATEGORIES:
            _refuse(part, what, f"contains {_REFUSED_CATEGORIES[category]} (U+{ord(ch):04X})")
    size = len(part.encode("utf-8"))
    if size > MAX_PART_BYTES:
        _refuse(part, what, f"is {size} bytes in UTF-8, more than the limit of {MAX_PART_BYTES}")
    return part


def _parts(value, what):
    if isinstance(value, str):
        return tuple(value.split("."))
    if isinstance(value, (tuple, list)):
        return tuple(value)
    raise InvalidIdentifierError(f"{what} must be a dotted string or a tuple of strings, not "
                                 f"{type(value).__name__}", part=value, reason="wrong type")


def check_namespace(namespace) -> tuple:
    """``"a.b"`` or ``("a", "b")`` -> ``("a", "b")``, every level checked."""
    parts = _parts(namespace, "a namespace")
    if not parts:
        raise InvalidIdentifierError("a namespace needs at least one level", part=namespace, reason="is empty")
    return tuple(check_part(p, "namespace part") for p in parts)


def parse_identifier(identifier) -> tuple:
    """``"ns.sub.table"`` or ``("ns", "sub", "table")`` -> (namespace tuple, table name), every part checked."""
    parts = _parts(identifier, "a table identifier")
    if len(parts) < 2:
        raise InvalidIdentifierError(f"table identifier {_show(identifier)} needs a namespace and a name",
                                     part=identifier, reason="has no namespace")
    namespace = tuple(check_part(p, "namespace part") for p in parts[:-1])
    return namespace, check_part(parts[-1], "table name")
