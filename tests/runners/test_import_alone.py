"""Each layer imports on its own: `import repo2rlenv.runners` in a fresh interpreter
failed on a cycle (runners -> pytest runner -> replay -> runners) that the test suite
hid by importing replay first."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "module", ["repo2rlenv.runners", "repo2rlenv.replay", "repo2rlenv.kinds", "repo2rlenv.shell"]
)
def test_a_package_imports_first(module):
    command = [sys.executable, "-c", f"import {module}"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
