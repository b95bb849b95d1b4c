"""extend: a later request added behaviour to what exists, with new tests for it.

Start state = the workspace before the request; verifier = the tests the agent added
while answering it: new test files, and new test functions in test files that existed
(found by comparing the ids collected from each file before and after; the verifier
then runs only those ids). They must fail before and pass after: the oracle check
proves it. A new test that cannot reach what the reference changes would pass on the
start state; it is dropped (`extend.passes-on-start`, counted) and the verifier runs the
rest by id, or the request is refused when none is left (`start_failing`). An anchored
session's first request is a candidate too: its start state is the checkout. Reward =
fraction passed."""

from __future__ import annotations

from collections.abc import Iterator

from repo2rlenv.kinds import node_build, node_extend
from repo2rlenv.kinds.checks import check_verifiable
from repo2rlenv.kinds.collected import added_test_ids, collected_test_ids
from repo2rlenv.kinds.common import (
    Reject,
    SessionContext,
    build_bundle,
    check_has_no_secrets,
    clean_instruction,
    is_test_file,
    known_files,
    reference_script,
    step_range,
)
from repo2rlenv.kinds.grading import grading_files
from repo2rlenv.kinds.interface import interface_note
from repo2rlenv.kinds.start_failing import start_failing_tests
from repo2rlenv.replay.replay import Replay
from repo2rlenv.replay.workspace import FileState
from schemas import TaskBundle

PASSES_ON_START = "extend.passes-on-start"


def candidates(replay: Replay, ctx: SessionContext) -> Iterator[TaskBundle | Reject]:
    # Without a checkout the first request starts from an unknown folder (build's case).
    first = 0 if replay.workspace.seeded else 1
    for position in range(first, len(replay.turns)):
        try:
            bundle, dropped = _build(replay, ctx, position)
        except Reject as reject:
            yield reject
            continue
        if dropped:
            yield Reject(PASSES_ON_START, f"dropped, they pass on the start state: {dropped}")
        yield bundle


def _added_tests(
    before: dict[str, FileState], end: dict[str, FileState], paths: list[str]
) -> dict[str, list[str]]:
    """Test functions the request added to test files that existed before it, by file
    (compared by their collected ids, so an edited or moved test is not "new")."""
    added = {}
    for path in paths:
        old, new = before[path], end.get(path)
        if old.status != "known" or new is None or new.status != "known":
            continue
        ids = added_test_ids(old.content or "", new.content or "")
        if ids:
            added[path] = ids
    return added


def _relative(cwd: str, path: str) -> str:
    return path[len(cwd) + 1 :] if cwd and path.startswith(cwd + "/") else path


def _start_failing(
    start: dict[str, str],
    changes: dict[str, str | None],
    hidden: dict[str, str],
    added: dict[str, list[str]],
) -> tuple[dict[str, list[str] | None], list[str]]:
    """Per hidden test file, the ids the verifier runs (None: the whole new file, when
    its tests cannot be read from the code), and the `path::id`s dropped because they
    cannot fail on the start state."""
    selected: dict[str, list[str] | None] = {}
    dropped: list[str] = []
    for path, text in sorted(hidden.items()):
        ids = added.get(path) or collected_test_ids(text) or []
        kept = start_failing_tests(start, changes, path, text, ids) if ids else None
        if kept is None:
            selected[path] = added.get(path)
            continue
        dropped += [f"{path}::{i}" for i in ids if i not in kept]
        if kept:
            whole = path not in added and len(kept) == len(ids)
            selected[path] = None if whole else kept
    if not selected:
        raise Reject(PASSES_ON_START, f"every new test passes on the start state: {dropped}")
    return selected, dropped


