"""Thread pools for kernels that run without the GIL.

One pool per purpose (so a task on one pool never waits for a slot on the same pool), created on first use,
and created again in a process that was forked from the one that made it (a pool inherited through ``fork()``
has no threads). ``PAIMON_ENGINE_THREADS`` caps the threads of every pool (``1``: run on the calling thread);
without it a pool has as many threads as the process may use cores (at most 8): the CPUs of its affinity mask,
further limited by a cgroup CPU quota (a container or a Spark executor limited to 2 of 64 cores gets 2).
"""

from __future__ import annotations

import os
import threading

__all__ = ["thread_count", "usable_cpus", "parallel_map", "shared_map", "submit"]

_pools: dict = {}
_lock = threading.Lock()
_cpus: dict = {}  # pid -> usable_cpus() of that process

CGROUP_ROOT = "/sys/fs/cgroup"


def _cgroup_quota(root: str | None = None):
    """CPUs allowed by the cgroup CPU quota of this process (fractional quotas round up), or None when there is
    no quota or it cannot be read. cgroup v2 (``cpu.max``: ``"<quota> <period>"`` or ``"max <period>"``) first,
    then v1 (``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``, quota -1 for none)."""
    root = root or CGROUP_ROOT
    try:
        with open(os.path.join(root, "cpu.max")) as f:
            quota, period = f.read().split()[:2]
        if quota == "max":
            return None
        q, p = int(quota), int(period)
    except (OSError, ValueError):
        try:
            with open(os.path.join(root, "cpu", "cpu.cfs_quota_us")) as f:
                q = int(f.read())
            with open(os.path.join(root, "cpu", "cpu.cfs_period_us")) as f:
                p = int(f.read())
        except (OSError, ValueError):
            return None
    if q <= 0 or p <= 0:
        return None
    return max(1, -(-q // p))


def usable_cpus() -> int:
    """Cores this process may run on: its CPU affinity mask (``os.sched_getaffinity``) where the platform has
    one, else ``os.cpu_count()``, lowered to the cgroup CPU quota if one is set. Computed once per process."""
    pid = os.getpid()
    n = _cpus.get(pid)
    if n is None:
        try:
            n = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            n = os.cpu_count() or 1
        quota = _cgroup_quota()
        if quota is not None:
            n = min(n, quota)
        n = max(1, n)
        _cpus.clear()
        _cpus[pid] = n
    return n


def thread_count() -> int:
    """Threads a pool may use: ``PAIMON_ENGINE_THREADS`` if set, else :func:`usable_cpus`, at most 8."""
    env = os.environ.get("PAIMON_ENGINE_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    return max(1, min(usable_cpus(), 8))


def parallel_map(purpose: str, fn, items) -> list:
    """``[fn(x) for x in items]``, on the ``purpose`` pool when there is more than one item and more than one
    thread: the calling thread runs the first item itself (it already has a core; handing every item to the pool
    would leave it waiting while a pool thread waits to be scheduled), the pool the others. Results come back in
    order; the first exception (in item order) is raised after all calls end."""
    items = list(items)
    if len(items) <= 1 or thread_count() <= 1:
        return [fn(x) for x in items]
    pool = _pool(purpose)
    futures = [pool.submit(fn, x) for x in items[1:]]
    results, first = [], None
    try:
        results.append(fn(items[0]))
    except BaseException as e:  # noqa: BLE001 - re-raised below, after every call has ended
        results.append(None)
        first = e
    for f in futures:
        try:
            results.append(f.result())
        except BaseException as e:  # noqa: BLE001 - re-raised below, after every call has ended
            results.append(None)
            first = first or e
    if first is not None:
        raise first
    return results


def shared_map(purpose: str, fn, items, threads: int | None = None) -> list:
    """``[fn(x) for x in items]`` with the items taken one at a time, in order, from one shared queue by the
    calling thread and by up to ``threads - 1`` (default :func:`thread_count`) tasks of the ``purpose`` pool.

    The calling thread never waits for a pool thread to be scheduled: it keeps taking items until none is left
    and then waits only for the items already started elsewhere; a pool task that starts after the queue is
    empty returns at once. On a machine whose other core is busy the call therefore costs about what the
    calling thread alone would. Results come back in item order. After an exception no further item is
    started; the exception of the first failing item (in item order) is raised once every started call has
    ended - the same one a sequential loop raises, since items are started in order."""
    items = list(items)
    n = len(items)
    helpers = min(n, thread_count() if threads is None else max(1, int(threads))) - 1
    if helpers <= 0:
        return [fn(x) for x in items]
    results = [None] * n
    errors = {}
    cond = threading.Condition()
    state = [0, 0, False]  # next item, items finished, stop

    def work():
        while True:
            with cond:
                i = state[0]
                if state[2] or i >= n:
                    return
                state[0] = i + 1
            try:
                results[i] = fn(items[i])
            except BaseException as e:  # noqa: BLE001 - re-raised by the caller, after every call has ended
                with cond:
                    errors[i] = e
                    state[2] = True
            with cond:
                state[1] += 1
                if state[1] == state[0]:
                    cond.notify_all()

    pool = _pool(purpose)
    for _ in range(helpers):
        pool.submit(work)
    work()
    with cond:
        while state[1] < state[0]:
            cond.wait()
    if errors:
        raise errors[min(errors)]
    return results


def submit(purpose: str, fn, *args):
    """``fn(*args)`` started on the ``purpose`` pool (on the calling thread when there is one thread); returns
    a ``concurrent.futures.Future``."""
    from concurrent.futures import Future
    if thread_count() <= 1:
        f = Future()
        try:
            f.set_result(fn(*args))
        except BaseException as e:  # noqa: BLE001 - handed to the caller through the future
            f.set_exception(e)
        return f
    return _pool(purpose).submit(fn, *args)


def _pool(purpose):
    pid = os.getpid()
    with _lock:
        entry = _pools.get(purpose)
        if entry is None or entry[0] != pid:
            from concurrent.futures import ThreadPoolExecutor
            entry = (pid, ThreadPoolExecutor(thread_count(), thread_name_prefix=f"paimon-engine-{purpose}"))
            _pools[purpose] = entry
    return entry[1]
