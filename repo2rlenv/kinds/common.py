"""What every session-derived kind shares: ids, start state, reference script, cleaning."""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from repo2rlenv.bundle.standard import WORKDIR, environment_files, standard_config
from repo2rlenv.checkout_secrets import is_published, public_checkout_secrets
from repo2rlenv.kinds.installs import Installs, dockerfile_lines, session_installs
from repo2rlenv.kinds.instance_deps import (
    PROVENANCE,
    TASK_WHEEL_DIR,
    WHEEL_DIR,
    DependencyDate,
    date_unmet,
)
from repo2rlenv.kinds.instance_deps import dockerfile_lines as wheel_lines
from repo2rlenv.kinds.scm_version import ScmVersion
from repo2rlenv.kinds.swe_recipe import RECIPE_DIR, Recipe
from repo2rlenv.kinds.verifier_pytest import PYTEST_PIN
from repo2rlenv.privacy import scrub_instruction
from repo2rlenv.replay.replay import Replay
from repo2rlenv.replay.workspace import FileState
from repo2rlenv.secrets import redact
from schemas import BundleFile, SourceRef, TaskBundle, TaskConfig, TaskKind

TEST_FILE = re.compile(r"(^|/)(test_[^/]*\.py|[^/]*_test\.py|conftest\.py)$")
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
PYTEST_INSTALL = (
    f'RUN python3 -c "import pytest" 2>/dev/null || pip install --no-cache-dir {PYTEST_PIN}\n'
)


