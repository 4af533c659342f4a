"""Where the engine may delete: every delete (drop with purge, drop namespace, expire, orphan removal, a failed
commit's cleanup) is checked here first.

Paths are compared after normalisation: a local path is made absolute with ``..`` and symlinks resolved (for a
file, the directory holding it is resolved: unlinking a file touches only that directory entry; for a directory
the whole path is resolved), an object-store URI keeps its scheme and bucket and has its key normalised
(``a/./b/../c`` -> ``a/c``). A path is *within* a root when it is the root or lies below it.

:func:`check_within` checks every path before anything is deleted and raises
:class:`~paimon_engine.errors.UnsafeLocationError` for the first one outside, so a refused operation deletes
nothing. :func:`check_deletable_root` refuses roots that can never be owned by one table or namespace: the root
of a file system or bucket, and the warehouse itself or anything above it.
"""

from __future__ import annotations

import os
import posixpath

from ..errors import UnsafeLocationError
from ..io import normalize_location

__all__ = ["comparable", "is_within", "check_within", "check_deletable_root", "delete_within"]


def _is_uri(location: str) -> bool:
    return "://" in location


def comparable(io, location: str, directory: bool = False) -> str:
    """A normalised form of ``location`` for containment checks (see the module docs)."""
    location = normalize_location(str(location))
    if _is_uri(location) or getattr(io, "_fixed", None) is not None:
        scheme, _, rest = location.partition("://") if _is_uri(location) else ("", "", location)
        key = posixpath.normpath("/" + rest.lstrip("/"))
        return f"{scheme.lower()}://{key.lstrip('/')}" if scheme else key
    path = os.path.abspath(location)
    if directory:
        return os.path.realpath(path)
    head, tail = os.path.split(path)
    if tail in ("", ".", ".."):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(head), tail)


def _within(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    if root == "/" or root.endswith("://"):
        return True
    return path == root or path.startswith(root + "/")


def is_within(io, path: str, root: str, directory: bool = False) -> bool:
    """True when ``path`` is ``root`` or lies below it, after normalisation."""
    return _within(comparable(io, path, directory), comparable(io, root, True))


def check_within(io, paths, root: str, what: str, directory: bool = False) -> list:
    """Raise UnsafeLocationError unless every path lies strictly below ``root``; -> the paths as a list."""
    paths = list(paths)
    norm_root = comparable(io, root, True).rstrip("/") or "/"
    for p in paths:
        norm = comparable(io, p, directory)
        if norm == norm_root or not _within(norm, norm_root):
            raise UnsafeLocationError(f"refusing to {what}: {p} is not inside {root} (normalised: {norm} vs "
                                    f"{norm_root}); nothing was deleted", path=p, root=root)
    return paths


def check_deletable_root(io, root: str, warehouse: str | None, what: str) -> str:
    """Refuse a root that is a file-system or bucket root, or the warehouse or one of its ancestors."""
    if not str(root).strip():
        raise UnsafeLocationError(f"refusing to {what}: the location is empty", path=root, root=root)
    norm = comparable(io, root, True).rstrip("/")
    key = norm.split("://", 1)[1] if "://" in norm else norm
    if not key.strip("/") or ("://" in norm and "/" not in key.strip("/")):
        raise UnsafeLocationError(f"refusing to {what}: {root} is the root of its file system or bucket",
                                path=root, root=root)
    if warehouse:
        if _within(comparable(io, warehouse, True), norm):
            raise UnsafeLocationError(f"refusing to {what}: {root} is the warehouse {warehouse} or contains it",
                                    path=root, root=warehouse)
    return root


def delete_within(io, paths, root: str, what: str) -> int:
    """Check every path (:func:`check_within`), then delete them; missing files are skipped. -> files deleted."""
    paths = check_within(io, paths, root, what)
    n = 0
    for p in paths:
        if io.delete(p):
            n += 1
    return n
