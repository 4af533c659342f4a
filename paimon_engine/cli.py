"""Command line: paimon-engine (also python -m paimon_engine).

Exit codes: 0 success; 1 the command could not be done (missing file or table, corrupt file, bad filter, I/O
error), reported as one line on stderr; 2 the command line itself is wrong (argparse usage message).
"""

from __future__ import annotations

import argparse
import sys

from .errors import CorruptFileError, NotFoundError, PaimonEngineError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

DESCRIPTION = """\
Inspect Paimon .row files, file indexes and deletion vectors; read, append to
and maintain Iceberg-style tables in a file-system or SQLite catalog."""

EXIT_CODES = """\
exit codes:
  0  success
  1  the command failed: file or table not found, corrupt file, bad filter,
     I/O error (one line "paimon-engine: error: ..." on stderr)
  2  usage error: unknown command or option, missing or malformed argument
"""

MAIN_EPILOG = """\
examples (after "paimon-engine demo", which writes ./warehouse):
  paimon-engine inspect warehouse/demo.row
  paimon-engine catalog list --uri sqlite:///warehouse/tables-demo/catalog.db
  paimon-engine table scan db.orders \\
      --uri sqlite:///warehouse/tables-demo/catalog.db \\
      --filter "qty = 7" --limit 5

Run "paimon-engine COMMAND --help" for a command's options and an example.

""" + EXIT_CODES


def version() -> str:
    """The installed distribution's version (the package's own when it runs from a source tree)."""
    try:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as _dist_version
        return _dist_version("paimon_engine")
    except PackageNotFoundError:
        from . import __version__
        return __version__


def command_parser(sub, name, help, description, example, epilog=""):
    """A sub-command parser whose help is plain text: a description, then an example and the exit codes."""
    text = "example:\n" + "\n".join("  " + line for line in example.strip("\n").splitlines()) + "\n"
    if epilog:
        text += "\n" + epilog.strip("\n") + "\n"
    return sub.add_parser(name, help=help, description=description, epilog=text + "\n" + EXIT_CODES,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def _build_parser():
    parser = argparse.ArgumentParser(prog="paimon-engine", description=DESCRIPTION, epilog=MAIN_EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"paimon-engine {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = command_parser(
        sub, "demo", "run the quickstart tour on a local warehouse",
        "Run the quickstart tour: writes a .row file and two tables under the warehouse\n"
        "directory and prints what each step did and how long it took.",
        "paimon-engine demo --warehouse warehouse")
    demo.add_argument("--warehouse", default="warehouse", help="warehouse directory (default ./warehouse)")
    command_parser(sub, "kernels", "show which kernel implementation is live",
                   "Print each kernel and whether its compiled (cython) or pure-Python (python)\n"
                   "implementation is in use.",
                   "paimon-engine kernels")
    from .cli_commands import add_commands
    add_commands(sub, command_parser)
    return parser


def _one_line(exc) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, NotFoundError) and "not found" not in text and "does not exist" not in text:
        text = "not found: " + text
    elif isinstance(exc, CorruptFileError) and "corrupt" not in text.lower():
        text = "corrupt file: " + text
    return text


def main(argv=None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    from .cli_commands import COMMANDS, check_args, run_command
    problem = check_args(args)
    if problem:
        parser.error(problem)
    try:
        if args.command in COMMANDS:
            return run_command(args)
        if args.command == "demo":
            from .demo import run
            return run(args.warehouse)
        if args.command == "kernels":
            from . import _speedups
            for name, impl in _speedups.report().items():
                print(f"{name}\t{impl}")
            return EXIT_OK
    except BrokenPipeError:
        # The reader (head, less) went away: stop quietly; stdout now points at /dev/null so the interpreter's
        # final flush has nowhere to fail.
        import os
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        finally:
            os.close(devnull)
        return EXIT_OK
    except KeyboardInterrupt:
        print("paimon-engine: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (PaimonEngineError, OSError, ValueError) as exc:
        # Engine errors, I/O errors and malformed input (pyarrow's ArrowInvalid is a ValueError) are the
        # user's to fix: one line, no traceback.
        print(f"paimon-engine: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # not reached: parser.error exits
