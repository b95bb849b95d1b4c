"""extend, for a request whose new tests ran under a JavaScript runner (vitest, jest,
node --test) to a pass: the same task as pytest's extend (`kinds.extend`), in the
runner's terms.

The hidden tests are the test files the request created and the `it`/`test` blocks it
appended to a test file that existed (compared by title); the start state is the
workspace before the request, old test files included, with package.json, the lockfile
and the runner's config as they stood at the passing run (so the image installs what
the tests need, `kinds.node_image`); the reference is the request's code change. The
verifier (`kinds.grading_node`) runs the new files whole and the appended tests through
the runner's name filter, and counts only the new tests.

A new test that passes on the start state is not dropped here: JavaScript has no
reader of what a test reaches (`kinds.start_failing` reads Python), so the no-op trial
of `validate` is the proof, and a task whose start state scores above 0 is refused
there.
"""

from __future__ import annotations

import posixpath
from collections import Counter

from repo2rlenv.kinds.common import (
    Reject,
    SessionContext,
    check_has_no_secrets,
    known_files,
)
from repo2rlenv.kinds.grading_node import node_grading_files
from repo2rlenv.kinds.node_build import (
    check_js_verifiable,
    interface_note,
    is_built,
    js_controls,
    node_bundle,
    package_root,
)
from repo2rlenv.replay.replay import CommandRecord, Replay
from repo2rlenv.replay.workspace import FileState
from repo2rlenv.runners import RUNNERS
from repo2rlenv.runners.base import js_test_titles
from schemas import TaskBundle


def _added_titles(old: str, new: str, path: str) -> list[str]:
    """Titles of the tests in `new` beyond those of `old` (a title twice in `new` and
    once in `old` is added once); raises Reject when either file's tests cannot be named."""
    before, after = js_test_titles(old), js_test_titles(new)
    if before is None or after is None:
        raise Reject(
            "extend.tests-unnamed",
            f"{path}: a test's title is not a plain string, the new tests cannot be selected",
        )
    return sorted((Counter(after) - Counter(before)).elements())


def draft(
    replay: Replay,
    ctx: SessionContext,
    final: CommandRecord,
    *,
    position: int,
    start_index: int,
    request: str,
) -> TaskBundle:
    runner = RUNNERS[final.runner or ""]
    spec = runner.verifier()
    if spec is None:
        raise Reject("extend.runner-without-verifier", f"{runner.name} has no JS verifier")
    ws = replay.workspace
    before = ws.snapshot(start_index)
    end = ws.snapshot(final.index)
    root = package_root(end, final.cwd)
    changed = [p for p in ws.changed_between(start_index, final.index) if not is_built(p)]
    tests = [p for p in changed if runner.is_test_file(p) and end[p].status != "absent"]
    new_files, appended = _new_tests(before, end, tests)
    hidden_paths = sorted([*new_files, *appended])
    if any(end[p].status != "known" for p in hidden_paths):
        raise Reject("reconstructable.tests-unknown", "the new tests are not known in full")
    hidden = {p: end[p].content or "" for p in hidden_paths}
    controls = js_controls(end, root, runner, hidden)
    present = sorted(p for p in before if before[p].status != "absent" and not is_built(p))
    start = {**known_files(before, present), **controls}
    code = [p for p in changed if p not in hidden and p not in controls and p not in tests]
    code = [p for p in code if not runner.is_test_file(p)]
    if not code:
        raise Reject("extend.no-code-change", "no code changed for the request")
    changes: dict[str, str | None] = {
        **known_files(end, [p for p in code if end[p].status != "absent"]),
        **{p: None for p in code if end[p].status == "absent"},
    }
    protected = {
        **controls,
        **{p: c for p, c in start.items() if runner.is_test_file(p) and p not in hidden},
    }
    check_js_verifiable(hidden)
    check_has_no_secrets(
        {**start, **{p: c for p, c in changes.items() if c}, **hidden}, ctx.published
    )
    titles, expected = _counted_titles(hidden, new_files, appended)
    files = node_grading_files(
        runner=runner.name,
        spec=spec,
        mode="fraction",
        cwd=root,
        targets=[posixpath.relpath(p, root) if root else p for p in hidden_paths],
        expected=expected,
        protected=protected,
        hidden=hidden,
        titles=titles,
    )
    return node_bundle(
        ctx,
        replay,
        kind="extend",
        index=position,
        instruction=request + "\n\n" + interface_note(hidden, root, runner.name),
        start=start,
        tests=files,
        changes=changes,
        span=(start_index, final.index + 1),
        root=root,
        installs_from=controls,
    )


def _new_tests(
    before: dict[str, FileState], end: dict[str, FileState], tests: list[str]
) -> tuple[list[str], dict[str, list[str]]]:
    """The test files the request created, and the titles it appended to test files that
    existed, by file: they are the hidden tests, so a request that added none is refused."""
    new_files = [p for p in tests if before.get(p) is None or before[p].status == "absent"]
    appended: dict[str, list[str]] = {}
    for path in tests:
        old, new = before.get(path), end[path]
        if path in new_files or old is None or old.status != "known" or new.status != "known":
            continue
        titles = _added_titles(old.content or "", new.content or "", path)
        if titles:
            appended[path] = titles
    if not new_files and not appended:
        raise Reject("extend.no-new-tests", "the request added no test file and no test")
    return new_files, appended


def _counted_titles(
    hidden: dict[str, str], new_files: list[str], appended: dict[str, list[str]]
) -> tuple[list[str] | None, int]:
    """The titles the verifier counts (None: every test of the new files) and how many
    should pass: with appended tests only the new titles count, so the old tests of an
    extended file never score."""
    if not appended:
        return None, sum(len(js_test_titles(hidden[p]) or []) for p in new_files)
    titles = [t for p in new_files for t in _added_titles("", hidden[p], p)]
    titles += [t for p in sorted(appended) for t in appended[p]]
    return titles, len(titles)
