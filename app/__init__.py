"""GLocalKD Studio desktop app (PySide6): thin Qt views over the headless ``core`` package."""
