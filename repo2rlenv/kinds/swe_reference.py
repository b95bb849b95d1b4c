"""The reference of an instance-backed repair task: the run's submission without its
test files, as SWE-bench evaluates it.

SWE-bench applies the model's patch, then resets the files the instance's test patch
touches and applies the test patch over them: whatever the model did to those files
never counts. Agents often touch tests too (they add a regression test, or adjust one
the fix changes), and refusing such runs (`repair.tests-edited`) threw away resolved
runs. So the reference keeps the submission's other files and drops:

- every file the instance's test patch adds, changes, deletes or renames (SWE-bench
  overwrites them; here the verifier lays the hidden tests over them), and
- every file the project takes for a test file (`common.is_test_file`: `test_*.py`,
  `*_test.py`, `conftest.py`), as the session-derived repair kind does: a reference
  that rewrote a PASS_TO_PASS test would prove nothing. This is stricter than SWE-bench,
  which keeps a model's edits of test files outside the test patch.

The dropped paths are listed in the task's provenance (`[metadata.repo2rlenv.swe]
dropped_test_files`); the oracle still decides whether what is left resolves the
instance. A submission that changes nothing else has no reference at all.
"""

from __future__ import annotations

import re

from repo2rlenv.kinds.common import Reject, is_test_file

_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")

TESTS_ONLY = "instance.submission-only-tests"
"""The submission changes only test files: nothing is left to be a reference."""


def split_submission(
    changes: dict[str, str | None], test_patch_paths: set[str]
) -> tuple[dict[str, str | None], list[str]]:
    """(the reference's changes, the sorted paths dropped from it). Raises Reject
    (TESTS_ONLY) when every changed file is a test file."""
    dropped = sorted(p for p in changes if p in test_patch_paths or is_test_file(p))
    kept = {p: c for p, c in changes.items() if p not in dropped}
    if not kept:
        raise Reject(
            TESTS_ONLY,
            f"the submission changes only test files ({', '.join(dropped[:3])}): "
            "nothing is left for a reference once they are dropped",
        )
    return kept, dropped


def reference_part_size(diff: str) -> tuple[int, int]:
    """(changed lines, bytes) of a unified diff's sections on files that are not test
    files (`is_test_file`; the instance's own test-patch paths are not known here). A
    section's header lines count with it once its `+++` line names the file; a hunk's
    lines are taken by its `@@` counts, so a removed `-- comment` line (SQL) is not read
    as a header."""
    changed = size = header = 0
    keep = True
    old_left = new_left = 0
    for line in diff.splitlines(keepends=True):
        length = len(line.encode())
        if old_left > 0 or new_left > 0:  # inside a hunk
            kind = line[:1]
            old_left -= kind in (" ", "-", "\n", "")
            new_left -= kind in (" ", "+", "\n", "")
            if keep:
                changed += kind in ("+", "-")
                size += length
            continue
        counts = _HUNK.match(line)
        if counts:
            old_left, new_left = (int(n) if n is not None else 1 for n in counts.groups())
            size += length if keep else 0
        elif line.startswith("+++ "):
            path = line[4:].strip().split("\t", 1)[0]
            keep = not is_test_file(path.removeprefix("b/"))
            size += (header + length) if keep else 0
            header = 0
        else:  # `diff --git`, `index`, `--- `...: the coming section's header
            header += length
    return changed, size
