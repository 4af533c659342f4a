"""Replay saved inputs and print each one's outcome class as JSON: ``ok``, or the name of the error raised.

    python -m fuzz.replay TARGET FILE...

The replay test runs this in a child process with ``PAIMON_ENGINE_PUREPYTHON=1`` and compares the classes with
those of the compiled kernels.
"""
from __future__ import annotations

import json
import os
import sys

from .targets import outcome


def classify(target: str, data: bytes) -> str:
    kind, info = outcome(target, data)
    if kind == "ok":
        return "ok"
    if kind == "rejected":
        return info
    return "finding: " + type(info).__name__


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    target, files = argv[0], argv[1:]
    out = {}
    for path in files:
        with open(path, "rb") as f:
            out[os.path.basename(path)] = classify(target, f.read())
    from paimon_engine import _speedups
    json.dump({"implementation": _speedups.implementation(), "outcomes": out}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
