"""``python -m core`` runs the ``glocalkd`` command line."""
from core.cli.main import console

console()
