"""File I/O for every layer, through ``pyarrow.fs``: local paths, ``file:`` URIs, ``s3://``, ``gs://``,
``hdfs://`` all work the same way.

``FileIO`` resolves a location to a filesystem and a path once per filesystem and offers the operations the
formats and the table layer need: ranged reads, whole-file reads, writes, atomic create-if-absent (local
filesystems), listing and deletes. A local file opened for reading is read with positional system calls
(``os.pread``), without pyarrow in between. Errors become :class:`~paimon_engine.errors.NotFoundError` or pass
through as ``OSError``.
"""

from __future__ import annotations

import os
import stat
import threading
import uuid

from ..errors import AlreadyExistsError, NotFoundError

__all__ = ["FileIO", "normalize_location", "InputFile"]

#: local files are read with positional system calls where the platform has them
_PREAD = hasattr(os, "pread")
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def normalize_location(location: str) -> str:
    """``file:/x``, ``file:///x`` and ``/x`` all mean the local path ``/x``; other URIs are kept."""
    location = os.fspath(location)
    if location.startswith("file:"):
        from urllib.parse import urlparse  # here, not at import: it costs a fresh process ~2 ms
        parsed = urlparse(location)
        return parsed.path or "/"
    return location


def _truthy(v) -> bool:
    return str(v).strip().lower() in ("1", "true", "yes", "on") if v is not None else False


def _local_path(location: str) -> str:
    """``location`` as an absolute normalized local path (an absolute path without ``//``, ``/.`` or a trailing
    ``/`` already is one)."""
    if location.startswith("/") and not location.endswith("/") and "//" not in location and "/." not in location:
        return location
    return os.path.abspath(location)


class InputFile:
    """A readable file: ``size``, ``read_at(offset, length)``, ``read_all()``, ``close()``."""

    __slots__ = ("path", "_f", "size")

    def __init__(self, path, f, size):
        self.path = path
        self._f = f
        self.size = size

    def read_at(self, offset: int, length: int) -> bytes:
        return self._f.read_at(length, offset)

    def read_all(self) -> bytes:
        return self.read_at(0, self.size)

    def close(self):
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _LocalInputFile(InputFile):
    """A local file read with positional reads (``os.pread``): no seek and no shared position, so the reader's
    threads read it at once; opening it is two system calls. A read is bounded by the size the file had when
    it was opened (a length taken from a damaged file never allocates more than the file holds)."""

    __slots__ = ("_fd",)

    def __init__(self, path, fd, size):
        self.path = path
        self._f = None
        self._fd = fd
        self.size = size

    def read_at(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0:
            raise ValueError(f"cannot read {length} bytes at offset {offset}")
        length = min(length, max(0, self.size - offset))
        if not length:
            return b""
        data = os.pread(self._fd, length, offset)
        if len(data) < length and data:
            # a short read before the end of the file: read on until the length or the end
            parts = [data]
            got = len(data)
            while got < length:
                more = os.pread(self._fd, length - got, offset + got)
                if not more:
                    break
                parts.append(more)
                got += len(more)
            data = b"".join(parts)
        return data

    def close(self):
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self):
        # a file nobody closed (a reader dropped without close()) gives its descriptor back when it is collected,
        # as Python's own file objects do
        try:
            self.close()
        except Exception:
            pass


