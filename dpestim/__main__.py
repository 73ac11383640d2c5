"""Entry point of ``python -m dpestim`` (the demo)."""

import sys

from ._demo import main

if __name__ == "__main__":
    sys.exit(main())
