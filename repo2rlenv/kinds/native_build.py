"""build, for a session whose tests ran under `go test` or `cargo test` to a pass: the
same task as the JavaScript runners' build (`kinds.node_build`), in Go's and Rust's terms.

The hidden tests are the test files the agent created (Go's `*_test.go`, Rust's
`tests/*.rs`; a Rust source with `#[test]`s inside is the code itself and cannot be
hidden). go.mod/go.sum or Cargo.toml/Cargo.lock as they stood at the passing run are
the start state and are restored by the verifier. Only the hidden tests count, by name
(`kinds.grading_node`), so a test the agent adds beside them never scores. A project
that needs modules or crates the image cannot fetch is refused
(`kinds.native_image.check_dependencies_available`), and so is one Debian's toolchain
cannot load (`check_toolchain`: a `go 1.N.P` or `toolchain` line, edition 2024, Cargo.lock
version 4).
"""

from __future__ import annotations

import posixpath
import re

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
from repo2rlenv.kinds.native_image import (
    MANIFEST,
    NativeImage,
    check_dependencies_available,
    check_toolchain,
)
from repo2rlenv.kinds.node_build import created_files
from repo2rlenv.replay.replay import CommandRecord, Replay
from repo2rlenv.replay.workspace import FileState
from repo2rlenv.runners import RUNNERS
from schemas import TaskBundle

BUILT = ("target/", "vendor/", ".git/")
GO_TEST = re.compile(r"^func (Test\w*)\(\s*\w+\s+\*testing\.T\s*\)", re.M)
RUST_TEST = re.compile(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)")
UNSAFE = {
    "go": (
        (re.compile(r'"net(?:/http)?"'), "verifiable.network", "uses the network"),
        (re.compile(r"\btime\.Now\(\)"), "verifiable.clock", "reads the clock"),
        (re.compile(r'"math/rand(?:/v2)?"'), "verifiable.randomness", "uses randomness"),
    ),
    "rust": (
        (re.compile(r"\bstd::net\b|\bTcpStream\b"), "verifiable.network", "uses the network"),
        (re.compile(r"\b(?:SystemTime|Instant)::now\("), "verifiable.clock", "reads the clock"),
    ),
}


def manifest_root(end: dict[str, FileState], cwd: str, language: str) -> str:
    """The folder of the nearest go.mod / Cargo.toml the run's folder sees."""
    name = MANIFEST[language]
    folder = cwd
    while True:
        state = end.get(posixpath.join(folder, name) if folder else name)
        if state is not None and state.status == "known":
            return folder
        if not folder:
            raise Reject(f"build.{language}-no-manifest", f"no {name} known at the passing run")
        folder = posixpath.dirname(folder)


def test_names(language: str, hidden: dict[str, str]) -> list[str]:
    """The hidden tests by the names the runner reports them under."""
    pattern = GO_TEST if language == "go" else RUST_TEST
    return sorted({name for text in hidden.values() for name in pattern.findall(text)})


def check_native_verifiable(language: str, tests: dict[str, str]) -> None:
    for path, text in tests.items():
        for pattern, reason, what in UNSAFE[language]:
            if pattern.search(text):
                raise Reject(reason, f"{path} {what}")


def targets(language: str, root_relative: list[str]) -> list[str]:
    """Go: the packages of the hidden tests (`./calc`); Rust: `--test NAME` for each."""
    if language == "go":
        return sorted({"./" + posixpath.dirname(p) if "/" in p else "." for p in root_relative})
    out: list[str] = []
    for path in root_relative:
        out += ["--test", posixpath.splitext(posixpath.basename(path))[0]]
    return out


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
        raise Reject("build.runner-without-verifier", f"{runner.name} has no verifier")
    language = runner.language
    ws = replay.workspace
    stop = final.index
    end = ws.snapshot(stop)
    root = manifest_root(end, final.cwd, language)
    inside = [p for p in end if not root or p.startswith(root + "/")]
    known = {p: end[p].content or "" for p in inside if end[p].status == "known"}
    check_dependencies_available(language, root, known)
    check_toolchain(language, root, known)
    created = created_files(replay, start, start_index, stop, BUILT)
    hidden_paths = [p for p in created if runner.is_test_file(p) and end[p].status == "known"]
    hidden = {p: end[p].content or "" for p in hidden_paths}
    names = test_names(language, hidden)
    if not names:
        raise Reject("build.no-tests-written", "no test file written by the agent is known")
    config = [p for p in known if runner.is_config_file(p) and p not in hidden]
    protected = known_files(end, config)
    code = [p for p in created if p not in hidden and p not in protected]
    code = [p for p in code if end[p].status != "absent"]
    if not code:
        raise Reject("build.nothing-built", "no code file was created")
    changes = known_files(end, code)
    check_native_verifiable(language, hidden)
    check_has_no_secrets({**start, **protected, **changes, **hidden}, ctx.published)
    relative = [posixpath.relpath(p, root) if root else p for p in sorted(hidden_paths)]
    tests = node_grading_files(
        runner=runner.name,
        spec=spec,
        mode="fraction",
        cwd=root,
        targets=targets(language, relative),
        expected=len(names),
        protected=protected,
        hidden=hidden,
        names=names,
        first_test=relative[0],
    )
    where = f"`{root}`" if root else "the workspace root"
    note = (
        f"Work in the current folder (/workspace); no modules or crates can be downloaded. "
        f"Hidden tests will run with {runner.name} from {where}:\n"
        + "\n".join(f"- `{p}`" for p in sorted(hidden_paths))
    )
    return build_bundle(
        ctx,
        replay,
        kind="build",
        index=0,
        instruction=request + "\n\n" + note,
        start={**start, **protected},
        tests=tests,
        solve_sh=reference_script(changes),
        step_range=step_range(replay, start_index, stop + 1),
        needs_pytest=False,
        session_installs_too=False,
        head_lines=NativeImage(language).head(),
        after_lines=[],
    )
