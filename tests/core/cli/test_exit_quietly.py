"""A Ctrl+C while Python shuts down after a command has ended (torch's finalizers run at exit)
printed a traceback and killed ``glocalkd`` by the signal instead of its exit status."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def test_a_ctrl_c_while_the_program_shuts_down_is_ignored(tmp_path):
    data = tmp_path / "m.smi"
    data.write_text("CCO a\nCCN b\n")
    program = ("import atexit, os, signal, sys\n"
               "atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))  # runs last, as Python shuts down\n"
               f"sys.argv = ['glocalkd', 'info', {str(data)!r}]\n"
               "import runpy\n"
               "runpy.run_module('core', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert "2 graphs" in done.stdout + done.stderr


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_stop_while_torch_loads_ends_the_command_in_one_line(tmp_path, signal_name):
    """A Ctrl+C in the first second or so of any command (torch loading, as ``set_threads`` sets its
    threads) printed a 40-line traceback, and a SIGTERM killed the program by the signal: the
    signal is sent here from inside ``set_threads``, where torch loads."""
    data = tmp_path / "m.smi"
    data.write_text("CCO a\nCCN b\n")
    program = ("import os, signal, sys, time\n"
               "import core.runtime.threads as threads\n"
               "def arriving(*args):\n"
               f"    os.kill(os.getpid(), signal.{signal_name})\n"
               "    time.sleep(5)  # the signal lands while torch would be loading\n"
               "    return 1\n"
               "threads.quota_bound_threads = arriving\n"
               f"sys.argv = ['glocalkd', 'info', {str(data)!r}]\n"
               "import runpy\n"
               "runpy.run_module('core', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
