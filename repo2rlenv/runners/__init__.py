"""Test runners, registered in one place: each knows its command, its summary, its test
and config files, and how a verifier runs it (`base.TestRunner`).

Replay asks `detect` which runner a recorded command ran (package managers resolved
through the session's `package.json`); the kinds build a task around the runner the
passing run used. Adding a runner is one module and one entry in `RUNNERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from repo2rlenv.runners import cargo_test, go_test, jest, node_test, pytest, vitest
from repo2rlenv.runners.base import Counts, TestRunner, VerifierSpec
from repo2rlenv.runners.scripts import expand

RUNNERS: dict[str, TestRunner] = {
    "pytest": pytest.RUNNER,
    "vitest": vitest.RUNNER,
    "jest": jest.RUNNER,
    "node-test": node_test.RUNNER,
    "go-test": go_test.RUNNER,
    "cargo-test": cargo_test.RUNNER,
}


@dataclass(frozen=True)
class Detected:
    runner: TestRunner
    words: list[str]
    """The runner's own words (`vitest run a.test.ts`), package manager unwrapped."""
    script: str | None = None
    """The package.json script it ran through (`test`), None when called directly."""


def detect(
    words: list[str],
    package_json: Callable[[], str | None] | None = None,
    output: str | None = None,
) -> Detected | None:
    """The runner one simple command runs, or None. `package_json` gives the text of the
    package.json that `npm test` would read (called only when a script is named);
    `output`, the command's output, holds the script npm echoed when that is unknown.
    A script chaining two different runners is no one runner's run (None)."""
    found: list[Detected] = []
    for expanded, script in expand(words, package_json, output=output):
        for runner in RUNNERS.values():
            own = runner.recognise(expanded)
            if own is not None:
                found.append(Detected(runner, own, script))
                break
    if len({d.runner.name for d in found}) > 1:
        # `"test:frontend": "npm run test:unit && npm run test:component"` running
        # node --test then vitest: its output mixes two runners' results, and a test
        # of one would be verified with the other. No one runner ran it.
        return None
    return found[0] if found else None


__all__ = ["RUNNERS", "Counts", "Detected", "TestRunner", "VerifierSpec", "detect"]
