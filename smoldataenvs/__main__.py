"""`python -m smoldataenvs`: see `smoldataenvs.cli`."""

import sys

from smoldataenvs.cli import main

if __name__ == "__main__":
    sys.exit(main())
