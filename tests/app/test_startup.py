"""Start-up settings the app makes before torch loads."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_PROBE = ("import os, sys; from app.main import wait_passively; took = wait_passively(); import torch; "
          "print(took, os.environ.get('OMP_WAIT_POLICY'), wait_passively())")


def _probe(**env: str) -> list[str]:
    base = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env={**base, **env},
                         capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_openmp_threads_wait_passively_unless_the_user_chose():
    assert _probe() == ["True", "PASSIVE", "False"]  # set before torch loads; too late after
    assert _probe(OMP_WAIT_POLICY="ACTIVE") == ["True", "ACTIVE", "False"]
