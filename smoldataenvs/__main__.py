"""`python -m smoldataenvs ARGS`: `repo2rlenv mine --only notebooks ARGS`, kept as a
short way in for notebook work (issue 33: one way in, one set of flags, exit codes and
errors). `mine` is found through its installed console script, as `mine` finds this
package through `rlenv_harvest.sources`: sources are peers and never import each other.

A flag of the former notebooks-only command is refused in one line that names its
replacement (exit 2), so an old script stops rather than mining with other settings."""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.metadata import entry_points

from repo2rlenv import ui

RENAMED = {"--no-reproduce": "--no-validate"}
EXIT_SETUP = 2


def mine_command() -> Callable[[list[str]], int]:
    """The `repo2rlenv` command's `main`, as installed (pyproject's `[project.scripts]`)."""
    (script,) = entry_points(group="console_scripts", name="repo2rlenv")
    return script.load()


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    for old, new in RENAMED.items():
        if old in args:
            ui.error(
                f"{old} is now {new} (python -m smoldataenvs is repo2rlenv mine --only notebooks)"
            )
            return EXIT_SETUP
    return mine_command()(["mine", *args, "--only", "notebooks"])


if __name__ == "__main__":
    sys.exit(main())
