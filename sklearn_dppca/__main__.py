"""``python -m sklearn_dppca``: a private PCA report from a CSV or built-in data."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
