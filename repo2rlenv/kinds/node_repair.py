"""repair, for a JavaScript runner (vitest, jest, node --test): a test run failed, the
agent changed code, the same run then passed.

The same task as pytest's repair (`kinds.repair`): start state = the workspace before
the failing run, reference = the change, verifier = the runner over the protected
start-state tests, all-or-nothing. package.json, the lockfile and the runner's config
are protected too, and the image installs the dependencies at build time
(`kinds.node_image`). Where the exit status was read from the summary, the two
summaries must show failures, then none over as many tests.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from repo2rlenv.kinds.common import (
    Reject,
    SessionContext,
    check_has_no_secrets,
    known_files,
)
from repo2rlenv.kinds.grading_node import node_grading_files
from repo2rlenv.kinds.node_build import (
    check_js_verifiable,
    is_built,
    is_control,
    node_bundle,
    package_root,
)
from repo2rlenv.replay.replay import CommandRecord, Replay
from repo2rlenv.runners import RUNNERS, TestRunner
from schemas import TaskBundle

TAIL_LINES = 15


def _is_js(command: CommandRecord) -> bool:
    return bool(command.runner) and RUNNERS[command.runner or ""].language == "javascript"


def pairs(replay: Replay) -> Iterator[tuple[CommandRecord, CommandRecord]]:
    """(failing run, first later passing run of the same runner words in the same folder)."""
    runs = [c for c in replay.commands if _is_js(c) and c.exit_code is not None]
    for i, failing in enumerate(runs):
        if failing.exit_code == 0:
            continue
        key = (failing.cwd, failing.runner, tuple(failing.runner_words))
        for passing in runs[i + 1 :]:
            if (passing.cwd, passing.runner, tuple(passing.runner_words)) != key:
                continue
            if passing.exit_code == 0:
                yield failing, passing
            break


def _inferred_mismatch(
    runner_name: str, failing: CommandRecord, passing: CommandRecord
) -> str | None:
    runner = RUNNERS[runner_name]
    before, after = runner.counts(failing.output), runner.counts(passing.output)
    if before is None or after is None:
        return "a run printed no test summary"
    if not before.failed or after.failed or not after.passed:
        return "the summaries do not show failures, then none"
    if before.passed + before.failed != after.passed + after.failed:
        return f"{before.passed + before.failed} tests ran, then {after.passed + after.failed}"
    return None


def draft(
    replay: Replay, ctx: SessionContext, number: int, failing: CommandRecord, passing: CommandRecord
) -> TaskBundle:
    runner = RUNNERS[failing.runner or ""]
    spec = runner.verifier()
    if spec is None:
        raise Reject("repair.runner-without-verifier", f"{runner.name} has no JavaScript verifier")
    if failing.exit_inferred or passing.exit_inferred:
        mismatch = _inferred_mismatch(runner.name, failing, passing)
        if mismatch:
            raise Reject("repair.inferred-mismatch", mismatch)
    ws = replay.workspace
    changed = ws.changed_between(failing.index + 1, passing.index)
    if not changed:
        raise Reject("repair.no-change", "the check passed again without a code change")
    if any(runner.is_test_file(p) for p in changed):
        raise Reject("repair.tests-edited", "the fix changed test files")
    start = known_files(ws.snapshot(failing.index))
    end = ws.snapshot(passing.index)
    if any(end[p].status not in {"known", "absent"} for p in changed):
        raise Reject("reconstructable.unknown-files", "the fixed files are not known in full")
    changes = {p: (end[p].content if end[p].status != "absent" else None) for p in changed}
    root = package_root(ws.snapshot(failing.index), failing.cwd)
    inside = [p for p in start if (not root or p.startswith(root + "/")) and not is_built(p)]
    tests = _failing_tests(runner, failing, start, inside)
    config = [p for p in inside if is_control(runner, p)]
    protected = {p: start[p] for p in [*tests, *config]}
    check_js_verifiable({p: start[p] for p in tests})
    check_has_no_secrets({**start, **{p: c for p, c in changes.items() if c}}, ctx.published)
    counts = runner.counts(passing.output)
    files = node_grading_files(
        runner=runner.name,
        spec=spec,
        mode="all",
        cwd=root,
        targets=[posixpath.relpath(p, root) if root else p for p in tests],
        expected=counts.passed if counts is not None else 0,
        protected=protected,
        hidden={},
    )
    return node_bundle(
        ctx,
        replay,
        kind="repair",
        index=number,
        instruction=_instruction(failing),
        start=start,
        tests=files,
        changes=changes,
        span=(failing.index, passing.index + 1),
        root=root,
        installs_from=protected,
    )


def _failing_tests(
    runner: TestRunner, failing: CommandRecord, start: dict[str, str], inside: list[str]
) -> list[str]:
    """The protected tests the verifier runs: those the failing command names, else every
    test file under the package root; a named one the session never showed in full, or
    none at all, refuses the pair (the verifier could not run what failed)."""
    tests = [p for p in inside if runner.is_test_file(p)]
    named = [
        posixpath.normpath(posixpath.join(failing.cwd or ".", t))
        for t in runner.targets(failing.runner_words)
    ]
    if named:
        unseen = [t for t in named if t not in start]
        if unseen:
            raise Reject(
                "reconstructable.tests-unknown",
                f"the failing command runs {unseen[0]}, which the session never showed in full",
            )
        tests = [t for t in named if t in tests]
    if not tests:
        raise Reject("reconstructable.tests-unknown", "the failing tests were never seen in full")
    return tests


def _instruction(failing: CommandRecord) -> str:
    """The failing command and the tail of its output: a repair task states the symptom,
    as a user would report it, not the fix."""
    shown = "\n".join((failing.output or "").strip().splitlines()[-TAIL_LINES:])
    command = " ".join(failing.runner_words)
    where = f" (in `{failing.cwd}`)" if failing.cwd else ""
    return (
        f"Running `{command}`{where} fails:\n\n```\n{shown}\n```\n\n"
        "Fix the code so that this command passes. Do not modify the tests.\n"
    )
