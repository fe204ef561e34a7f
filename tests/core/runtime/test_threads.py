"""OpenMP's waiting is set to PASSIVE by the app before torch loads (core/threads.py)."""
import os
import subprocess
import sys
from pathlib import Path

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
    assert _run(command) == ["glocalkd", "0.1.0", "None", "False"]  # OpenMP's default; no torch for --version
