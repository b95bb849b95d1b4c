"""What every test runner provides, and the counts it reads from a run's output.

A runner is one module with one object satisfying `TestRunner`; the registry
(`repo2rlenv.runners.RUNNERS`) is the one place kinds and replay find it. A runner
never runs anything here: it reads command words (from `repo2rlenv.shell`), output
text and file paths, and it names the verifier command a task runs in its container.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Protocol

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TAIL = 64 * 1024
"""Summaries are printed last: only the end of a long output is searched."""


_LAUNCHER = re.compile(r"\.(?:cmd|exe|bat|ps1)$", re.IGNORECASE)


def program(word: str) -> str:
    """The program a command's first word names: its last path part, `/` or `\\` (a
    Windows session runs `node_modules\\.bin\\vitest.cmd run ...`), without the
    Windows launcher suffix npm writes beside each binary (`.cmd`, `.ps1`) or `.exe`."""
    return _LAUNCHER.sub("", re.split(r"[/\\]", word)[-1])


def plain(output: str | None) -> str:
    """The output's tail without colour codes (vitest and jest colour their summaries)."""
    return ANSI.sub("", (output or "")[-TAIL:])


@dataclass(frozen=True)
class Counts:
    """A run's test counts as the runner's own summary states them."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0

    @property
    def exit_status(self) -> int:
        """The status the runner gives for this outcome: 1 on any failure, 0 when tests
        passed, 5 (pytest's "no tests ran"; the JS runners give 1) when none ran."""
        if self.failed:
            return 1
        return 0 if self.passed else 5


@dataclass(frozen=True)
class VerifierSpec:
    """How a task's verifier runs this runner inside the container.

    `argv` is run from the tests' folder with a clean PATH; `{report}` in it is replaced
    by the report path and the targets are appended; `report` is the report format the
    grader reads (`jest-json`: jest's and vitest's JSON, `tap`: node --test's TAP)."""

    argv: tuple[str, ...]
    report: str
    canary_pass: str
    canary_fail: str
    config_pattern: str
    """A regular expression over workspace paths: the runner's config files, which the
    verifier deletes unless protected (an agent's `vitest.config.ts` that includes
    nothing)."""
    canary: str
    """Source of a test file with one test named `canary_pass` that passes and one
    named `canary_fail` that fails, in the runner's own language."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment of the run (`{tmp}`: a folder made fresh for each run, so a
    build cache the agent planted is never read); a runner that writes its report to
    stdout (`go-json`, `libtest`) has no `{report}` in `argv`."""
    name_flag: str = "-t"
    """The option that runs only tests whose name matches a regular expression (an
    extend task's tests appended to an existing file); ending in `=`, the pattern is
    joined to it in one word."""

    def name_filter(self, pattern: str) -> list[str]:
        if self.name_flag.endswith("="):
            return [self.name_flag + pattern]
        return [self.name_flag, pattern]


class TestRunner(Protocol):
    """One test runner: how to recognise it, read it, and run it in a verifier."""

    name: str
    language: str
    """`python`, `javascript`, `go` or `rust`: which images and kinds can use it."""

    def recognise(self, words: list[str]) -> list[str] | None:
        """The runner's own words (`vitest run a.test.ts`) when `words` (one simple
        command from the shell analyser, already resolved through a package manager)
        runs this runner, else None."""
        ...

    def counts(self, output: str | None) -> Counts | None:
        """Counts of the last summary the runner printed in `output`, or None."""
        ...

    def targets(self, words: list[str]) -> list[str]:
        """The test paths the recognised words select (empty: the runner's default)."""
        ...

    def is_test_file(self, path: str) -> bool: ...

    def is_config_file(self, path: str) -> bool:
        """A file that changes which tests run or how they pass: the verifier restores
        the protected copy and removes any the agent added."""
        ...

    def verifier(self) -> VerifierSpec | None:
        """How a verifier runs it; None: this runner's verifier lives elsewhere
        (pytest's `kinds.grading`)."""
        ...


def last_counts(text: str, patterns: list[tuple[re.Pattern[str], str]]) -> Counts | None:
    """The counts of the last block of summary lines: each pattern's last match gives the
    count its label names (`passed`, `failed`, `skipped`)."""
    found: dict[str, int] = {}
    for pattern, label in patterns:
        matches = pattern.findall(text)
        if matches:
            found[label] = int(matches[-1])
    if not found:
        return None
    return Counts(found.get("passed", 0), found.get("failed", 0), found.get("skipped", 0))


def bar_counts(line: str) -> dict[str, int]:
    """`1 failed | 5 passed | 2 skipped (8)` or `1 failed, 5 passed, 6 total` as a dict."""
    return {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|skipped|todo)", line)}


def js_bar_summary(tests_line: re.Pattern[str], output: str | None) -> Counts | None:
    """Counts from the last summary bar `tests_line` finds: jest's `Tests:` line and
    vitest's `Tests` line share one grammar, and a todo test ran no more than a skipped one."""
    matches = tests_line.findall(plain(output))
    if not matches:
        return None
    found = bar_counts(matches[-1])
    return Counts(
        found.get("passed", 0),
        found.get("failed", 0),
        found.get("skipped", 0) + found.get("todo", 0),
    )


JS_TEST_FILE = re.compile(
    r"(^|/)[^/]+\.(test|spec)\.[cm]?[jt]sx?$|(^|/)__tests__/[^/]+\.[cm]?[jt]sx?$"
)


JS_RELATIVE_IMPORT = re.compile(
    r"""(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*|^import\s+)['"](\.{1,2}/[^'"]+)['"]""", re.M
)
"""A relative module a JS/TS file imports (`from './slug.js'`, `require('../sum')`)."""
JS_SOURCE = re.compile(r"\.[cm]?[jt]sx?$")


def js_imports(path: str, text: str) -> set[str]:
    """Workspace paths (extension and `/index` dropped) that a JS/TS file at `path`
    imports relatively."""
    folder = path.rpartition("/")[0]
    found = set()
    for module in JS_RELATIVE_IMPORT.findall(text):
        target = JS_SOURCE.sub("", posixpath.normpath(posixpath.join(folder or ".", module)))
        found.add(target.removesuffix("/index"))
    return found


def js_option_value_flags(words: list[str], flags: set[str]) -> list[str]:
    """Positional words after the command, skipping flags and the values of `flags`."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in flags:
            skip = True
        elif not word.startswith("-"):
            out.append(word)
    return out


JS_TEST_CALL = re.compile(r"(?<![\w.$])(?:it|test)(?:\.\w+)*\s*\(")
JS_TEST_TITLE = re.compile(
    r"(?<![\w.$])(?:it|test)(?:\.(?:only|skip|todo|concurrent))?\s*\(\s*"
    r"(?:'([^'\\\n]*)'|\"([^\"\\\n]*)\"|`([^`\\$]*)`)"
)


def js_test_titles(text: str) -> list[str] | None:
    """The titles of the `it(...)`/`test(...)` calls of a JS/TS test file, in order;
    None when a call's title is not a plain string literal (a variable, an escape, a
    template with `${}`, `test.each`), so the file's tests cannot be named exactly."""
    titles = [a or b or c for a, b, c in JS_TEST_TITLE.findall(text)]
    return titles if len(titles) == len(JS_TEST_CALL.findall(text)) else None
