"""Runs one page's blocks in order in this (fresh) interpreter, in the current directory.

Usage: python run_page.py BLOCKS.json. Python blocks share one ``__main__`` namespace, as if pasted one after the
other; shell blocks run their commands with bash. Before each block a marker line goes to stdout and stderr so
the caller can show the failing block's own output. Exit status 1 when a block fails (its index in the marker).
"""
import json
import subprocess
import sys
import traceback
import types

MARKER = "\x1e@@block "


def _mark(index):
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
        stream.write(f"\n{MARKER}{index}\n")
        stream.flush()


def main(spec_path):
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    page_file = spec["page_file"]
    # A fresh __main__ module: the blocks see none of this script's names, and what they define pickles as
    # __main__ members (process pools, Spark) like in a pasted session.
    main_module = types.ModuleType("__main__")
    sys.modules["__main__"] = main_module
    namespace = main_module.__dict__
    for index, block in enumerate(spec["blocks"]):
        _mark(index)
        if block["kind"] == "python":
            source = "\n" * (block["line"] - 1) + block["code"]
            try:
                exec(compile(source, page_file, "exec"), namespace)
            except BaseException:
                traceback.print_exc()
                sys.stderr.flush()
                return 1
        else:
            for command in block["commands"]:
                sys.stdout.flush()
                sys.stderr.flush()
                done = subprocess.run(["bash", "-o", "pipefail", "-c", command])
                if done.returncode != 0:
                    print(f"command exited with status {done.returncode}: {command}", file=sys.stderr)
                    return 1
    return 0


if __name__ == "__main__":
    spec = sys.argv[1]
    sys.argv = [""]
    sys.exit(main(spec))
