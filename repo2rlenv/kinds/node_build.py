"""build, for a session whose tests ran under a JavaScript runner (vitest, jest,
node --test) to a pass: the same task as pytest's build, in the runner's terms.

The test files the agent created are the hidden tests; package.json, the lockfile and
the runner's config as they stood at the passing run are the start state and are
restored by the verifier (`kinds.grading_node`), so the dependencies the tests need are
installed when the image is built (`kinds.node_image`) and the agent cannot change how
the tests run. The code the agent created is the reference solution.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Container

from repo2rlenv.kinds.common import (
    Reject,
    SessionContext,
    build_bundle,
    check_has_no_secrets,
    known_files,
    reference_script,
    step_range,
)
from repo2rlenv.kinds.grading_node import node_grading_files
from repo2rlenv.kinds.node_image import (
    LOCKFILES,
    NodeImage,
    install_plan,
    session_day,
    session_node_version,
)
from repo2rlenv.replay.replay import CommandRecord, Replay
from repo2rlenv.replay.workspace import FileState
from repo2rlenv.runners import RUNNERS, TestRunner
from repo2rlenv.runners.base import js_imports
from schemas import BundleFile, TaskBundle, TaskKind

NETWORK = re.compile(r"\bfetch\(|\b(?:require\(|from )\s*['\"](?:node:)?(?:https?|net|dgram)['\"]")
CLOCK = re.compile(r"\bDate\.now\(|\bnew Date\(\)")
RANDOM = re.compile(r"\bMath\.random\(")
BUILT = ("node_modules/", "dist/", "build/", "coverage/", ".next/")


def package_root(end: dict[str, FileState], cwd: str) -> str:
    """The folder of the nearest package.json the run's folder sees."""
    folder = cwd
    while True:
        state = end.get(posixpath.join(folder, "package.json") if folder else "package.json")
        if state is not None and state.status == "known":
            return folder
        if not folder:
            raise Reject(
                "build.node-no-package-json", "no package.json known in full at the passing run"
            )
        folder = posixpath.dirname(folder)


def check_js_verifiable(tests: dict[str, str]) -> None:
    for path, text in tests.items():
        if NETWORK.search(text):
            raise Reject("verifiable.network", f"{path} uses the network")
        if CLOCK.search(text):
            raise Reject("verifiable.clock", f"{path} reads the clock")
        if RANDOM.search(text):
            raise Reject("verifiable.randomness", f"{path} uses unseeded randomness")


def interface_note(hidden: dict[str, str], root: str, runner: str) -> str:
    """Where the hidden tests are and which of the task's modules they import."""
    lines = []
    for path, text in sorted(hidden.items()):
        imported = sorted(js_imports(path, text))
        shown = ", ".join(f"`{m}`" for m in imported)
        lines.append(f"- `{path}`" + (f" imports {shown}" if shown else ""))
    where = f"`{root}`" if root else "the workspace root"
    return (
        f"Work in the current folder (/workspace); dependencies are installed. Hidden tests "
        f"will run with {runner} from {where}:\n" + "\n".join(lines)
    )


def runner_pass(
    replay: Replay, start: int, end: int, languages: tuple[str, ...] = ("javascript",)
) -> CommandRecord | None:
    """The last run of a runner of `languages` in [start, end), when it passed (build
    and extend ask only when no pytest run passed: a session's pytest keeps pytest's
    task)."""
    runs = [
        c
        for c in replay.commands
        if c.runner
        and RUNNERS[c.runner].language in languages
        and start <= c.index < end
        and c.exit_code is not None
    ]
    return runs[-1] if runs and runs[-1].exit_code == 0 else None


def is_built(path: str, built: tuple[str, ...] = BUILT) -> bool:
    """Whether `path` lies in a build output or installed-dependency folder: what the
    session wrote there is neither the task's code nor its tests."""
    return any(f"/{b}" in f"/{path}" for b in built)


