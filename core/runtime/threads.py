"""Threads: how many CPUs this process may use, and how torch's CPU threads wait.

:func:`usable_cpus` counts the CPUs the process may run on (its affinity mask, capped by a cgroup
CPU quota such as ``docker --cpus=1.5``), which ``os.cpu_count()`` and torch's default do not see:
in a container allowed 1.5 of a 64-core machine's CPUs they would start 64 threads or workers.
The command's default ``--threads``, the screening workers and a local Dask cluster are sized by it.

torch's CPU threads wait for each other asleep, not spinning, in the desktop app, the command and
the tests.

OpenMP's threads spin for a while when they wait at the end of each parallel product. On
cores that other programs also use, a spinning thread holds a core that another thread of the
same product is waiting for; a desktop's cores are always shared. Measured on an AMD EPYC
with 2 cores (medians of interleaved runs in fresh processes):

- AIDS training epochs beside one other busy process: 0.80-0.97 s spinning, 0.48-0.51 s asleep
  (``GOMP_SPINCOUNT=10000``, a short spin: 0.65 s); with the cores to itself, 0.25-0.27 s and
  0.24-0.27 s.
- Screening 50,000 MOSES rows, whose parsing workers share the cores with scoring: 3,220-3,577/s
  spinning, 3,538-3,587/s asleep.
- But REDDIT-BINARY training epochs alone, three rounds: 3.41, 3.25 and 3.47 s spinning; 4.67,
  3.77 and 3.45 s asleep. Waking the threads for its many short parallel steps can cost.

On the project's shared 2-core machine (load average 4-6 from other users), AIDS training epochs
(``benchmarks/wait_policy_ab.py AIDS --epochs 4 --repeats 2``): spinning 1.59 and 2.36 s (medians),
asleep 0.78 and 0.82 s, a short spin 1.06 and 1.21 s. Cores are shared far more often than not,
so the app, the ``glocalkd`` command and the test suite (``tests/conftest.py``) set it; a user's
own ``OMP_WAIT_POLICY`` is kept (``ACTIVE`` for the REDDIT-like case on cores of its own). The
idle-machine comparison after this change was not measured (no idle machine was available).

OpenMP reads the setting once, when torch loads its runtime, so it is an environment variable set
before the first ``import torch``; the library never sets it on its own.
"""
from __future__ import annotations

import os
import sys


PER_CORE_LIMIT = 4  # threads or processes asked for per CPU core, at most: more only thrash (or crash torch)


def most_per_machine() -> int:
    """The most threads or worker processes a command may ask for here: ``PER_CORE_LIMIT`` per CPU core.

    Returns:
        The limit (at least ``PER_CORE_LIMIT``).
    """
    return PER_CORE_LIMIT * (os.cpu_count() or 1)


def wait_passively() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless it is set already, so torch's CPU threads wait asleep.

    Returns:
        Whether the setting could still take effect: False once torch is imported (OpenMP read it
        then); True otherwise, also when the user's own setting was kept.
    """
    if "torch" in sys.modules:
        return False
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return True


def usable_cpus(cgroup_root: str = "/sys/fs/cgroup", proc_cgroup: str = "/proc/self/cgroup") -> int:
    """Count the CPUs this process may use: its affinity mask, capped by its cgroup's CPU quota.

    The mask is ``taskset``'s or a container's cpuset; the quota (``docker --cpus``, Kubernetes
    limits) is rounded up; the answer is at least 1. ``os.cpu_count()`` counts the machine's CPUs,
    which a container may be allowed a fraction of.

    Args:
        cgroup_root: where the cgroup file systems are mounted.
        proc_cgroup: this process's cgroup membership (``/proc/self/cgroup``).

    Returns:
        The number of CPUs to size thread pools and worker pools by.
    """
    import math

    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        n = os.cpu_count() or 1
    quota = cgroup_cpu_quota(cgroup_root, proc_cgroup)
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)


def cgroup_cpu_quota(cgroup_root: str = "/sys/fs/cgroup", proc_cgroup: str = "/proc/self/cgroup") -> float | None:
    """This process's cgroup CPU quota in CPUs (quota / period), or None when there is none.

    Reads cgroup v2's ``cpu.max`` ("max 100000" or "150000 100000") or v1's ``cpu.cfs_quota_us``
    and ``cpu.cfs_period_us`` (quota -1: none), in the process's own cgroup and at the root.

    Args:
        cgroup_root: where the cgroup file systems are mounted.
        proc_cgroup: this process's cgroup membership.

    Returns:
        CPUs (may be fractional), or None.
    """
    from pathlib import Path

    root = Path(cgroup_root)
    v2_paths, v1_paths = [""], [""]
    try:
        for line in Path(proc_cgroup).read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "":
                v2_paths.insert(0, path.lstrip("/"))
            elif "cpu" in controllers.split(","):
                v1_paths.insert(0, path.lstrip("/"))
    except (OSError, ValueError):
        pass
    for path in v2_paths:
        try:
            quota, period = (root / path / "cpu.max").read_text().split()[:2]
        except (OSError, ValueError):
            continue
        return None if quota == "max" else int(quota) / int(period)
    for mount in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        for path in v1_paths:
            try:
                quota = int((root / mount / path / "cpu.cfs_quota_us").read_text())
                period = int((root / mount / path / "cpu.cfs_period_us").read_text())
            except (OSError, ValueError):
                continue
            return None if quota <= 0 or period <= 0 else quota / period
    return None


def quota_bound_threads() -> int:
    """Give the thread count a cgroup CPU quota calls for, when it is below what torch starts with.

    Returns:
        :func:`usable_cpus` where a cgroup quota makes it smaller than the affinity mask (the count
        torch and OpenMP start with), else 0: nothing to change, and torch need not be loaded to
        ask.
    """
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return 0
    usable = usable_cpus()
    return usable if usable < affinity else 0
