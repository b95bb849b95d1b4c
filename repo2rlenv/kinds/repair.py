"""repair: a test command failed, the agent changed code, the same command then passed.

Where the format recorded no exit status and replay read it from the runner's summary
line (`exit_inferred`), the pair counts only when the two summaries show the same tests
failing then passing (`checks.same_tests_fail_then_pass`).

Start state = the workspace before the failing run; reference = the change; verifier =
that command over the protected start-state tests, all-or-nothing."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from repo2rlenv.kinds import node_repair
from repo2rlenv.kinds.checks import (
    check_verifiable,
    expected_passes,
    pytest_targets,
    same_tests_fail_then_pass,
)
from repo2rlenv.kinds.common import (
    PYTEST_CONFIGS,
    Reject,
    SessionContext,
    build_bundle,
    check_has_no_secrets,
    is_test_file,
    known_files,
    reference_script,
    step_range,
)
from repo2rlenv.kinds.grading import grading_files
from repo2rlenv.kinds.pytest_config import pytest_config
from repo2rlenv.replay.replay import CommandRecord, Replay
from schemas import TaskBundle

TAIL_LINES = 15


def _key(command: CommandRecord) -> tuple[str, tuple[str, ...]]:
    return command.cwd, tuple(command.checks[0])


def _pairs(replay: Replay) -> Iterator[tuple[CommandRecord, CommandRecord]]:
    """(failing run, first later passing run of the same check), one per failing run that
    is followed by a code change and a pass."""
    runs = [c for c in replay.commands if c.checks and c.exit_code is not None]
    used: set[int] = set()
    for i, failing in enumerate(runs):
        if failing.exit_code == 0 or failing.index in used:
            continue
        for passing in runs[i + 1 :]:
            if _key(passing) != _key(failing):
                continue
            if passing.exit_code != 0:
                used.add(passing.index)
                continue
            yield failing, passing
            break


def _unseen_targets(failing: CommandRecord, protected: dict[str, str]) -> str | None:
    """A test file or folder the failing command names that the start state does not
    hold (a scratch `test_x.py` at the root is not `tests/x/test_x.py`): the verifier
    would run a file that is not there."""
    tests = [p for p in protected if is_test_file(p)]
    for target in pytest_targets(failing.checks[0]):
        path = posixpath.normpath(posixpath.join(failing.cwd or ".", target.split("::")[0]))
        if path == ".":
            continue
        if path.endswith(".py"):
            if path not in protected:
                return target
        elif not any(p.startswith(path + "/") for p in tests):
            return target
    return None


def candidates(replay: Replay, ctx: SessionContext) -> Iterator[TaskBundle | Reject]:
    drafted = 0
    for number, (failing, passing) in enumerate(_pairs(replay)):
        drafted = number + 1
        try:
            yield _build(replay, ctx, number, failing, passing)
        except Reject as reject:
            yield reject
    for number, (failing, passing) in enumerate(node_repair.pairs(replay), drafted):
        try:
            yield node_repair.draft(replay, ctx, number, failing, passing)
        except Reject as reject:
            yield reject


def _build(
    replay: Replay, ctx: SessionContext, number: int, failing: CommandRecord, passing: CommandRecord
) -> TaskBundle:
    ws = replay.workspace
    if getattr(failing, "exit_inferred", False) or getattr(passing, "exit_inferred", False):
        mismatch = same_tests_fail_then_pass(failing.output, passing.output)
        if mismatch:
            raise Reject("repair.inferred-mismatch", mismatch)
    changed = ws.changed_between(failing.index + 1, passing.index)
    if not changed:
        raise Reject("repair.no-change", "the check passed again without a code change")
    if any(is_test_file(p) for p in changed):
        raise Reject("repair.tests-edited", "the fix changed test files")
    start = known_files(ws.snapshot(failing.index))
    end = ws.snapshot(passing.index)
    changes = {p: end[p].content for p in changed if end[p].status != "absent"}
    if any(end[p].status not in {"known", "absent"} for p in changed):
        raise Reject("reconstructable.unknown-files", "the fixed files are not known in full")
    changes.update({p: None for p in changed if end[p].status == "absent"})
    protected = {
        p: c for p, c in start.items() if is_test_file(p) or p.rsplit("/", 1)[-1] in PYTEST_CONFIGS
    }
    if not any(is_test_file(p) for p in protected):
        raise Reject("reconstructable.tests-unknown", "the failing tests were never seen in full")
    unseen = _unseen_targets(failing, protected)
    if unseen:
        raise Reject(
            "reconstructable.tests-unknown",
            f"the failing command runs {unseen}, which the session never showed in full",
        )
    check_verifiable(protected, failing.command)
    check_has_no_secrets({**start, **{p: c for p, c in changes.items() if c}}, ctx.published)
    config = pytest_config(protected, failing.cwd)
    tests = grading_files(
        mode="all",
        cwd=failing.cwd,
        targets=pytest_targets(failing.checks[0]),
        expected=expected_passes(passing.output),
        protected=protected,
        hidden={},
        config=config,
    )
    shown = "\n".join((failing.output or "").strip().splitlines()[-TAIL_LINES:])
    command = " ".join(failing.checks[0])
    where = f" (in `{failing.cwd}`)" if failing.cwd else ""
    instruction = (
        f"Running `{command}`{where} fails:\n\n```\n{shown}\n```\n\n"
        "Fix the code so that this command passes. Do not modify the tests.\n"
    )
    return build_bundle(
        ctx,
        replay,
        kind="repair",
        index=number,
        instruction=instruction,
        start=start,
        tests=tests,
        solve_sh=reference_script(changes),
        step_range=step_range(replay, failing.index, passing.index + 1),
        needs_pytest=True,
    )
