"""build: the first request asked for something built from an (almost) empty folder, and
the agent built it and ran its own tests. Those tests become the hidden verifier."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from repo2rlenv.kinds import native_build, node_build
from repo2rlenv.kinds.checks import check_verifiable, expected_passes
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
from repo2rlenv.replay.replay import CommandRecord, Replay
from repo2rlenv.replay.workspace import FileState
from repo2rlenv.runners import RUNNERS
from schemas import TaskBundle

MAX_PRESENT_FILES = 3
NATIVE_AND_JS = ("javascript", "go", "rust")
"""Runners whose passing run drafts a build task when no pytest run passed."""


def candidates(replay: Replay, ctx: SessionContext) -> Iterator[TaskBundle | Reject]:
    if not replay.turns:
        return
    try:
        yield _build(replay, ctx)
    except Reject as reject:
        yield reject


def _build(replay: Replay, ctx: SessionContext) -> TaskBundle:
    ws = replay.workspace
    start_index, end_index, start = _empty_start(replay)
    runs = [
        c
        for c in replay.commands
        if c.checks and start_index <= c.index < end_index and c.exit_code is not None
    ]
    final = runs[-1] if runs and runs[-1].exit_code == 0 else None
    if final is None:
        other = _other_runner_build(replay, ctx, start, start_index, end_index)
        if other is not None:
            return other
    if final is None and ctx.write_tests is None:
        raise Reject("build.no-passing-tests", "the agent never ran its tests to a pass")
    stop = final.index if final is not None else end_index
    end = ws.snapshot(stop)
    created = [p for p in ws.changed_between(start_index, stop) if p not in start]
    hidden_paths = [p for p in created if is_test_file(p) and end[p].status == "known"]
    code = [p for p in created if p not in hidden_paths and end[p].status != "absent"]
    if not code:
        raise Reject("build.nothing-built", "no code file was created")
    changes = known_files(end, code)
    request = _request(replay)
    hidden, cwd, command, expected = _hidden_tests(ctx, final, end, hidden_paths, request, changes)
    check_verifiable(hidden, command)
    check_has_no_secrets({**start, **changes, **hidden}, ctx.published)
    targets = [p for p in hidden if not p.endswith("conftest.py")]
    targets = [p[len(cwd) + 1 :] if cwd and p.startswith(cwd + "/") else p for p in targets]
    tests = grading_files(
        mode="fraction",
        cwd=cwd,
        targets=targets,
        expected=expected,
        protected={},
        hidden=hidden,
        config=None,
    )
    instruction = request + "\n\n" + interface_note(hidden, changes)
    return build_bundle(
        ctx,
        replay,
        kind="build",
        index=0,
        instruction=instruction,
        start=start,
        tests=tests,
        solve_sh=reference_script(changes),
        step_range=step_range(replay, start_index, stop + 1),
        needs_pytest=True,
    )


def _empty_start(replay: Replay) -> tuple[int, int, dict[str, str]]:
    """The first turn's span and its (almost) empty start folder: a build task is only
    fair when the agent really started from nothing, so a compacted session or a full
    folder is rejected rather than drafted with a start nobody can vouch for."""
    ws = replay.workspace
    if replay.session.compacted:
        raise Reject(
            "build.compacted-start",
            "the session resumes after a compaction: its folder is not known to be empty",
        )
    start_index, end_index = replay.turn_span(0)
    present = [p for p, h in ws.files.items() if h.initial.status != "absent"]
    if len(present) > MAX_PRESENT_FILES:
        raise Reject(
            "build.not-empty-start", f"the session started with {len(present)} existing files"
        )
    return start_index, end_index, known_files(ws.snapshot(start_index), sorted(present))


def _request(replay: Replay) -> str:
    """The first user message, cleaned: it is the task's instruction, so an empty one
    rejects the session instead of drafting a task nobody could read."""
    request = clean_instruction(replay.turns[0].text, replay)
    if not request:
        raise Reject("clean.empty-request", "the first user message has no text")
    return request


def _other_runner_build(
    replay: Replay,
    ctx: SessionContext,
    start: dict[str, str],
    start_index: int,
    end_index: int,
) -> TaskBundle | None:
    """The runner dispatch when no pytest run passed: a passing JavaScript, Go or Rust
    run drafts its task through `node_build` or `native_build`; None when there is none."""
    node_final = node_build.runner_pass(replay, start_index, end_index, NATIVE_AND_JS)
    if node_final is None:
        return None
    request = _request(replay)
    native = RUNNERS[node_final.runner or ""].language != "javascript"
    return (native_build if native else node_build).draft(
        replay, ctx, node_final, start=start, start_index=start_index, request=request
    )


def _hidden_tests(
    ctx: SessionContext,
    final: CommandRecord | None,
    end: Mapping[str, FileState],
    hidden_paths: list[str],
    request: str,
    changes: dict[str, str],
) -> tuple[dict[str, str | None], str, str, int]:
    """The hidden tests, their folder, the command and how many should pass: the
    agent's own tests when its last run passed, else tests `--llm` writes from the
    request and the built code; neither is a counted rejection, never a task without
    a verifier."""
    if final is not None and hidden_paths:
        hidden = {p: end[p].content for p in hidden_paths}
        return hidden, final.cwd, final.command, expected_passes(final.output)
    if ctx.write_tests is not None:
        written = ctx.write_tests(request, changes)
        if written is None:
            raise Reject("build.no-tests-written", "no agent tests, and --llm wrote none usable")
        expected = written.count("\ndef test") + written.startswith("def test")
        return {"test_generated.py": written}, "", "pytest", expected
    raise Reject("build.no-tests-written", "no test file written by the agent is known")
