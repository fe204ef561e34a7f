"""OpenMP's waiting is set to PASSIVE by the app before torch loads (core/threads.py)."""
import os
import subprocess
import sys
from pathlib import Path

import core

ROOT = Path(__file__).resolve().parents[3]


def _run(code: str, **env: str) -> list[str]:
    """``code`` in a fresh interpreter whose environment has no OMP_WAIT_POLICY unless given."""
    base = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**base, **env, "QT_QPA_PLATFORM": "offscreen"},
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_wait_passively_sets_the_policy_before_torch_only_and_keeps_the_users():
    probe = ("import os; from core.runtime.threads import wait_passively; took = wait_passively(); import torch; "
             "print(took, os.environ.get('OMP_WAIT_POLICY'), wait_passively())")
    assert _run(probe) == ["True", "PASSIVE", "False"]
    assert _run(probe, OMP_WAIT_POLICY="ACTIVE") == ["True", "ACTIVE", "False"]


def test_the_app_can_set_it_and_the_command_answers_help_without_torch():
    app = "import sys, app.main; print('torch' in sys.modules)"  # its main() sets it, then loads torch
    assert _run(app) == ["False"]
    command = ("import os, sys; from core.cli.main import main\n"
               "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
               "print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)")
    assert _run(command) == ["glocalkd", core.__version__, "None", "False"]  # no torch for --version
    info = ("import os, sys; from core.cli.main import main\n"
            "main(['info', 'resources/herg.tab'])\n"
            "print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)")
    assert _run(info)[-2:] == ["PASSIVE", "True"]  # set before torch loaded
    assert _run(info, OMP_WAIT_POLICY="ACTIVE")[-2:] == ["ACTIVE", "True"]  # the user's choice stays


def _cgroup(tmp_path, files: dict[str, str], membership: str) -> tuple[str, str]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "proc_cgroup").write_text(membership)
    return str(tmp_path), str(tmp_path / "proc_cgroup")


def test_a_cgroup_quota_caps_the_usable_cpus(tmp_path):
    from core.runtime.threads import cgroup_cpu_quota, usable_cpus

    affinity = len(os.sched_getaffinity(0))
    v2 = _cgroup(tmp_path / "v2", {"job/cpu.max": "50000 100000\n"}, "0::/job\n")
    assert cgroup_cpu_quota(*v2) == 0.5 and usable_cpus(*v2) == 1
    v2_wide = _cgroup(tmp_path / "v2w", {"cpu.max": "6400000 100000\n"}, "0::/\n")
    assert cgroup_cpu_quota(*v2_wide) == 64 and usable_cpus(*v2_wide) == affinity  # the mask binds
    unlimited = _cgroup(tmp_path / "v2m", {"job/cpu.max": "max 100000\n"}, "0::/job\n")
    assert cgroup_cpu_quota(*unlimited) is None and usable_cpus(*unlimited) == affinity
    v1 = _cgroup(tmp_path / "v1", {"cpu,cpuacct/job/cpu.cfs_quota_us": "150000\n",
                                   "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}, "4:cpu,cpuacct:/job\n")
    assert cgroup_cpu_quota(*v1) == 1.5 and usable_cpus(*v1) == min(2, affinity)
    v1_none = _cgroup(tmp_path / "v1n", {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"},
                      "2:cpu:/\n")
    assert cgroup_cpu_quota(*v1_none) is None
    assert cgroup_cpu_quota(str(tmp_path / "nothing"), str(tmp_path / "none")) is None


def test_the_commands_torch_threads_follow_a_quota():
    """Where a quota allows fewer CPUs than the mask, the command's torch threads follow it;
    --threads N still sets N."""
    code = ("import argparse, torch, core.runtime.threads as t\n"
            "t.usable_cpus = lambda *a, **k: 1\n"
            "from core.cli.options import set_threads\n"
            "set_threads(argparse.Namespace(threads=0)); print(torch.get_num_threads())\n"
            "set_threads(argparse.Namespace(threads=2)); print(torch.get_num_threads())\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["1", "2"]