def created_files(
    replay: Replay,
    start: Container[str],
    start_index: int,
    stop: int,
    built: tuple[str, ...] = BUILT,
) -> list[str]:
    """The files the agent created in [start_index, stop), build outputs left out: a
    build task's hidden tests and reference code are both drawn from them."""
    return [
        p
        for p in replay.workspace.changed_between(start_index, stop)
        if p not in start and not is_built(p, built)
    ]


def is_control(runner: TestRunner, path: str) -> bool:
    """The runner's config or a lockfile: files that decide how the tests run and what
    the image installs, so the verifier restores them."""
    return runner.is_config_file(path) or path.rsplit("/", 1)[-1] in LOCKFILES


def js_controls(
    end: dict[str, FileState], root: str, runner: TestRunner, exclude: Container[str]
) -> dict[str, str]:
    """The controls (`is_control`) under the package root known in full at the passing
    run, the hidden tests excluded: the start state carries them as they stood then."""
    inside = [p for p in end if not root or p.startswith(root + "/")]
    config = [
        p
        for p in inside
        if is_control(runner, p)
        and p not in exclude
        and end[p].status == "known"
        and not is_built(p)
    ]
    return known_files(end, config)


def node_bundle(
    ctx: SessionContext,
    replay: Replay,
    *,
    kind: TaskKind,
    index: int,
    instruction: str,
    start: dict[str, str],
    tests: list[BundleFile],
    changes: dict[str, str | None],
    span: tuple[int, int],
    root: str,
    installs_from: dict[str, str],
) -> TaskBundle:
    """The JavaScript kinds' bundle: the image installs what `installs_from` (package.json,
    the lockfile) names under the session's Node, as of the session's day, before the
    workspace copy; no pytest and no session installs, the runner's verifier runs."""
    image = NodeImage(
        cwd=root,
        install=install_plan(installs_from, root, session_day(replay)),
        node_version=session_node_version(replay),
    )
    return build_bundle(
        ctx,
        replay,
        kind=kind,
        index=index,
        instruction=instruction,
        start=start,
        tests=tests,
        solve_sh=reference_script(changes),
        step_range=step_range(replay, *span),
        needs_pytest=False,
        session_installs_too=False,
        head_lines=image.head(),
        after_lines=image.after(),
    )


def draft(
    replay: Replay,
    ctx: SessionContext,
    final: CommandRecord,
    *,
    start: dict[str, str],
    start_index: int,
    request: str,
) -> TaskBundle:
    runner = RUNNERS[final.runner or ""]
    spec = runner.verifier()
    if spec is None:
        raise Reject("build.runner-without-verifier", f"{runner.name} has no JavaScript verifier")
    stop = final.index
    end = replay.workspace.snapshot(stop)
    root = package_root(end, final.cwd)
    created = created_files(replay, start, start_index, stop)
    hidden_paths = [p for p in created if runner.is_test_file(p) and end[p].status == "known"]
    if not hidden_paths:
        raise Reject("build.no-tests-written", "no test file written by the agent is known")
    protected = js_controls(end, root, runner, hidden_paths)
    code = [
        p
        for p in created
        if p not in hidden_paths and p not in protected and end[p].status != "absent"
    ]
    if not code:
        raise Reject("build.nothing-built", "no code file was created")
    changes = known_files(end, code)
    hidden = {p: end[p].content or "" for p in hidden_paths}
    check_js_verifiable(hidden)
    check_has_no_secrets({**start, **protected, **changes, **hidden}, ctx.published)
    counts = runner.counts(final.output)
    expected = counts.passed if counts is not None else 0
    targets = [posixpath.relpath(p, root) if root else p for p in hidden_paths]
    tests = node_grading_files(
        runner=runner.name,
        spec=spec,
        mode="fraction",
        cwd=root,
        targets=targets,
        expected=expected,
        protected=protected,
        hidden=hidden,
    )
    return node_bundle(
        ctx,
        replay,
        kind="build",
        index=0,
        instruction=request + "\n\n" + interface_note(hidden, root, runner.name),
        start={**start, **protected},
        tests=tests,
        changes=changes,
        span=(start_index, stop + 1),
        root=root,
        installs_from=protected,
    )
