"""Studies behind the product's choices: scripts run from the repository root with
``python -m research.<study>.<script>``. Not installed, never imported by ``core`` or ``app``."""
