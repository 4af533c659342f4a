"""The sub-commands of paimon-engine: inspect, cat, table ... and catalog list.

Each command prints a plain table (or JSON with --json) to stdout; errors are reported by cli.main as one line
on stderr with an exit code (see docs/cli.md). Progress bars go to stderr, and only when it is a terminal.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys

from .errors import InvalidArgumentError

__all__ = ["add_commands", "run_command", "Progress"]

COMMANDS = ("inspect", "cat", "table", "catalog", "serve")


# -- output helpers ------------------------------------------------------------------
class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal.

    With ``total=None`` (the amount of work is not known up front) it counts instead: ``label: 12 files``.
    """

    def __init__(self, total, label: str = "", stream=None, unit: str = ""):
        self.total = None if total is None else max(0, int(total))
        self.label = label
        self.unit = unit
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and self.total != 0
        self.done = 0

    def update(self, n: int = 1):
        self.done += n
        if self.enabled:
            if self.total is None:
                self.stream.write(f"\r{self.label}: {self.done} {self.unit}".rstrip())
            else:
                width = 30
                filled = int(width * min(self.done, self.total) / self.total)
                self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                                  f"{self.done}/{self.total} {self.unit}".rstrip())
            self.stream.flush()

    def close(self):
        if self.enabled:
            self.stream.write("\r" + " " * (len(self.label) + 50) + "\r")
            self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, bytes):
        return v.hex()
    return str(v)


