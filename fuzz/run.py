"""``make fuzz``: run every fuzz target for a time or a count, one target at a time, each in its own process.

    python -m fuzz.run [--targets a,b] [--seconds S | --runs N] [--engine auto|atheris|hypothesis]
                       [--findings DIR] [--memory-mb MB] [--timeout S] [--pure]

Each target runs in a child process with its address space capped (``RLIMIT_AS``), so an absurd allocation
raises ``MemoryError`` (a finding) instead of taking the machine. The child copies every input into a small shared
file before running it; when the child hangs (no input finishes within ``--timeout`` seconds) or dies (a signal,
libFuzzer's time or memory limit), the parent saves that input as the finding. Any exception other than a
``PaimonEngineError`` is a finding; each distinct one (exception class and the innermost frame in the package) is
saved once as ``<findings>/<target>/<sha1>.bin`` with a ``.txt`` beside it saying what it raised.

Engines: ``atheris`` (coverage-guided libFuzzer; the package's Python code is instrumented, compiled kernels are
not, so ``--pure`` fuzzes with the kernels' pure-Python twins to guide on their branches too) and ``hypothesis``
(random bytes and mutations of the seeds; used when atheris is not installed). Seeds come from
:mod:`fuzz.seeds`; the working corpus lives under ``build/fuzz/``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import mmap
import os
import signal
import struct
import subprocess
import sys
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(REPO, "build", "fuzz")
DEFAULT_FINDINGS = os.path.join(REPO, "tests", "data", "fuzz")
MAX_LEN = 16384
# shared state: runs, ok, rejected, findings (unique), finding inputs, current input length; then the input
_HEAD = struct.Struct("<6q")
STATE_SIZE = _HEAD.size + MAX_LEN


# ---------------------------------------------------------------------------
# child
# ---------------------------------------------------------------------------

class _InputTimeout(BaseException):
    """Raised by the alarm inside a slow input (a BaseException, so no decoder's ``except Exception`` hides it)."""


def signature(exc) -> str:
    """Exception class and the innermost frame inside the package (or the innermost frame at all)."""
    frames = traceback.extract_tb(exc.__traceback__)
    inner = [f for f in frames if os.sep + "paimon_engine" + os.sep in f.filename] or \
        [f for f in frames if f.filename.startswith(REPO + os.sep)] or frames
    where = f"{os.path.relpath(inner[-1].filename, REPO)}:{inner[-1].lineno}" if inner else "?"
    return f"{type(exc).__name__} at {where}"


def save_finding(findings_dir, target, data: bytes, kind: str, detail: str) -> str:
    d = os.path.join(findings_dir, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name + ".bin"), "wb") as f:
        f.write(data)
    with open(os.path.join(d, name + ".txt"), "w") as f:
        f.write(f"{kind}\n{detail}\n")
    return name


def _known_signatures(findings_dir, target):
    d = os.path.join(findings_dir, target)
    out = set()
    if os.path.isdir(d):
        for n in os.listdir(d):
            if n.endswith(".txt"):
                with open(os.path.join(d, n)) as f:
                    out.add(f.readline().strip())
    return out


class _Child:
    def __init__(self, args):
        from . import targets as TG
        self.TG = TG
        self.target = args.child
        self.fn = TG.TARGETS[self.target]
        self.findings_dir = args.findings
        self.timeout = args.timeout
        fd = os.open(args.state, os.O_RDWR)
        self.state = mmap.mmap(fd, STATE_SIZE)
        os.close(fd)
        self.counts = list(_HEAD.unpack_from(self.state, 0))
        self.seen = _known_signatures(self.findings_dir, self.target)

    def one(self, data: bytes):
        data = bytes(data[:MAX_LEN])
        c = self.counts
        c[0] += 1
        c[5] = len(data)
        _HEAD.pack_into(self.state, 0, *c)
        self.state[_HEAD.size:_HEAD.size + len(data)] = data
        kind = "ok"
        try:
            self.fn(data)
        except self.TG.PaimonEngineError:
            kind = "rejected"
        except _InputTimeout:
            self._finding(data, "hang", f"no result within {self.timeout} s")
            kind = None
        except Exception as exc:   # the thing being looked for
            self._finding(data, signature(exc),
                          f"{type(exc).__name__}: {str(exc)[:500]}\n\n" + "".join(traceback.format_exception(exc)))
            kind = None
        if kind == "ok":
            c[1] += 1
        elif kind == "rejected":
            c[2] += 1
        _HEAD.pack_into(self.state, 0, *c)

    def _finding(self, data, sig, detail):
        self.counts[4] += 1
        if sig in self.seen:
            return
        self.seen.add(sig)
        self.counts[3] += 1
        name = save_finding(self.findings_dir, self.target, data, sig, detail)
        sys.stderr.write(f"\nFINDING {self.target}/{name}.bin: {sig}\n")


