"""`python -m repo2rlenv`: the same as the `repo2rlenv` command."""

import sys

from repo2rlenv.cli import main

sys.exit(main())