def print_table(rows, headers, out=None):
    out = out or sys.stdout
    cells = [[_fmt(v) for v in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    out.write("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip() + "\n")
    out.write("  ".join("-" * w for w in widths).rstrip() + "\n")
    for r in cells:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")


def _json_default(v):
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.hex()
    if hasattr(v, "item"):
        return v.item()
    return str(v)


def print_json(obj, out=None):
    (out or sys.stdout).write(json.dumps(obj, default=_json_default, indent=2) + "\n")


def _ms(ts):
    return _dt.datetime.fromtimestamp(ts / 1000, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


# -- parser ------------------------------------------------------------------------------
# Argument values are checked while parsing, so a malformed value is a usage error (exit code 2).
CATALOG = "--uri sqlite:///warehouse/tables-demo/catalog.db"


def _example(command, more=""):
    """An example on the demo warehouse's SQLite catalog, wrapped to fit a terminal."""
    return f"paimon-engine {command} \\\n    {CATALOG}" + (f" \\\n    {more}" if more else "")


def _rows_arg(text):
    """``a:b`` -> (start or None, stop or None); either side may be empty or negative."""
    if ":" not in text:
        raise argparse.ArgumentTypeError(f"must look like a:b (e.g. 10:20, -5:), got {text!r}")
    a, b = text.split(":", 1)
    try:
        return (int(a) if a.strip() else None), (int(b) if b.strip() else None)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must look like a:b with integers, got {text!r}") from None


def _row_type_arg(text):
    from .errors import PaimonEngineError
    from .types import RowType, parse_paimon_type
    try:
        schema = parse_paimon_type(text)
    except (PaimonEngineError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a Paimon type: {' '.join(str(exc).split())}") from None
    if not isinstance(schema, RowType):
        raise argparse.ArgumentTypeError(f"must be a ROW<...> type, got {text!r}")
    return schema


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return value


def _add_io(p):
    p.add_argument("--s3-endpoint", help="S3 endpoint URL (s3.endpoint)")
    p.add_argument("--s3-region", help="S3 region (s3.region)")


def _add_catalog(p):
    p.add_argument("--uri", help="SQLite catalog, e.g. sqlite:///warehouse/catalog.db")
    p.add_argument("--warehouse", help="warehouse directory (a file-system catalog when --uri is not given; "
                                       "with --uri, where new tables go)")


def _add_table_source(p):
    p.add_argument("table", metavar="TABLE",
                   help="a namespace.table name with --uri or --warehouse, else a table directory")
    _add_catalog(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_io(p)


TABLE_EPILOG = """\
TABLE is a namespace.table name in the catalog given by --uri (SQLite) or
--warehouse (file system), or without either the path of a table directory."""

PROGRESS_EPILOG = """\
A progress bar is drawn on stderr when stderr is a terminal; piped or
redirected runs stay quiet."""


def add_commands(sub, command_parser):
    """Add the sub-commands to ``sub``, each made by ``command_parser`` (the command line's one way to build a
    sub-command parser with an example and the exit codes)."""
    p = command_parser(
        sub, "inspect", "show the structure of a .row, file-index or deletion-vector file",
        "Show a file's structure, told apart by its content:\n"
        "  a Paimon .row file        footer and block index (version, rows, blocks,\n"
        "                            sizes); only the footer and the index are read\n"
        "  a Paimon file-index file  each column's indexes, offsets and lengths\n"
        "  a deletion-vector file    each vector's offset, length, bit width and\n"
        "                            deleted rows",
        "paimon-engine inspect warehouse/demo.row --blocks")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--blocks", action="store_true", help="list every block of a .row file")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_io(p)

    p = command_parser(
        sub, "cat", "print rows of a .row file",
        "Print rows of a .row file. The file holds no schema: give its row type with\n"
        "--schema. Only the blocks holding the requested rows are read.",
        "paimon-engine cat warehouse/demo.row \\\n"
        "    --schema 'ROW<id BIGINT, price DOUBLE, name STRING, qty INT>' \\\n"
        "    --rows 0:5 --columns id,name",
        "--rows a:b is half-open and takes negative ends: --rows=-10: prints the last ten\n"
        "rows (write it with = when it starts with -).")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--schema", required=True, type=_row_type_arg, metavar="'ROW<...>'",
                   help="the file's row type, e.g. 'ROW<id BIGINT, name STRING>'")
    p.add_argument("--rows", type=_rows_arg, metavar="A:B", help="row range a:b (half-open; either side may be empty)")
    p.add_argument("--columns", metavar="X,Y", help="comma-separated columns")
    p.add_argument("--json", action="store_true", help="print one JSON object per line")
    _add_io(p)

    t = command_parser(
        sub, "table", "table metadata, scans and maintenance",
        "Table metadata (info, history, snapshots, files), scans, appends and maintenance\n"
        "(compact, expire, remove-orphans).",
        _example("table info db.orders"),
        TABLE_EPILOG)
    tsub = t.add_subparsers(dest="table_command", required=True, metavar="TABLE_COMMAND")
    for name, helptext, description in (
            ("info", "schema, partitioning, properties, current snapshot",
             "Show a table's location, format version, metadata file, schema with field ids,\n"
             "partitioning, properties and current snapshot."),
            ("history", "snapshot log", "Show the snapshot log: when each snapshot became current."),
            ("snapshots", "every snapshot with its summary",
             "List every snapshot: id, parent, sequence number, time, operation, added and\ntotal records."),
            ("files", "live data and delete files",
             "List the live data and delete files with format, records, bytes and partition.")):
        q = command_parser(tsub, name, helptext, description, _example(f"table {name} db.orders"),
                           TABLE_EPILOG)
        _add_table_source(q)
        if name == "files":
            q.add_argument("--snapshot-id", type=int, help="files of this snapshot (default current)")

    q = command_parser(
        tsub, "scan", "read rows (filter, columns, time travel, limit)",
        "Read rows: planning prunes files by partition, column statistics and file\n"
        "indexes; deletes are applied. Prints the first 20 rows unless --limit says\n"
        "otherwise.",
        _example("table scan db.orders", "--filter \"qty = 7 and id < 100\" --columns id,qty --limit 5"),
        TABLE_EPILOG + "\n\n" + PROGRESS_EPILOG)
    _add_table_source(q)
    q.add_argument("--filter", help="a filter expression, e.g. \"k = 3 and name >= 'b'\"")
    q.add_argument("--columns", metavar="X,Y", help="comma-separated columns")
    q.add_argument("--limit", type=int, default=20, help="rows to print (default 20; 0 for all)")
    q.add_argument("--snapshot-id", type=int, help="read this snapshot")
    q.add_argument("--as-of", help="read the snapshot current at this ISO timestamp or epoch milliseconds")
    q.add_argument("--ref", help="read the head of this branch or tag")
    q.add_argument("--count", action="store_true", help="print only the number of rows")

    q = command_parser(
        tsub, "append", "append rows from Parquet, CSV or JSON-lines files",
        "Append rows from .parquet, .csv or .json/.jsonl files in one snapshot. Columns\n"
        "are matched by name and cast to the table's types; missing optional columns are\n"
        "null.",
        _example("table append db.orders more.csv"),
        TABLE_EPILOG + "\n\n" + PROGRESS_EPILOG)
    _add_table_source(q)
    q.add_argument("files", nargs="+", metavar="FILE", help="input files (.parquet, .csv, .json/.jsonl)")

    q = command_parser(
        tsub, "compact", "rewrite live data with deletes applied (operation replace)",
        "Rewrite the live data with deletes applied and drop the delete files, in one\n"
        "snapshot with operation replace. Older snapshots still see the old files until\n"
        "they are expired.",
        _example("table compact db.orders"),
        TABLE_EPILOG + "\n\n" + PROGRESS_EPILOG)
    _add_table_source(q)
    q.add_argument("--target-file-size", type=_positive_int, metavar="BYTES", help="bytes per data file")

    q = command_parser(
        tsub, "expire", "remove old snapshots and the files only they referenced",
        "Remove snapshots and delete the data, delete and manifest files that only they\n"
        "referenced. The current snapshot, the newest --retain-last snapshots of the main\n"
        "branch and the head of every branch and tag are always kept.",
        _example("table expire db.orders", "--retain-last 1"),
        TABLE_EPILOG + "\n\nWithout --older-than-hours or --snapshot-id, every snapshot the rules above\n"
        "do not keep is expired.\n\n" + PROGRESS_EPILOG)
    _add_table_source(q)
    q.add_argument("--older-than-hours", type=float, metavar="H",
                   help="only snapshots created more than H hours ago")
    q.add_argument("--retain-last", type=_positive_int, default=1, metavar="N",
                   help="always keep the newest N snapshots of the main branch (default 1)")
    q.add_argument("--snapshot-id", type=int, action="append", dest="snapshot_ids", metavar="ID",
                   help="expire this snapshot (repeatable); the other rules still apply")
    q.add_argument("--keep-files", action="store_true", help="only drop the snapshots from the metadata")

    q = command_parser(
        tsub, "remove-orphans", "delete files no snapshot or metadata file references",
        "Delete files under the table location that no snapshot or metadata file\n"
        "references (left by failed or killed writers), if they were last modified before\n"
        "--older-than-hours (default 72) so that running writes are not harmed.",
        _example("table remove-orphans db.orders", "--dry-run"),
        TABLE_EPILOG + "\n\n" + PROGRESS_EPILOG)
    _add_table_source(q)
    q.add_argument("--older-than-hours", type=float, default=72.0, metavar="H",
                   help="only files last modified more than H hours ago (default 72)")
    q.add_argument("--dry-run", action="store_true", help="list them, delete nothing")

    c = command_parser(sub, "catalog", "catalog contents", "Catalog contents.",
                       _example("catalog list"))
    csub = c.add_subparsers(dest="catalog_command", required=True, metavar="CATALOG_COMMAND")
    q = command_parser(csub, "list", "namespaces and tables",
                       "List the namespaces and tables of a SQLite (--uri) or file-system (--warehouse)\ncatalog.",
                       _example("catalog list"))
    _add_catalog(q)
    q.add_argument("--json", action="store_true", help="print JSON")
    _add_io(q)

    q = command_parser(
        sub, "serve", "serve a catalog over the Iceberg REST catalog protocol",
        "Serve a SQLite catalog (a sqlite:/// URI) or a file-system catalog (a warehouse\n"
        "directory) over the Iceberg REST catalog protocol until interrupted. Needs the\n"
        "'rest' extra (Starlette and uvicorn).",
        "paimon-engine serve --catalog sqlite:///warehouse/catalog.db \\\n"
        "    --warehouse warehouse --port 8181 --token s3cret",
        "With --token, every request must carry 'Authorization: Bearer <token>'; others\n"
        "get 401. Without --host the server listens on 127.0.0.1 only.")
    q.add_argument("--catalog", required=True, metavar="URI_OR_PATH",
                   help="sqlite:///path/catalog.db, or a warehouse directory (file-system catalog)")
    q.add_argument("--warehouse", help="where new tables of a SQLite catalog go")
    q.add_argument("--catalog-name", default="default", help="the SQLite catalog's name (default 'default')")
    q.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    q.add_argument("--port", type=int, default=8181, help="port (default 8181)")
    q.add_argument("--token", help="bearer token every request must carry")
    q.add_argument("--prefix", help="URL prefix announced in /v1/config (default none)")
    q.add_argument("--credential", metavar="ID:SECRET",
                   help="hand out --token at /v1/oauth/tokens to this OAuth2 client")
    _add_io(q)


# -- commands ----------------------------------------------------------------------------
def _io_props(args):
    props = {}
    if getattr(args, "s3_endpoint", None):
        props["s3.endpoint"] = args.s3_endpoint
    if getattr(args, "s3_region", None):
        props["s3.region"] = args.s3_region
    return props


def _file_io(args):
    from .io import FileIO
    return FileIO(properties=_io_props(args))


def _inspect_file_index(args, f) -> int:
    from .index.container import FileIndexReader
    reader = FileIndexReader(f, path=args.file)
    rows = []
    for column in reader.columns():
        for itype in reader.index_types(column):
            start, length = reader.index_range(column, itype)
            rows.append({"column": column, "index": itype, "offset": start, "length": length,
                         "empty": start == -1})
    info = {"file": args.file, "format": "paimon file index", "file_size": reader.size, "indexes": len(rows)}
    if args.json:
        print_json({**info, "entries": rows})
        return 0
    for k, v in info.items():
        print(f"{k:20s} {v}")
    if rows:
        print()
        print_table([list(r.values()) for r in rows], list(rows[0].keys()))
    return 0


def _inspect_deletion_vectors(args, data) -> int:
    from .index.deletion_vector import scan_deletion_vector_index
    entries = [{"offset": off, "length": length, "deleted_rows": len(dv.bitmap),
                "bits": 64 if dv.is_64bit else 32}
               for off, length, dv in scan_deletion_vector_index(data, path=args.file)]
    info = {"file": args.file, "format": "paimon deletion vectors", "file_size": len(data),
            "vectors": len(entries), "deleted_rows": sum(e["deleted_rows"] for e in entries)}
    if args.json:
        print_json({**info, "entries": entries})
        return 0
    for k, v in info.items():
        print(f"{k:20s} {v}")
    if entries:
        print()
        print_table([list(e.values()) for e in entries], list(entries[0].keys()))
    return 0


def cmd_inspect(args) -> int:
    """A .row file, a Paimon file-index container or a deletion-vector index file (told apart by content)."""
    import struct

    from .formats.row.footer import FOOTER_SIZE, BlockIndex, Footer
    from .formats.row.footer import MAGIC as ROW_MAGIC
    from .errors import CorruptFileError
    from .index.container import MAGIC as INDEX_MAGIC
    io = _file_io(args)
    with io.open_input(args.file) as f:
        size = f.size
        head = bytes(f.read_at(0, min(size, 8)))
        if len(head) == 8 and struct.unpack(">q", head)[0] == INDEX_MAGIC:
            return _inspect_file_index(args, f)
        row_tail = struct.pack("<I", ROW_MAGIC)  # the last four bytes of a .row footer
        if head[:1] == b"\x01" and bytes(f.read_at(max(0, size - 4), min(size, 4))) != row_tail:
            return _inspect_deletion_vectors(args, bytes(f.read_at(0, size)))
        if size < FOOTER_SIZE + 3:
            raise CorruptFileError(f"{size} bytes cannot hold a .row footer and index", path=args.file, offset=0)
        footer = Footer.parse(f.read_at(size - FOOTER_SIZE, FOOTER_SIZE), size, path=args.file)
        index = BlockIndex.parse(f.read_at(footer.index_offset, footer.index_length), footer, path=args.file)
    blocks = [{"block": b, "offset": int(index.offsets[b]), "compressed": int(index.compressed_sizes[b]),
               "uncompressed": int(index.uncompressed_sizes[b]), "first_row": int(index.row_starts[b]),
               "rows": int(index.block_rows(b))} for b in range(index.block_count)]
    info = {"file": args.file, "format": "paimon row", "version": footer.version, "file_size": size,
            "rows": footer.row_count, "blocks": footer.block_count, "index_offset": footer.index_offset,
            "index_length": footer.index_length,
            "compressed_bytes": int(index.compressed_sizes.sum()) if blocks else 0,
            "uncompressed_bytes": int(index.uncompressed_sizes.sum()) if blocks else 0}
    if args.json:
        print_json({**info, "block_index": blocks} if args.blocks else info)
        return 0
    for k, v in info.items():
        print(f"{k:20s} {v}")
    if blocks and info["compressed_bytes"]:
        print(f"{'compression ratio':20s} {info['uncompressed_bytes'] / info['compressed_bytes']:.2f}")
    if args.blocks:
        print()
        print_table([list(b.values()) for b in blocks], list(blocks[0].keys()) if blocks else
                    ["block", "offset", "compressed", "uncompressed", "first_row", "rows"])
    return 0


def _parse_rows(rows, n):
    """``--rows`` (start or None, stop or None) -> a clamped half-open range of the file's n rows."""
    if not rows:
        return 0, n
    start = 0 if rows[0] is None else rows[0]
    stop = n if rows[1] is None else rows[1]
    if start < 0:
        start += n
    if stop < 0:
        stop += n
    start, stop = max(0, min(start, n)), max(0, min(stop, n))
    return start, max(start, stop)


def _columns(text):
    return [c.strip() for c in text.split(",") if c.strip()] if text else None


def _print_rows(tbl, as_json):
    rows = tbl.to_pylist()
    if as_json:
        for r in rows:
            sys.stdout.write(json.dumps(r, default=_json_default) + "\n")
    else:
        print_table([list(r.values()) for r in rows], tbl.column_names)


def cmd_cat(args) -> int:
    from pyroaring import BitMap

    from .formats.row import RowFileReader
    with RowFileReader(args.file, args.schema, file_io=_file_io(args)) as r:
        start, stop = _parse_rows(args.rows, r.num_rows)
        cols = _columns(args.columns)
        sel = None if (start, stop) == (0, r.num_rows) else BitMap(range(start, stop))
        tbl = r.to_arrow(columns=cols, selection=sel) if stop > start else r.to_arrow(columns=cols).slice(0, 0)
    _print_rows(tbl, args.json)
    return 0


def _catalog(args):
    from .catalog.filesystem import FileSystemCatalog
    from .catalog.sql import SqlCatalog
    io = _file_io(args)
    if args.uri:
        return SqlCatalog("default", uri=args.uri, warehouse=args.warehouse, io=io)
    if args.warehouse:
        return FileSystemCatalog(args.warehouse, io=io)
    return None


def _load_table(args):
    from .catalog.filesystem import FileSystemCatalog
    cat = _catalog(args)
    if cat is not None:
        return cat.load_table(args.table)
    loc = args.table.rstrip("/")
    return FileSystemCatalog(loc.rsplit("/", 1)[0] or "/", io=_file_io(args)).load_table_at(loc)


def _snapshot_dict(s):
    return {"snapshot_id": s.snapshot_id, "parent_id": s.parent_snapshot_id, "sequence_number": s.sequence_number,
            "timestamp": _ms(s.timestamp_ms), "operation": s.operation, "summary": dict(s.summary),
            "schema_id": s.schema_id, "manifest_list": s.manifest_list}


class _StepBars:
    """A ``progress(step, done, total)`` callback drawing one Progress bar per step (on a TTY only)."""

    def __init__(self):
        self.bar = None
        self.step = None

    UNITS = {"write": "rows", "read": "files", "delete": "files"}

    def __call__(self, step, done, total):
        if step != self.step:
            self.close()
            self.step = step
            self.bar = Progress(total, step, unit=self.UNITS.get(step, ""))
        self.bar.update(done - self.bar.done)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _read_input(path, io):
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq
    low = path.lower()
    with io.open_input(path) as f:
        data = bytes(f.read_at(0, f.size))
    import pyarrow as pa
    src = pa.BufferReader(data)
    if low.endswith(".parquet"):
        return pq.read_table(src)
    if low.endswith(".csv"):
        return pacsv.read_csv(src)
    if low.endswith((".json", ".jsonl", ".ndjson")):
        return pajson.read_json(src)
    raise InvalidArgumentError(f"{path}: unknown input format (use .parquet, .csv or .json/.jsonl)")


def _table_maintenance(t, args) -> int:
    import time as _time
    sub = args.table_command
    with _StepBars() as bars:
        if sub == "append":
            import pyarrow as pa
            io = _file_io(args)
            from .table.data_writer import prepare_arrow
            schema = t.schema()
            data = pa.concat_tables([prepare_arrow(_read_input(p, io), schema) for p in args.files])
            snap = t.append(data, progress=bars)
            result = {"snapshot_id": snap.snapshot_id, "rows": data.num_rows,
                      "added_files": int(snap.summary.get("added-data-files", 0))}
        elif sub == "compact":
            before = t.current_snapshot()
            snap = t.rewrite_files(args.target_file_size, progress=bars)
            result = {"snapshot_id": None if snap is None else snap.snapshot_id,
                      "rewritten": snap is not None and (before is None or snap.snapshot_id != before.snapshot_id)}
        elif sub == "expire":
            result = _expire(t, args)
        else:
            cutoff = int((_time.time() - args.older_than_hours * 3600) * 1000)
            orphans = t.remove_orphan_files(older_than_ms=cutoff, dry_run=args.dry_run, progress=bars)
            result = {"orphans": orphans, "deleted": 0 if args.dry_run else len(orphans)}
    if args.json:
        print_json(result)
    else:
        for k, v in result.items():
            if isinstance(v, list):
                print(f"{k:14s} {len(v)}")
                for item in v:
                    print(f"  {item}")
            else:
                print(f"{k:14s} {v}")
    return 0


def _expire(t, args) -> dict:
    """Table.expire_snapshots with a counter of the files it deletes (on a terminal): the number is not known
    before the snapshots are gone, so the table's FileIO is told to count its deletes for the duration."""
    import time as _time
    older = None
    if args.older_than_hours is not None:
        older = int((_time.time() - args.older_than_hours * 3600) * 1000)
    io = t.io
    real_delete = io.delete
    deleted = []
    with Progress(None, "expire: deleted", unit="files") as bar:
        def counting_delete(path, *a, **kw):
            result = real_delete(path, *a, **kw)
            deleted.append(path)
            bar.update()
            return result
        io.delete = counting_delete
        try:
            expired = t.expire_snapshots(older_than_ms=older, retain_last=args.retain_last,
                                         snapshot_ids=args.snapshot_ids, delete_files=not args.keep_files)
        finally:
            del io.delete  # the instance attribute goes; the FileIO's own method is back
    return {"expired": expired, "deleted_files": len(deleted)}


def cmd_table(args) -> int:
    t = _load_table(args)
    sub = args.table_command
    if sub in ("append", "compact", "expire", "remove-orphans"):
        return _table_maintenance(t, args)
    if sub == "info":
        cur = t.current_snapshot()
        schema = t.schema()
        info = {"name": t.name, "location": t.location, "format_version": t.format_version,
                "metadata": t.metadata_location,
                "schema": [{"id": f.id, "name": f.name, "type": f.type.to_paimon_string(),
                            "required": not f.type.nullable} for f in schema.struct.fields],
                "partition_spec": [str(f) for f in t.spec().fields],
                "properties": t.properties, "snapshots": len(t.snapshots()),
                "current_snapshot": None if cur is None else _snapshot_dict(cur)}
        if args.json:
            print_json(info)
            return 0
        for k in ("name", "location", "format_version", "metadata", "snapshots"):
            print(f"{k:16s} {info[k]}")
        if cur is not None:
            print(f"{'current':16s} {cur.snapshot_id} ({cur.operation}, {_ms(cur.timestamp_ms)}, "
                  f"{cur.summary.get('total-records', '?')} records)")
        print(f"{'partitioning':16s} {', '.join(info['partition_spec']) or 'unpartitioned'}")
        print("\nschema")
        print_table([[f["id"], f["name"], f["type"], "required" if f["required"] else ""] for f in info["schema"]],
                    ["id", "name", "type", ""])
        if info["properties"]:
            print("\nproperties")
            print_table(sorted(info["properties"].items()), ["key", "value"])
        return 0
    if sub == "history":
        rows = [{"timestamp": _ms(e.timestamp_ms), "snapshot_id": e.snapshot_id} for e in t.history()]
        if args.json:
            print_json(rows)
        else:
            print_table([list(r.values()) for r in rows], ["timestamp", "snapshot_id"])
        return 0
    if sub == "snapshots":
        snaps = [_snapshot_dict(s) for s in t.snapshots()]
        if args.json:
            print_json(snaps)
        else:
            print_table([[s["snapshot_id"], s["parent_id"], s["sequence_number"], s["timestamp"], s["operation"],
                          s["summary"].get("added-records", ""), s["summary"].get("total-records", "")]
                         for s in snaps],
                        ["snapshot_id", "parent", "seq", "timestamp", "operation", "added", "total"])
        return 0
    if sub == "files":
        kinds = {0: "data", 1: "position-deletes", 2: "equality-deletes"}
        entries = list(t.data_files(args.snapshot_id)) + list(t.delete_files(args.snapshot_id))
        rows = []
        for e in entries:
            df = getattr(e, "data_file", e)
            rows.append({"content": kinds.get(df.content, str(df.content)), "path": df.file_path,
                         "format": df.file_format, "records": df.record_count, "bytes": df.file_size_in_bytes,
                         "partition": list(df.partition) if df.partition is not None else []})
        if args.json:
            print_json(rows)
        else:
            print_table([[r["content"], r["format"], r["records"], r["bytes"], r["partition"], r["path"]]
                         for r in rows], ["content", "format", "records", "bytes", "partition", "path"])
        return 0
    if sub == "scan":
        tt = {}
        if args.snapshot_id is not None:
            tt["snapshot_id"] = args.snapshot_id
        if args.as_of:
            tt["as_of"] = int(args.as_of) if args.as_of.isdigit() else args.as_of
        if args.ref:
            tt["ref"] = args.ref
        scan = t.scan(filter=args.filter, columns=_columns(args.columns), **tt)
        if args.count:
            print(scan.count())
            return 0
        tasks = scan.plan_files()
        reader = scan.task_reader()
        limit = args.limit if args.limit and args.limit > 0 else None
        import pyarrow as pa
        batches, n = [], 0
        with Progress(len(tasks), "scan") as bar:
            for task in tasks:
                for b in reader.read_task(task):
                    batches.append(b)
                    n += b.num_rows
                    if limit is not None and n >= limit:
                        break
                bar.update()
                if limit is not None and n >= limit:
                    break
        tbl = pa.Table.from_batches(batches, schema=reader.output_schema) if batches else \
            reader.output_schema.empty_table()
        if limit is not None:
            tbl = tbl.slice(0, limit)
        _print_rows(tbl, args.json)
        return 0
    raise InvalidArgumentError(f"unknown table command {sub!r}")


def cmd_catalog(args) -> int:
    cat = _catalog(args)
    out = []
    for ns in cat.list_namespaces():
        for ident in cat.list_tables(ns):
            out.append({"namespace": ".".join(ns), "table": ".".join(ident)})
        if not any(o["namespace"] == ".".join(ns) for o in out):
            out.append({"namespace": ".".join(ns), "table": None})
    if args.json:
        print_json(out)
    else:
        print_table([[o["namespace"], o["table"]] for o in out], ["namespace", "table"])
    return 0


def cmd_serve(args) -> int:
    from .rest.server import serve
    from .catalog.filesystem import FileSystemCatalog
    from .catalog.sql import SqlCatalog
    io = _file_io(args)
    if args.catalog.startswith("sqlite:"):
        cat = SqlCatalog(args.catalog_name, uri=args.catalog, warehouse=args.warehouse, io=io)
    else:
        cat = FileSystemCatalog(args.warehouse or args.catalog, io=io)
    print(f"serving {args.catalog} on http://{args.host}:{args.port}", file=sys.stderr)
    serve(cat, args.host, args.port, token=args.token, prefix=args.prefix, credential=args.credential)
    return 0


def check_args(args):
    """A usage problem argparse cannot see (options that only make sense together), or None."""
    if args.command == "serve" and args.credential and not args.token:
        return "--credential needs --token (the token it hands out)"
    if args.command == "catalog" and not (args.uri or args.warehouse):
        return "catalog list needs --uri (SQLite catalog) or --warehouse (file-system catalog)"
    if args.command == "table" and args.table_command == "expire" and args.snapshot_ids and \
            args.older_than_hours is not None:
        return "give either --snapshot-id or --older-than-hours, not both"
    return None


def run_command(args) -> int:
    return {"inspect": cmd_inspect, "cat": cmd_cat, "table": cmd_table, "catalog": cmd_catalog,
            "serve": cmd_serve}[args.command](args)
