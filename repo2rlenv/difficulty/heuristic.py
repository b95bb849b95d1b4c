"""A guessed difficulty when no model has tried the task, always marked `heuristic`.

Three signals read from the task folder: how many lines the reference change adds or
removes against the start state (from solve.sh's file writes, as our bundle writer
emits them; other scripts count their own lines), how many files it touches, and how
many hidden tests the verifier runs. They combine into one effort score:

    effort = changed_lines + 20 * (files - 1, at least 0) + 3 * tests

easy: effort <= 30; medium: <= 120; hard: above. Only attempts can show `trivial` or
`unsolved`, so a heuristic label is never one of those. It is a prior, not a
measurement: `repo2rlenv difficulty --model` replaces it with a solve-rate label.
"""

from __future__ import annotations

import difflib
import re
import shlex
from pathlib import Path

from schemas import DifficultyBand, DifficultyLabel

EASY_MAX, MEDIUM_MAX = 30, 120
FILE_WEIGHT, TEST_WEIGHT = 20, 3
_WRITE = re.compile(r"^cat (>>?) (.+?) <<-?(['\"]?)([A-Za-z0-9_]+)\3$")
_REMOVE = re.compile(r"^rm -f -- (.+)$")
_BOILERPLATE = re.compile(r"^(#!|set -|cd |mkdir -p|truncate -s)")
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def (test\w*)\s*\(", re.MULTILINE)
_VERIFIER_PLUMBING = {"test.sh", "grade.py", "grade_swebench.py"}
_NOT_TESTS = {"protected", "vendor"}
"""Under tests/: copies of visible tests, and the verifier's copy of swebench's modules
(whose `test_passed` is no test)."""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _changed(old: str, new: str) -> int:
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))


def reference_change(task_dir: Path) -> tuple[int, int]:
    """(changed lines, files touched) of solution/solve.sh against environment/workspace."""
    lines = _read(task_dir / "solution" / "solve.sh").splitlines()
    workspace = task_dir / "environment" / "workspace"
    changed, files, loose, i = 0, set(), 0, 0
    while i < len(lines):
        line = lines[i]
        write, remove = _WRITE.match(line), _REMOVE.match(line)
        if write:
            path, delimiter = _unquote(write.group(2)), write.group(4)
            end = next((j for j in range(i + 1, len(lines)) if lines[j] == delimiter), len(lines))
            body = lines[i + 1 : end]
            if write.group(1) == ">>":  # appended: every line is new
                changed += sum(1 for line in body if line.strip())
            else:
                changed += _changed(_read(workspace / path), "\n".join(body))
            files.add(path)
            i = end + 1
            continue
        if remove:
            path = _unquote(remove.group(1))
            changed += len(_read(workspace / path).splitlines())
            files.add(path)
        elif line.strip() and not _BOILERPLATE.match(line):
            loose += 1
        i += 1
    return changed + loose, len(files)


def _unquote(text: str) -> str:
    try:
        parts = shlex.split(text)
    except ValueError:
        return text
    return parts[0] if parts else text


def hidden_tests(task_dir: Path) -> int:
    """Test functions under tests/ (not the protected copies of visible tests, nor the
    verifier's own modules); a verifier script with no test function counts as one check."""
    tests = task_dir / "tests"
    count, scripts = 0, 0
    for path in sorted(tests.rglob("*.py")) if tests.is_dir() else []:
        if _NOT_TESTS & set(path.relative_to(tests).parts) or path.name in _VERIFIER_PLUMBING:
            continue
        found = len(_TEST_DEF.findall(_read(path)))
        count += found
        scripts += not found
    return count or min(scripts, 1)


def signals(task_dir: Path) -> dict[str, int]:
    changed, files = reference_change(Path(task_dir))
    return {"changed_lines": changed, "files": files, "tests": hidden_tests(Path(task_dir))}


def effort(found: dict[str, int]) -> int:
    return (
        found["changed_lines"]
        + FILE_WEIGHT * max(found["files"] - 1, 0)
        + TEST_WEIGHT * found["tests"]
    )


def heuristic_band(found: dict[str, int]) -> DifficultyBand:
    score = effort(found)
    return "easy" if score <= EASY_MAX else "medium" if score <= MEDIUM_MAX else "hard"


def heuristic_label(task_dir: Path) -> DifficultyLabel:
    found = signals(task_dir)
    return DifficultyLabel(label=heuristic_band(found), source="heuristic", signals=found)