def _open_local(path: str, location: str) -> _LocalInputFile:
    """The local regular file ``path`` (named ``location``) opened for reading; NotFoundError when there is
    none."""
    try:
        fd = os.open(path, os.O_RDONLY | _CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise NotFoundError(f"file not found: {location}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"cannot open {location} for reading: it is a directory")
    except BaseException:
        os.close(fd)
        raise
    return _LocalInputFile(location, fd, st.st_size)


class FileIO:
    """Operations on files addressed by location strings, with pyarrow filesystems underneath.

    ``FileIO(filesystem=fs)`` uses one given filesystem for plain paths (tests pass an S3FileSystem pointed at a
    local endpoint this way); ``properties`` (``s3.endpoint``, ``s3.access-key-id``, ``s3.secret-access-key``,
    ``s3.region``) configure filesystems made from ``s3://`` URIs.
    """

    def __init__(self, properties: dict | None = None, filesystem=None):
        self.properties = dict(properties or {})
        self._fixed = filesystem
        self._cache = {}
        self._lock = threading.Lock()

    def __getstate__(self):
        return {"properties": self.properties, "filesystem": self._fixed}

    def __setstate__(self, state):
        self.__init__(state["properties"], state["filesystem"])

    # -- resolution --------------------------------------------------------
    def resolve(self, location: str):
        """-> (pyarrow filesystem, path inside it)."""
        location = normalize_location(location)
        local = self._local_path_of(location)
        if local is not None:
            return self._local(), local
        if self._fixed is not None:
            path = location.split("://", 1)[1] if "://" in location else location
            return self._fixed, path
        import pyarrow.fs as pafs
        scheme = location.split("://", 1)[0]
        if scheme == "s3" and any(k.startswith("s3.") for k in self.properties):
            fs = self._cached(("s3",), self._make_s3)
            return fs, location.split("://", 1)[1]
        from urllib.parse import urlparse
        key = (scheme, urlparse(location).netloc)
        fs, path = pafs.FileSystem.from_uri(location)
        with self._lock:
            fs = self._cache.setdefault(key, fs)
        return fs, path

    def _local_path_of(self, location: str):
        """The absolute local path of ``location`` (normalized) when it is read through the local filesystem (no
        filesystem is fixed and it names no URI scheme), else None."""
        if self._fixed is None and "://" not in location:
            return _local_path(location)
        return None

    def _cached(self, key, make):
        with self._lock:
            fs = self._cache.get(key)
            if fs is None:
                fs = self._cache[key] = make()
        return fs

    def _local(self):
        fs = self._cache.get(("local",))
        if fs is None:
            import pyarrow.fs as pafs
            fs = self._cached(("local",), pafs.LocalFileSystem)
        return fs

    def _make_s3(self):
        import pyarrow.fs as pafs
        p = self.properties
        endpoint = p.get("s3.endpoint")
        kwargs = {}
        if endpoint:
            from urllib.parse import urlparse
            parsed = urlparse(endpoint)
            kwargs["endpoint_override"] = parsed.netloc or endpoint
            kwargs["scheme"] = parsed.scheme or "http"
        if p.get("s3.access-key-id"):
            kwargs["access_key"] = p["s3.access-key-id"]
            kwargs["secret_key"] = p.get("s3.secret-access-key", "")
            if p.get("s3.session-token"):
                kwargs["session_token"] = p["s3.session-token"]
        if p.get("s3.region"):
            kwargs["region"] = p["s3.region"]
        if _truthy(p.get("s3.allow-bucket-creation")):
            kwargs["allow_bucket_creation"] = True
        if p.get("s3.connect-timeout"):
            kwargs["connect_timeout"] = float(p["s3.connect-timeout"])
        if p.get("s3.request-timeout"):
            kwargs["request_timeout"] = float(p["s3.request-timeout"])
        return pafs.S3FileSystem(**kwargs)

    def is_local(self, location: str) -> bool:
        import pyarrow.fs as pafs
        fs, _ = self.resolve(location)
        return isinstance(fs, pafs.LocalFileSystem)

    # -- reads ---------------------------------------------------------------
    def open_input(self, location: str) -> InputFile:
        if _PREAD:
            # a local file: what resolve() would find, without making the filesystem object
            local = self._local_path_of(normalize_location(location))
            if local is not None:
                return _open_local(local, location)
        fs, path = self.resolve(location)
        try:
            f = fs.open_input_file(path)
        except FileNotFoundError:
            raise NotFoundError(f"file not found: {location}") from None
        except OSError as exc:
            if "not found" in str(exc).lower() or "does not exist" in str(exc).lower():
                raise NotFoundError(f"file not found: {location}") from None
            raise
        return InputFile(location, f, f.size())

    def read_bytes(self, location: str) -> bytes:
        with self.open_input(location) as f:
            return f.read_all()

    def exists(self, location: str) -> bool:
        import pyarrow.fs as pafs
        fs, path = self.resolve(location)
        return fs.get_file_info(path).type != pafs.FileType.NotFound

    def size(self, location: str) -> int:
        import pyarrow.fs as pafs
        fs, path = self.resolve(location)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            raise NotFoundError(f"file not found: {location}")
        return info.size

    def list(self, location: str, recursive: bool = True):
        """FileInfo of every file under a directory (none if it does not exist)."""
        import pyarrow.fs as pafs
        fs, path = self.resolve(location)
        sel = pafs.FileSelector(path, recursive=recursive, allow_not_found=True)
        return [i for i in fs.get_file_info(sel) if i.type == pafs.FileType.File]

    # -- writes --------------------------------------------------------------
    def open_output(self, location: str):
        """A writable stream; parent directories are created on local filesystems."""
        fs, path = self.resolve(location)
        parent = path.rsplit("/", 1)[0]
        if parent:
            fs.create_dir(parent, recursive=True)
        return fs.open_output_stream(path)

    def write_bytes(self, location: str, data: bytes) -> None:
        with self.open_output(location) as out:
            out.write(data)

    def create_exclusive(self, location: str, data: bytes) -> None:
        """Write a new file, failing with AlreadyExistsError if it exists.

        Atomic on local filesystems (``O_CREAT | O_EXCL`` on a temporary name, then ``link``, which fails if the
        target exists; never an overwriting rename). Object stores have no such primitive: the table layer commits
        there through a catalog with compare-and-swap instead, and this raises for them.
        """
        if not self.is_local(location):
            raise NotImplementedError("atomic create-if-absent needs a local filesystem; use a SQL catalog")
        _, path = self.resolve(location)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{uuid.uuid4().hex}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise AlreadyExistsError(f"{location} exists already") from None
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass

    def delete(self, location: str) -> bool:
        """Delete a file; False if it was not there."""
        fs, path = self.resolve(location)
        try:
            fs.delete_file(path)
            return True
        except FileNotFoundError:
            return False
        except OSError as exc:
            if "not found" in str(exc).lower() or "does not exist" in str(exc).lower():
                return False
            raise

    def delete_dir(self, location: str) -> None:
        fs, path = self.resolve(location)
        fs.delete_dir(path)