def _limit_memory(mb):
    import resource
    limit = mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _seeds(args):
    out = []
    for d in args.corpus:
        if os.path.isdir(d):
            for n in sorted(os.listdir(d)):
                with open(os.path.join(d, n), "rb") as f:
                    out.append(f.read()[:MAX_LEN])
    return out or [b""]


def _warm(child, seeds):
    # import everything the target touches lazily before the memory cap and the instrumentation
    for s in seeds:
        child.TG.outcome(child.target, s)


def run_child(args):
    import pyarrow as pa
    # one input at a time: Arrow's thread pools only add hand-offs (PAIMON_ENGINE_THREADS=1 does the same for ours)
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    seeds = _seeds(args)
    if args.engine == "atheris":
        import atheris
        # instrument the package only (and everything it imports lazily while the seeds run once)
        with atheris.instrument_imports(include=["paimon_engine"]):
            child = _Child(args)
            _warm(child, seeds)
        _limit_memory(args.memory_mb)
        argv = [sys.argv[0], f"-max_len={MAX_LEN}", f"-timeout={args.timeout}", f"-rss_limit_mb={args.memory_mb}",
                f"-artifact_prefix={os.path.join(WORK, 'artifacts', child.target)}-", "-print_final_stats=1"]
        if args.runs:
            argv.append(f"-runs={args.runs}")
        if args.seconds:
            argv.append(f"-max_total_time={args.seconds}")
        argv += args.corpus
        atheris.Setup(argv, child.one)
        atheris.Fuzz()
        return
    child = _Child(args)
    _warm(child, seeds)
    _limit_memory(args.memory_mb)
    _hypothesis_loop(child, seeds, args)


def _alarm(signum, frame):
    raise _InputTimeout()


