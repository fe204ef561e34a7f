"""``python -m core`` runs the ``glocalkd`` command line."""
import sys

from .cli import main

sys.exit(main())
