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