def _hypothesis_loop(child, seeds, args):
    from hypothesis import HealthCheck, Phase, given, settings
    from .mutate import inputs
    signal.signal(signal.SIGALRM, _alarm)
    deadline = time.monotonic() + args.seconds if args.seconds else None
    runs_left = [args.runs or 0]

    class _Done(BaseException):
        pass

    @settings(max_examples=10**9, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(inputs(seeds, MAX_LEN))
    def fuzz_one(data):
        if (deadline is not None and time.monotonic() > deadline) or \
                (args.runs and runs_left[0] <= 0):
            raise _Done()
        runs_left[0] -= 1
        signal.setitimer(signal.ITIMER_REAL, args.timeout)
        try:
            child.one(data)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    for s in seeds:
        child.one(s)
    while True:
        try:
            fuzz_one()
        except _Done:
            return


# ---------------------------------------------------------------------------
# parent
# ---------------------------------------------------------------------------

def _engine(choice):
    if choice != "auto":
        return choice
    try:
        import atheris  # noqa: F401
        return "atheris"
    except ImportError:
        return "hypothesis"


def _prepare_seeds(targets):
    from .seeds import write_seeds
    seed_dir = os.path.join(WORK, "seeds")
    missing = [t for t in targets if not os.path.isdir(os.path.join(seed_dir, t))]
    if missing:
        write_seeds(seed_dir, missing)
    return seed_dir


def _read_state(path):
    with open(path, "rb") as f:
        raw = f.read()
    head = _HEAD.unpack_from(raw, 0)
    return head, raw[_HEAD.size:_HEAD.size + head[5]]


def fuzz_target(target, args, engine, seed_dir):
    """Run one target until its time or count is spent; -> stats dict."""
    os.makedirs(os.path.join(WORK, "artifacts"), exist_ok=True)
    corpus = os.path.join(WORK, "corpus", target)
    os.makedirs(corpus, exist_ok=True)
    state = os.path.join(WORK, target + ".state")
    with open(state, "wb") as f:
        f.write(b"\0" * STATE_SIZE)
    log_path = os.path.join(WORK, target + ".log")
    start = time.monotonic()
    extra_findings = 0
    restarts = 0
    env = dict(os.environ)
    if args.pure:
        env["PAIMON_ENGINE_PUREPYTHON"] = "1"
    env["PAIMON_ENGINE_THREADS"] = "1"
    while True:
        head, _ = _read_state(state)
        runs_done = head[0]
        remaining_s = args.seconds - (time.monotonic() - start) if args.seconds else None
        remaining_runs = args.runs - runs_done if args.runs else None
        if (remaining_s is not None and remaining_s <= 1) or (remaining_runs is not None and remaining_runs <= 0):
            break
        cmd = [sys.executable, "-m", "fuzz.run", "--child", target, "--state", state, "--engine", engine,
               "--findings", args.findings, "--memory-mb", str(args.memory_mb), "--timeout", str(args.timeout)]
        if remaining_s is not None:
            cmd += ["--seconds", str(int(remaining_s))]
        if remaining_runs is not None:
            cmd += ["--runs", str(remaining_runs)]
        cmd += ["--corpus", corpus, os.path.join(seed_dir, target)]
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
            last_runs, last_change = -1, time.monotonic()
            first_runs = _read_state(state)[0][0]   # until one more input runs, the child is starting up
            killed = None
            while proc.poll() is None:
                time.sleep(0.2)
                head, _ = _read_state(state)
                if head[0] != last_runs:
                    last_runs, last_change = head[0], time.monotonic()
                elif time.monotonic() - last_change > args.timeout + (5 if head[0] > first_runs else 300):
                    killed = "hang"
                    proc.kill()
                    proc.wait()
                elif remaining_s is not None and time.monotonic() - start > args.seconds + args.timeout + 30:
                    killed = "overrun"
                    proc.kill()
                    proc.wait()
        rc = proc.returncode
        if killed == "overrun":
            break
        if killed or rc != 0:
            head, data = _read_state(state)
            why = killed or (f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}")
            kind = "hang" if killed == "hang" or rc == 70 else ("out of memory" if rc == 71 else "crash")
            log = os.path.relpath(log_path, REPO)
            name = save_finding(args.findings, target, data, f"{kind} ({why})",
                                f"the fuzzing process stopped on this input: {why}; see {log}")
            sys.stderr.write(f"FINDING {target}/{name}.bin: {kind} ({why})\n")
            extra_findings += 1
            # count the input that stopped the process as run
            restarts += 1
            if restarts > args.max_restarts:
                break
            continue
        break
    head, _ = _read_state(state)
    elapsed = time.monotonic() - start
    return {"target": target, "engine": engine + (" (pure)" if args.pure else ""), "runs": head[0],
            "ok": head[1], "rejected": head[2], "findings": head[3] + extra_findings,
            "finding_inputs": head[4] + extra_findings, "seconds": round(elapsed, 1),
            "per_second": round(head[0] / elapsed, 1) if elapsed else 0.0}


def main(argv=None):
    from .targets import TARGETS
    p = argparse.ArgumentParser(prog="python -m fuzz.run", description=__doc__.splitlines()[0])
    p.add_argument("--targets", default="", help="comma-separated target names (default: all)")
    p.add_argument("--seconds", type=int, default=0, help="time per target")
    p.add_argument("--runs", type=int, default=0, help="inputs per target")
    p.add_argument("--engine", choices=("auto", "atheris", "hypothesis"), default="auto")
    p.add_argument("--findings", default=DEFAULT_FINDINGS, help="where findings go (<dir>/<target>/)")
    p.add_argument("--memory-mb", type=int, default=3072, help="address-space cap of the fuzzing process")
    p.add_argument("--timeout", type=int, default=10, help="seconds one input may take")
    p.add_argument("--pure", action="store_true", help="fuzz with the kernels' pure-Python twins")
    p.add_argument("--max-restarts", type=int, default=5, help="process restarts after a crash or hang")
    p.add_argument("--json", help="also write the per-target counts to this file")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--state", help=argparse.SUPPRESS)
    p.add_argument("--corpus", nargs="*", default=[], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.findings = os.path.abspath(args.findings)
    if args.child:
        run_child(args)
        return 0
    if not args.seconds and not args.runs:
        args.seconds = 60
    names = [t for t in args.targets.split(",") if t] or list(TARGETS)
    unknown = [t for t in names if t not in TARGETS]
    if unknown:
        p.error(f"unknown targets {unknown}; known: {', '.join(TARGETS)}")
    engine = _engine(args.engine)
    os.makedirs(WORK, exist_ok=True)
    seed_dir = _prepare_seeds(names)
    print(f"fuzzing {len(names)} targets with {engine}"
          f"{' (pure-Python kernels)' if args.pure else ''}, "
          f"{f'{args.seconds} s' if args.seconds else f'{args.runs} inputs'} each; findings -> {args.findings}")
    print(f"{'target':<24} {'inputs':>10} {'inputs/s':>9} {'ok':>9} {'rejected':>9} {'findings':>8}")
    results = []
    for t in names:
        r = fuzz_target(t, args, engine, seed_dir)
        results.append(r)
        print(f"{t:<24} {r['runs']:>10} {r['per_second']:>9} {r['ok']:>9} {r['rejected']:>9} {r['findings']:>8}",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    found = sum(r["findings"] for r in results)
    if found:
        print(f"{found} finding(s) saved under {args.findings}/<target>/ (logs in {WORK})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
