"""pytest (and `python -m unittest`): the runner the kinds were first written for.

Its recognition, summary reading and verifier are the ones that existed before the
registry (`shell.is_check`, `runners.summary`, `kinds.grading`); this module wraps them
so pytest is found the same way as every other runner, with unchanged behaviour.
"""

from __future__ import annotations

import re

from repo2rlenv.runners.base import Counts, VerifierSpec, program
from repo2rlenv.runners.summary import summary_counts
from repo2rlenv.shell import is_check

TEST_FILE = re.compile(r"(^|/)(test_[^/]*\.py|[^/]*_test\.py|conftest\.py)$")
VALUE_FLAGS = {
    "-k",
    "-m",
    "-p",
    "-c",
    "-o",
    "--rootdir",
    "--maxfail",
    "--tb",
    "-W",
    "--junitxml",
    "--basetemp",
    "--confcutdir",
    "--deselect",
    "--ignore",
}
CONFIGS = {"pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "conftest.py"}


def pytest_targets(words: list[str]) -> list[str]:
    """Paths/node ids a recorded pytest or unittest invocation selects ('.' for all)."""
    head = program(words[0])
    args = words[1:] if head in {"pytest", "py.test"} else words[3:]
    unittest = head.startswith("python") and words[2:3] == ["unittest"]
    targets: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in VALUE_FLAGS:
            skip = True
        elif arg.startswith("-") or (unittest and arg == "discover"):
            continue
        elif unittest and not arg.endswith(".py") and "/" not in arg:
            parts = arg.split(".")
            module = [p for p in parts if p and not p[0].isupper()]
            targets.append("/".join(module) + ".py" if module else arg)
        else:
            targets.append(arg)
    return targets or ["."]


class Pytest:
    name = "pytest"
    language = "python"

    def recognise(self, words: list[str]) -> list[str] | None:
        return words if is_check(words) else None

    def targets(self, words: list[str]) -> list[str]:
        return [t for t in pytest_targets(words) if t != "."]

    def counts(self, output: str | None) -> Counts | None:
        found = summary_counts(output)
        if found is None:
            return None
        return Counts(found["passed"], found["failed"] + found["error"], found["skipped"])

    def is_test_file(self, path: str) -> bool:
        return bool(TEST_FILE.search(path))

    def is_config_file(self, path: str) -> bool:
        return path.rsplit("/", 1)[-1] in CONFIGS

    def verifier(self) -> VerifierSpec | None:
        return None


RUNNER = Pytest()
