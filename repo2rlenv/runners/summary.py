"""A test run's outcome read from the runner's own summary line, for formats that record
no exit status (OpenAI-message exports, Claude Code `{messages, meta}` exports, code-mode
cells that printed only the output).

Only the two runners `repo2rlenv.shell.is_check` accepts are read, each in its own grammar:
pytest's final counts line ("1 failed, 229 passed in 3.10s", "no tests ran in 0.01s")
and unittest's "Ran N tests" block ending in "OK" or "FAILED (failures=N)". The result
is the exit status that runner gives for that outcome (0 passed, 1 failed, 5 pytest ran
nothing); callers mark it as inferred, never as recorded.
"""

from __future__ import annotations

import re

_TAIL = 64 * 1024
"""The summary is printed last: only the end of a long output is searched."""
PYTEST_COUNTS = re.compile(
    r"^[= \t]*(?P<counts>(?:\d+ (?:failed|passed|skipped|deselected|xfailed|xpassed|warnings?|"
    r"errors?|rerun)(?:, | )?)+)\s*in [\d.]+\s?(?:s|seconds)\b[^\n]*$",
    re.MULTILINE,
)
_PYTEST_NONE = re.compile(r"^[= \t]*no tests ran\b[^\n]* in [\d.]+\s?(?:s|seconds)\b", re.MULTILINE)
_COUNT = re.compile(r"(\d+) (failed|passed|errors?)")
UNITTEST = re.compile(
    r"^Ran (?P<ran>\d+) tests? in [\d.]+s[ \t]*\n\s*(?P<verdict>OK|FAILED|NO TESTS RAN)\b"
    r"(?: \((?P<details>[^)]*)\))?",
    re.MULTILINE,
)
COUNTED = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def inferred_exit(output: str | None) -> int | None:
    """The exit status the runner's last summary implies, or None when there is none."""
    if not output:
        return None
    tail = output[-_TAIL:]
    found: list[tuple[int, int]] = []  # (position, status)
    for match in PYTEST_COUNTS.finditer(tail):
        counts = {kind.rstrip("s"): int(n) for n, kind in _COUNT.findall(match.group("counts"))}
        if counts.get("failed") or counts.get("error"):
            found.append((match.start(), 1))
        elif counts.get("passed"):
            found.append((match.start(), 0))
        else:
            found.append((match.start(), 5))
    found += [(m.start(), 5) for m in _PYTEST_NONE.finditer(tail)]
    for match in UNITTEST.finditer(tail):
        verdict = match.group("verdict")
        if verdict == "OK" and int(match.group("ran")) > 0:
            found.append((match.start(), 0))
        elif verdict == "FAILED":
            found.append((match.start(), 1))
        else:
            found.append((match.start(), 5))
    if not found:
        return None
    statuses = [status for _, status in sorted(found)]
    # Several runs in one command (`pytest a; pytest b`): any failure fails the command.
    return 1 if 1 in statuses else statuses[-1]


def summary_counts(output: str | None) -> dict[str, int] | None:
    """Counts of the runner's last summary (pytest's "1 failed, 229 passed in 3.1s",
    unittest's "Ran 230 tests … FAILED (failures=1)"), or None when it printed none."""
    text = output or ""
    runs = [*PYTEST_COUNTS.finditer(text), *UNITTEST.finditer(text)]
    last = max(runs, key=lambda match: match.start(), default=None)
    if last is None:
        return None
    if last.re is PYTEST_COUNTS:
        pairs = re.findall(r"(\d+) (\w+)", last.group("counts"))
        counts = {kind.rstrip("s"): int(n) for n, kind in pairs}
        return {kind: counts.get(kind, 0) for kind in COUNTED}
    extra = dict(re.findall(r"(\w[\w ]*?)=(\d+)", last.group("details") or ""))
    failed, errors = int(extra.get("failures", 0)), int(extra.get("errors", 0))
    skipped = int(extra.get("skipped", 0))
    return {
        "passed": int(last.group("ran")) - failed - errors - skipped,
        "failed": failed,
        "error": errors,
        "skipped": skipped,
        "xfailed": int(extra.get("expected failures", 0)),
        "xpassed": int(extra.get("unexpected successes", 0)),
    }
