"""Thread counts follow the cores the process may use."""
import os

import pytest

from paimon_engine import _parallel


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.delenv("PAIMON_ENGINE_THREADS", raising=False)
    _parallel._cpus.clear()
    yield
    _parallel._cpus.clear()


def _cgroup(tmp_path, v2=None, v1=None):
    if v2 is not None:
        (tmp_path / "cpu.max").write_text(v2)
    if v1 is not None:
        (tmp_path / "cpu").mkdir()
        (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text(v1[0])
        (tmp_path / "cpu" / "cpu.cfs_period_us").write_text(v1[1])
    return str(tmp_path)


def test_cgroup_v2_quota(tmp_path):
    assert _parallel._cgroup_quota(_cgroup(tmp_path, v2="200000 100000\n")) == 2
    assert _parallel._cgroup_quota(_cgroup(tmp_path, v2="150000 100000\n")) == 2  # 1.5 cores round up
    assert _parallel._cgroup_quota(_cgroup(tmp_path, v2="50000 100000\n")) == 1
    assert _parallel._cgroup_quota(_cgroup(tmp_path, v2="max 100000\n")) is None


def test_cgroup_v1_quota(tmp_path):
    assert _parallel._cgroup_quota(_cgroup(tmp_path, v1=("300000\n", "100000\n"))) == 3
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert _parallel._cgroup_quota(str(tmp_path)) is None


def test_no_cgroup_files_means_no_quota(tmp_path):
    assert _parallel._cgroup_quota(str(tmp_path)) is None
    (tmp_path / "cpu.max").write_text("garbage")
    assert _parallel._cgroup_quota(str(tmp_path)) is None


def test_affinity_and_quota_bound_the_pools(fresh, monkeypatch, tmp_path):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    monkeypatch.setattr(_parallel, "CGROUP_ROOT", _cgroup(tmp_path, v2="200000 100000"))
    assert _parallel.usable_cpus() == 2
    assert _parallel.thread_count() == 2


def test_affinity_mask_alone(fresh, monkeypatch, tmp_path):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {5}, raising=False)
    monkeypatch.setattr(_parallel, "CGROUP_ROOT", str(tmp_path))  # no quota files
    assert _parallel.usable_cpus() == 1
    assert _parallel.thread_count() == 1


def test_many_cores_are_capped_at_eight_and_the_variable_wins(fresh, monkeypatch, tmp_path):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    monkeypatch.setattr(_parallel, "CGROUP_ROOT", str(tmp_path))
    assert _parallel.thread_count() == 8
    monkeypatch.setenv("PAIMON_ENGINE_THREADS", "3")
    assert _parallel.thread_count() == 3


def test_shared_map_returns_results_in_order(monkeypatch):
    monkeypatch.setenv("PAIMON_ENGINE_THREADS", "2")
    assert _parallel.shared_map("test-shared-order", lambda x: x * x, range(50)) == [x * x for x in range(50)]
    assert _parallel.shared_map("test-shared-order", lambda x: x, []) == []


def test_shared_map_never_waits_for_a_pool_thread_that_has_not_started(monkeypatch):
    """Every pool thread is held up: the calling thread takes every item itself and returns."""
    import threading
    monkeypatch.setenv("PAIMON_ENGINE_THREADS", "2")
    release = threading.Event()
    pool = _parallel._pool("test-shared-held")
    held = [pool.submit(release.wait) for _ in range(2)]
    try:
        seen = []
        out = _parallel.shared_map("test-shared-held", lambda x: seen.append(threading.get_ident()) or -x,
                                   range(20))
        assert out == [-x for x in range(20)]
        assert set(seen) == {threading.get_ident()}
    finally:
        release.set()
        for f in held:
            f.result()


def test_shared_map_raises_the_first_failing_item_after_every_started_call_ends(monkeypatch):
    import threading
    monkeypatch.setenv("PAIMON_ENGINE_THREADS", "2")
    ended = []
    lock = threading.Lock()

    def fn(x):
        try:
            if x in (3, 7):
                raise ValueError(x)
            return x
        finally:
            with lock:
                ended.append(x)

    with pytest.raises(ValueError) as e:
        _parallel.shared_map("test-shared-error", fn, range(40))
    assert e.value.args == (3,)
    assert set(range(4)) <= set(ended)     # every item before the failing one ran
    # with the pool held up the calling thread runs alone: nothing is started after the failure
    release = threading.Event()
    pool = _parallel._pool("test-shared-error")
    held = [pool.submit(release.wait) for _ in range(2)]
    try:
        ended.clear()
        with pytest.raises(ValueError) as e:
            _parallel.shared_map("test-shared-error", fn, range(40))
        assert e.value.args == (3,)
        assert ended == [0, 1, 2, 3]
    finally:
        release.set()
        for f in held:
            f.result()