def _build(replay: Replay, ctx: SessionContext, position: int) -> tuple[TaskBundle, list[str]]:
    ws = replay.workspace
    start_index, end_index = replay.turn_span(position)
    runs = [
        c
        for c in replay.commands
        if c.checks and start_index <= c.index < end_index and c.exit_code is not None
    ]
    if not runs or runs[-1].exit_code != 0:
        return _other_runner_draft(replay, ctx, position, start_index, end_index), []
    final = runs[-1]
    before = ws.snapshot(start_index)
    end = ws.snapshot(final.index)
    new_tests, added = _new_tests(replay, before, end, start_index, final.index)
    start = known_files(before, sorted(p for p in before if before[p].status != "absent"))
    changes = _code_changes(replay, end, new_tests, start_index, final.index)
    hidden = {p: end[p].content for p in new_tests if end[p].status == "known"}
    if len(hidden) != len(new_tests):
        raise Reject("reconstructable.tests-unknown", "the new tests are not known in full")
    selected, dropped = _start_failing(start, changes, hidden, added)
    hidden = {p: c for p, c in hidden.items() if p in selected}
    protected = {p: c for p, c in start.items() if is_test_file(p) and p not in hidden}
    check_verifiable(hidden, final.command)
    check_has_no_secrets(
        {**start, **{p: c for p, c in changes.items() if c}, **hidden}, ctx.published
    )
    whole, targets = _targets(final.cwd, selected)
    tests = grading_files(
        mode="fraction",
        cwd=final.cwd,
        targets=targets,
        expected=0 if whole else len(targets),
        protected=protected,
        hidden=hidden,
        config=None,
    )
    request = _request(replay, position)
    code = {p: c for p, c in {**start, **changes}.items() if c is not None}
    instruction = request + "\n\n" + interface_note(hidden, code)
    bundle = build_bundle(
        ctx,
        replay,
        kind="extend",
        index=position,
        instruction=instruction,
        start=start,
        tests=tests,
        solve_sh=reference_script(changes),
        step_range=step_range(replay, start_index, final.index + 1),
        needs_pytest=True,
    )
    return bundle, dropped


def _request(replay: Replay, position: int) -> str:
    """The request, cleaned: it is the task's instruction, so an empty one rejects the
    request instead of drafting a task nobody could read."""
    request = clean_instruction(replay.turns[position].text, replay)
    if not request:
        raise Reject("clean.empty-request", "the request has no text")
    return request


def _other_runner_draft(
    replay: Replay, ctx: SessionContext, position: int, start_index: int, end_index: int
) -> TaskBundle:
    """The runner dispatch when no pytest run passed: a passing run of another runner
    (JavaScript's) drafts the task through `node_extend`; with none the request is a
    counted rejection."""
    node_final = node_build.runner_pass(replay, start_index, end_index)
    if node_final is None:
        _reject_native_pass(replay, start_index, end_index)
        raise Reject("extend.no-passing-tests", "no test run passed while answering the request")
    request = _request(replay, position)
    return node_extend.draft(
        replay,
        ctx,
        node_final,
        position=position,
        start_index=start_index,
        request=request,
    )


def _new_tests(
    replay: Replay,
    before: dict[str, FileState],
    end: dict[str, FileState],
    start_index: int,
    stop: int,
) -> tuple[list[str], dict[str, list[str]]]:
    """The test files the request created or added test functions to, and those added
    functions by file: they are the verifier, so a request that added none is refused."""
    touched = [
        p
        for p in replay.workspace.changed_between(start_index, stop)
        if is_test_file(p) and not p.endswith("conftest.py") and before.get(p) is not None
    ]
    new_files = [p for p in touched if before[p].status == "absent"]
    added = _added_tests(before, end, [p for p in touched if p not in new_files])
    if not new_files and not added:
        raise Reject("extend.no-new-tests", "the request added no test file and no test function")
    return sorted([*new_files, *added]), added


def _code_changes(
    replay: Replay,
    end: dict[str, FileState],
    new_tests: list[str],
    start_index: int,
    stop: int,
) -> dict[str, str | None]:
    """The reference's code changes (None: deleted): they become solve.sh, so every
    changed file must be known in full or the request is refused."""
    changed = [
        p
        for p in replay.workspace.changed_between(start_index, stop)
        if p not in new_tests and not is_test_file(p)
    ]
    if not changed:
        raise Reject("extend.no-code-change", "no code changed for the request")
    changes = {p: end[p].content for p in changed if end[p].status == "known"}
    changes.update({p: None for p in changed if end[p].status == "absent"})
    if len(changes) != len(changed):
        raise Reject("reconstructable.unknown-files", "changed files are not known in full")
    return changes


def _targets(cwd: str, selected: dict[str, list[str] | None]) -> tuple[list[str], list[str]]:
    """The whole new files the verifier runs, and every target (whole files, then
    `path::id`s), relative to the folder the agent ran its tests from."""
    whole = [_relative(cwd, p) for p, ids in selected.items() if ids is None]
    targets = whole + [
        f"{_relative(cwd, p)}::{test}" for p, ids in selected.items() for test in ids or []
    ]
    return whole, targets


def _reject_native_pass(replay: Replay, start_index: int, end_index: int) -> None:
    """A request whose `go test` / `cargo test` run passed is refused for what it is:
    extend drafts pytest and JavaScript tasks only. Counting it as
    `extend.no-passing-tests` hid the cause on real Go and Rust sessions (issue 31)."""
    native = node_build.runner_pass(replay, start_index, end_index, ("go", "rust"))
    if native is not None:
        raise Reject(
            "extend.runner-unsupported",
            f"the passing run is {native.runner} (extend drafts pytest and JavaScript tasks)",
        )
