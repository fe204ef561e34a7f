"""Start GLocalKD Studio: ``python main.py [FILE]``."""
import sys

from app.main import main

if __name__ == "__main__":
    sys.exit(main())
