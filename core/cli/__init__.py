"""The ``glocalkd`` command: one module per subcommand; argument parsing only."""
from core.cli.main import main

__all__ = ["main"]