class Reject(Exception):
    """A candidate fails a quality check; `reason` is the yield-table code."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class SupportsStr(Protocol):
    def __str__(self) -> str: ...


@dataclass(frozen=True)
class SessionContext:
    dataset: str
    revision: str | SupportsStr | None
    """A lazy revision (the miner's FileRevision) is hashed only when a task is built,
    by `str()`."""
    record_id: str
    base_image: str
    identity: SupportsStr | None = None
    """What task ids derive from, when the record is a local file's: its bytes' digest
    and its place in the file (`mining.sources.FileIdentity`), so mining a file or the
    folder around it gives the same ids. None (a Hub row): the dataset and record id."""
    license: str | None = None
    repository: str | None = None
    commit: str | None = None
    anchor_found_by: str | None = None
    instance_id: str | None = None
    """The SWE-style instance the run belongs to (formats.swe_common), if any."""
    instance: Any = None
    """Its row from `--instances` (mining.instances.Instance), when the table has it."""
    dependency_date: DependencyDate | None = None
    """The date its image's dependencies are taken as of (the table's date of the
    instance's repository version); None: the instance's own `created_at`."""
    published: Mapping[str, str] | None = None
    """The anchored commit's text files as the repository publishes them (None when not
    anchored, or under `strict_secrets`): start-state files equal to them are exempt
    from the secret refusal (`checkout_secrets`)."""
    instance_image: Callable[[Any], tuple[Any, str | None]] | None = None
    """Optional: the instance's published image (`runtime.instance_images`): (the image,
    None), or (None, why not). None: no engine is asked (the project's recipe)."""
    instance_image_files: Callable[[Any, list[str]], dict[str, bytes]] | None = None
    """Optional: files of that image's checkout by relative path (those it lacks are
    left out): the verifier's protected copies are the image's own."""
    binary_files: Callable[[], dict[str, bytes]] | None = None
    """The anchored checkout's binary files (read on demand: only instance tasks, whose
    tests read test data, put them in the image)."""
    committed_at: Callable[[], str] | None = None
    """The anchored commit's committer time (read on demand: a spec's recipe dates its
    pip no earlier, since the checkout's own files pin releases up to it)."""
    files_at_commit: Callable[[str, tuple[str, ...]], dict[str, str]] | None = None
    """Text files of the anchored repository at another commit, by path (those absent
    left out; an unreadable commit gives none): a spec's conda environment file is read
    where SWE-bench reads it, at the instance's `environment_setup_commit`."""
    scm_version: Callable[[], ScmVersion] | None = None
    """The anchored commit's version as setuptools-scm would give it from the tags
    (read on demand, for a spec's recipe only: `kinds.scm_version`)."""
    write_tests: Callable[[str, dict[str, str]], str | None] | None = None
    """Optional (`--llm`): hidden tests for a build task whose session wrote none."""


def is_test_file(path: str) -> bool:
    return bool(TEST_FILE.search(path))


def task_id(ctx: SessionContext, kind: str, index: int) -> str:
    """`<kind>-<slug>-<index>-<digest>`. For a local file the slug is its name and the
    digest its content's, never the folder path given to `--dataset`, which differs
    between mining a file and mining its folder (issue 29)."""
    if ctx.identity is not None:
        source, name = str(ctx.identity), ctx.record_id.rsplit("/", 1)[-1]
    else:
        source, name = f"{ctx.dataset}\0{ctx.record_id}", ctx.record_id
    digest = hashlib.sha256(f"{source}\0{kind}\0{index}".encode())
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "session"
    return f"{kind}-{slug}-{index}-{digest.hexdigest()[:8]}"


def known_files(snapshot: dict[str, FileState], paths: list[str] | None = None) -> dict[str, str]:
    """Known contents among `paths` (default: all); raises Reject when any is not known."""
    missing = []
    files = {}
    for path in paths if paths is not None else sorted(snapshot):
        state = snapshot.get(path)
        if state is None or state.status in {"unknown", "partial"}:
            missing.append(path)
        elif state.status == "known" and state.content is not None:
            files[path] = state.content
    if missing:
        raise Reject(
            "reconstructable.unknown-files",
            f"{len(missing)} file(s) not known in full: {', '.join(missing[:5])}",
        )
    return files


def reference_script(changes: dict[str, str | None]) -> str:
    """solve.sh that turns the start state into the end state: write or delete files."""
    lines = ["#!/bin/bash", "set -euo pipefail", f"cd {WORKDIR}"]
    for path, content in sorted(changes.items()):
        quoted = shlex.quote(path)
        if content is None:
            lines.append(f"rm -f -- {quoted}")
            continue
        folder = posixpath.dirname(path)
        if folder:
            lines.append(f"mkdir -p -- {shlex.quote(folder)}")
        delimiter = "RLENV_" + hashlib.sha256(content.encode()).hexdigest()[:12].upper()
        body = content[:-1] if content.endswith("\n") else content
        lines += [f"cat > {quoted} <<'{delimiter}'", body, delimiter]
        if not content.endswith("\n"):
            lines.append(f"truncate -s -1 -- {quoted}")
    return "\n".join(lines) + "\n"


def clean_instruction(text: str, replay: Replay) -> str:
    """The user's words with the session root rewritten to /workspace, home paths and user
    names (any OS, `repo2rlenv.privacy`) and secrets redacted."""
    cleaned = scrub_instruction(text.replace("\r\n", "\n").strip(), replay.session.cwd)
    cleaned, _ = redact(cleaned)
    return cleaned


def check_has_no_secrets(files: dict[str, str], published: Mapping[str, str] | None = None) -> None:
    """Refuse a task whose files hold a credential. A file that is exactly the anchored
    public commit's blob (`published`, None under `strict_secrets`) is exempt: the
    repository publishes it there already (`checkout_secrets`); every other file,
    including a checkout file the run or the reference changed, is scanned."""
    for path, content in files.items():
        if is_published(path, content, published):
            continue
        if redact(content)[1]:
            raise Reject("clean.secret-in-files", f"{path} holds a credential")


def build_bundle(
    ctx: SessionContext,
    replay: Replay,
    *,
    kind: TaskKind,
    index: int,
    instruction: str,
    start: dict[str, str],
    tests: list[BundleFile],
    solve_sh: str,
    step_range: tuple[int, int],
    needs_pytest: bool,
    installs: Installs | None = None,
    wheels: dict[str, bytes] | None = None,
    session_installs_too: bool = True,
    start_binaries: dict[str, bytes] | None = None,
    task_wheels: dict[str, bytes] | None = None,
    recipe: Recipe | None = None,
    head_lines: list[str] | None = None,
    after_lines: list[str] | None = None,
) -> TaskBundle:
    """`recipe` (a trusted SWE-bench spec's build steps, `swe_recipe`) runs its shared
    steps before the workspace is copied and the rest after; `installs` adds to what
    the session installed (or replaces it, without `session_installs_too`); `wheels`
    (file name -> bytes) are unpacked into the image's site-packages (`instance_deps`)
    in one layer that tasks with the same wheels share,
    `task_wheels` (this task's own) in a later one; their provenance (`wheels.txt`) is
    written beside the Dockerfile, outside what the image copies; `start_binaries` are
    binary files of the start state, copied into the image with the text ones;
    `head_lines` and `after_lines` go before and after the workspace copy (a toolchain
    and the dependencies it installs: `kinds.node_image`)."""
    ident = task_id(ctx, kind, index)
    config = _task_config(ctx, replay, ident, kind, step_range)
    config.verifier.timeout_sec = verifier_timeout(tests, config.verifier.timeout_sec)
    block = config.metadata.repo2rlenv
    if block is not None:
        block.public_checkout_secrets = public_checkout_secrets(
            start, ctx.published, start_binaries
        )
        block.dependency_date_unmet = date_unmet(wheels or {})
    env = environment_files(ctx.base_image, {**(start_binaries or {}), **start})
    env[0] = BundleFile(
        path=env[0].path,
        content=_with_installs(
            env[0].content.decode(),
            replay,
            start,
            needs_pytest,
            installs,
            sorted(wheels or {}),
            session_installs_too,
            sorted(task_wheels or {}),
            recipe,
            head_lines or [],
            after_lines or [],
        ),
    )
    files = [
        *env,
        *_wheel_files(wheels or {}, task_wheels or {}),
        *_recipe_files(recipe),
        *tests,
        BundleFile(path="solution/solve.sh", content=solve_sh.encode(), executable=True),
    ]
    return TaskBundle(task_id=ident, config=config, instruction=instruction, files=files)


VERIFIER_MARGIN_S = 60.0
"""What `test.sh` needs beyond the test run itself (restoring the control and hidden
files, reading the report)."""


def verifier_timeout(tests: list[BundleFile], floor: float) -> float:
    """The task's verifier limit: never below the test run's own limit (`timeout` in
    `tests/grading.json`, which `grade.py` gives pytest or the own runner) plus a
    margin. Before, every task's `test.sh` was killed at 120 s while `grade.py` allowed
    its test run 600 s: a test suite of 2 to 10 minutes (seaborn-3187's 250 names, 140 s
    here) ended as `run.verifier-timeout` with the reference correct."""
    for file in tests:
        if file.path != "tests/grading.json":
            continue
        try:
            inner = json.loads(file.content).get("timeout")
        except (ValueError, AttributeError):
            return floor
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return max(floor, float(inner) + VERIFIER_MARGIN_S)
    return floor


def _task_config(
    ctx: SessionContext, replay: Replay, ident: str, kind: TaskKind, step_range: tuple[int, int]
) -> TaskConfig:
    """The task's config with its provenance (which record, which steps, which licence):
    every kind names its source the same way so a task can be traced back to its run."""
    session = replay.session
    source = SourceRef(
        dataset=ctx.dataset,
        revision=None if ctx.revision is None else str(ctx.revision),
        record_id=ctx.record_id,
        format=session.source_format,
        harness=session.harness,
        step_range=step_range,
        license=ctx.license,
        repository=ctx.repository,
        commit=ctx.commit,
        anchor_found_by=ctx.anchor_found_by,
        instance_id=ctx.instance_id,
    )
    return standard_config(
        ident,
        kind=kind,
        source=source,
        generator="repo2rlenv",
        description=f"{kind} task mined from {ctx.record_id}",
    )


def _wheel_files(wheels: dict[str, bytes], task_wheels: dict[str, bytes]) -> list[BundleFile]:
    """The shared wheel folder, the task's own, and `wheels.txt` beside the Dockerfile,
    where no COPY takes it (it names the dependency date's reason, the checkout's
    requirements files and its editable wheel: in the shared folder it would make the
    layers of one version's tasks differ)."""
    files = [
        BundleFile(
            path=f"environment/{PROVENANCE if name == PROVENANCE else f'{folder}/{name}'}",
            content=data,
        )
        for folder, found in ((WHEEL_DIR, wheels), (TASK_WHEEL_DIR, task_wheels))
        for name, data in sorted(found.items())
    ]
    return sorted(files, key=lambda f: f.path)


def _recipe_files(recipe: Recipe | None) -> list[BundleFile]:
    """The files a recipe installs from, under environment/recipe/."""
    if recipe is None:
        return []
    return [
        BundleFile(path=f"environment/{RECIPE_DIR}/{name}", content=data)
        for name, data in sorted(recipe.files.items())
    ]


def _with_installs(
    dockerfile: str,
    replay: Replay,
    start: dict[str, str],
    pytest: bool,
    extra: Installs | None = None,
    wheels: list[str] | None = None,
    session_installs_too: bool = True,
    task_wheels: list[str] | None = None,
    recipe: Recipe | None = None,
    head_lines: list[str] | None = None,
    after_lines: list[str] | None = None,
) -> bytes:
    """The Dockerfile plus a spec's recipe, the dependency wheels, pytest (when the
    verifier needs it), the task's own wheels, and what the session installed: named
    packages before the workspace is copied, local projects after (after the recipe's
    own steps over the checkout). What tasks of one environment share comes first, so
    Docker builds it once for all of them."""
    installs = session_installs(replay.session) if session_installs_too else Installs()
    if extra:
        installs = Installs(
            local=tuple(dict.fromkeys([*installs.local, *extra.local])),
            pins=tuple(dict.fromkeys([*installs.pins, *extra.pins])),
        )
    before, after = dockerfile_lines(installs, start)
    before = [
        *(recipe.shared if recipe else ()),
        *before,
        *wheel_lines(wheels or []),
        *(head_lines or []),
    ]
    after = [*(recipe.after if recipe else ()), *after, *(after_lines or [])]
    head = ("\n".join(before) + "\n" if before else "") + (PYTEST_INSTALL if pytest else "")
    head += "".join(line + "\n" for line in wheel_lines(task_wheels or [], TASK_WHEEL_DIR))
    dockerfile = dockerfile.replace(f"WORKDIR {WORKDIR}\n", f"{head}WORKDIR {WORKDIR}\n", 1)
    return (dockerfile + "".join(line + "\n" for line in after)).encode()


def step_range(replay: Replay, start: int, end: int) -> tuple[int, int]:
    events = replay.session.events[start:end] or replay.session.events[-1:]
    steps = [e.step_id for e in events]
    return (min(steps), max(steps)) if steps else (0, 0)
