"""``python -m core`` runs the ``glocalkd`` command line."""
import sys

from core.cli.main import main

sys.exit(main())
