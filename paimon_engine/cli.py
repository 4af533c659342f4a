"""Command line: ``paimon-engine`` / ``python -m paimon_engine``."""

from __future__ import annotations

import argparse
import sys

from .errors import CorruptFileError, InvalidArgumentError, NotFoundError, PaimonEngineError, SchemaError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_CORRUPT = 4


def _build_parser():
    parser = argparse.ArgumentParser(prog="paimon-engine", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the quickstart tour on a local warehouse")
    demo.add_argument("--warehouse", default="warehouse", help="warehouse directory (default ./warehouse)")
    sub.add_parser("kernels", help="show which kernel implementation is live")
    from .cli_commands import add_commands
    add_commands(sub)
    return parser


def main(argv=None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        from .cli_commands import COMMANDS, run_command
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
    except NotFoundError as exc:
        print(f"paimon-engine: error: {exc}", file=sys.stderr)
        return EXIT_NOT_FOUND
    except CorruptFileError as exc:
        print(f"paimon-engine: error: {exc}", file=sys.stderr)
        return EXIT_CORRUPT
    except (InvalidArgumentError, SchemaError) as exc:
        print(f"paimon-engine: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except PaimonEngineError as exc:
        print(f"paimon-engine: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print("paimon-engine: interrupted", file=sys.stderr)
        return 130
    except FileNotFoundError as exc:
        print(f"paimon-engine: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"paimon-engine: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_USAGE
