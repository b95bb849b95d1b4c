"""Turning a recorded test command into what the verifier runs, and the `verifiable`
quality check on the tests it runs."""

from __future__ import annotations

import posixpath
import re

from repo2rlenv.kinds.common import Reject
from repo2rlenv.runners.pytest import VALUE_FLAGS, pytest_targets
from repo2rlenv.runners.summary import summary_counts

NETWORK = re.compile(
    r"^\s*(?:import|from)\s+(requests|httpx|urllib3|aiohttp|socket)\b"
    r"|urllib\.request|urlopen\(",
    re.MULTILINE,
)
CLOCK = re.compile(r"\b(?:datetime\.now|datetime\.today|date\.today|time\.time)\(")
RANDOM = re.compile(r"\brandom\.(?:random|randint|choice|shuffle|sample|uniform)\(")
SEEDED = re.compile(r"\b(?:random\.seed|np\.random\.seed|default_rng)\(")


def expected_passes(output: str | None) -> int:
    text = output or ""
    pytest = re.findall(r"(\d+) passed", text)
    if pytest:
        return int(pytest[-1])
    ran = re.findall(r"Ran (\d+) tests?", text)
    return int(ran[-1]) if ran and re.search(r"^OK\b", text, re.MULTILINE) else 0


FAILED_ID = re.compile(r"^(?:FAILED|ERROR) (\S+::\S+)", re.MULTILINE)
PASSED_ID = re.compile(r"^(\S+::\S+) PASSED\b", re.MULTILINE)


def same_tests_fail_then_pass(failing: str | None, passing: str | None) -> str | None:
    """Why two outputs do not show the same tests failing then passing (None when they
    do): both print a summary, the first has failures, the second none, both ran the
    same number of tests, and every test id the first names as failed the second names
    as passed when it lists ids (`-v`)."""
    before, after = summary_counts(failing), summary_counts(passing)
    if before is None or after is None:
        return "a run printed no test summary"
    if not before["failed"] + before["error"]:
        return "the failing run's summary shows no failure"
    if after["failed"] + after["error"] or not after["passed"]:
        return "the passing run's summary shows failures or no passes"
    if sum(before.values()) != sum(after.values()):
        return f"{sum(before.values())} tests ran, then {sum(after.values())}"
    passed_ids = set(PASSED_ID.findall(passing or ""))
    missing = [i for i in FAILED_ID.findall(failing or "") if passed_ids and i not in passed_ids]
    if missing:
        return f"{missing[0]} failed but is not among the tests that passed"
    return None


def check_verifiable(tests: dict[str, str], command: str) -> None:
    if re.search(r"\b(curl|wget|pip install|npm|\$RANDOM|date)\b", command):
        raise Reject("verifiable.command", f"check command depends on network/time: {command[:80]}")
    for path, text in tests.items():
        if NETWORK.search(text):
            raise Reject("verifiable.network", f"{path} uses the network")
        if CLOCK.search(text):
            raise Reject("verifiable.clock", f"{path} reads the clock")
        if RANDOM.search(text) and not SEEDED.search(text):
            raise Reject("verifiable.randomness", f"{path} uses unseeded randomness")


def relative_to(cwd: str, path: str) -> str:
    return posixpath.relpath(path, cwd or ".") if cwd else path


__all__ = [
    "VALUE_FLAGS",
    "check_verifiable",
    "expected_passes",
    "pytest_targets",
    "relative_to",
    "same_tests_fail_then_pass",
]
