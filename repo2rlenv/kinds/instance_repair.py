"""Instance-backed repair: a SWE-style run joined to its instance row (`--instances`).

Most agents that fixed a SWE-bench bug never ran the repository's tests (they ran a
reproduction script), so the session-derived repair kind finds nothing in them. The
instance supplies what the run lacks:

- start state: the repository at `base_commit` (the run's anchor), no history;
- instruction: the instance's problem statement, redacted, paths rewritten;
- verifier: the instance's `test_patch`, applied only in the verifier (its files are
  hidden tests, never in the agent's image), scoring `FAIL_TO_PASS` + `PASS_TO_PASS`
  all-or-nothing with pytest;
- image: the instance's published image when the engine has it or a registry serves it
  (`instance_image`: SWE-bench's per-instance image, SWE-rebench's `docker_image`), as
  it is; else the checkout on the path as an editable install, plus the test
  dependencies its packaging files declare (`instance_wheels`);
- reference: the run's own submission patch. It is kept only when the oracle proves it
  (reference 1, start 0); without Docker the task stays unverified.

Repositories whose SWE-bench tests use their own runner (Django's `runtests.py`,
SymPy's `bin/test`) are run and read as SWE-bench does (`swe_runners`); without the
spec that says how, they are refused with `instance.runner-unsupported`.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Iterator
from typing import Any

from repo2rlenv.checkout_secrets import published_test_secrets
from repo2rlenv.kinds.common import (
    Reject,
    SessionContext,
    build_bundle,
    check_has_no_secrets,
    clean_instruction,
    reference_script,
    step_range,
)
from repo2rlenv.kinds.grading import grading_files
from repo2rlenv.kinds.installs import Installs
from repo2rlenv.kinds.instance_image import on_published_image
from repo2rlenv.kinds.instance_wheels import (
    InstanceEnvironment,
    instance_spec,
    instance_wheels,
)
from repo2rlenv.kinds.pytest_config import pytest_config
from repo2rlenv.kinds.swe_conda import verifier_prints_list
from repo2rlenv.kinds.swe_names import addressless, files_to_run
from repo2rlenv.kinds.swe_offline import TEST_ROOTS
from repo2rlenv.kinds.swe_reference import reference_part_size, split_submission
from repo2rlenv.kinds.swe_runners import (
    OwnRunner,
    needs_own_runner,
    own_runner,
    runner_grading_files,
)
from repo2rlenv.kinds.swe_specs import SweSpec
from repo2rlenv.replay.patches import PatchError, apply_hunks, parse_unified_diff
from repo2rlenv.replay.replay import Replay
from schemas import BundleFile, TaskBundle
from schemas.provenance import SweRecipe, SweRunProvenance

CONTROL_FILES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "sitecustomize.py",
    }
)
"""Files the verifier restores (it deletes unknown conftest/pytest configs)."""
INDEX = 1000
"""Task index of the instance repair, apart from the session-derived repairs (0, 1...)."""


def candidates(replay: Replay, ctx: SessionContext) -> Iterator[TaskBundle | Reject]:
    if ctx.commit is None:
        return  # not anchored on a checkout: nothing to start from
    if ctx.instance is None:
        if ctx.instance_id:
            # anchored by its own record (SWE-agent `replay_config`), but no table row
            # holds the tests: say so, rather than leave only the other kinds' reasons
            yield Reject("instance.not-in-table", f"{ctx.instance_id} is in no --instances table")
        return
    try:
        yield _build(replay, ctx, ctx.instance)
    except Reject as reject:
        yield reject


def _build(replay: Replay, ctx: SessionContext, instance: Any) -> TaskBundle:
    if not instance.test_patch.strip() or not instance.FAIL_TO_PASS:
        raise Reject("instance.no-tests", f"{instance.instance_id} has no test patch or tests")
    submission = _submission(replay)
    if not submission.strip():
        raise Reject("instance.no-submission", "the run submitted no patch")
    start = _checkout(replay, instance)
    changes, hidden, dropped_tests = _patched(start, submission, instance.test_patch)
    runner = (
        own_runner(instance.repo, instance.version, instance.test_patch, start)
        if needs_own_runner(instance.repo)
        else None
    )
    image, image_fallback = ctx.instance_image(instance) if ctx.instance_image else (None, None)
    _check_buildable(start, instance, published_image=image is not None)
    check_has_no_secrets({**start, **{p: c for p, c in changes.items() if c}}, ctx.published)
    environment = (
        InstanceEnvironment({}, {})  # the published image is the environment
        if image is not None
        else instance_wheels(
            replay, ctx, instance, start, with_pytest=runner is None and not _tests_itself(instance)
        )
    )
    binaries = _binaries(ctx, start, hidden)
    tests = _verifier_files(instance, start, hidden, runner, environment.spec)
    tests = verifier_prints_list(tests, environment.recipe.files if environment.recipe else {})
    instruction = (
        clean_instruction(instance.problem_statement, replay)
        + "\n\nChange the code in /workspace so that this issue is resolved. "
        "Do not modify the tests.\n"
    )
    events = len(replay.session.events)
    if environment.base_image:  # the offline base of the spec's Python
        ctx = dataclasses.replace(ctx, base_image=environment.base_image)
    bundle = build_bundle(
        ctx,
        replay,
        kind="repair",
        index=INDEX,
        instruction=instruction,
        start=start,
        tests=tests,
        solve_sh=reference_script(changes),
        step_range=step_range(replay, 0, events),
        # a recipe installs the verifier's pytest itself, after the spec's own
        needs_pytest=runner is None and environment.recipe is None,
        # the checkout installed as SWE-bench does (`pip install -e .`): a .pth, offline
        installs=Installs(local=("",)),
        wheels=environment.wheels,
        task_wheels=environment.own,
        recipe=environment.recipe,
        session_installs_too=False,  # its named packages are among the wheels
        start_binaries=binaries,
    )
    from_image: list[str] = []
    if image is not None:
        bundle, from_image = on_published_image(bundle, image, ctx.instance_image_files)
    block = bundle.config.metadata.repo2rlenv
    if block is not None:
        block.swe = SweRunProvenance(
            dropped_test_files=dropped_tests,
            addressless_tests=[]
            if runner
            else addressless([*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS], {**start, **hidden}),
            instance=instance.environment(),
            image=image,
            image_fallback=image_fallback,
            image_protected_files=from_image,
            recipe=_recipe_provenance(environment.spec, environment.image_python),
            published_test_secrets=published_test_secrets(bundle.files, start, ctx.published),
        )
    return bundle


def _patched(
    start: dict[str, str], submission: str, test_patch: str
) -> tuple[dict[str, str | None], dict[str, str], list[str]]:
    """The run's fix, the hidden tests and the test files dropped from the fix. SWE-bench
    lays the test patch over the model's patch, so test files the model touched are not
    part of the fix; a patch that does not apply is a counted rejection."""
    try:
        changes = apply_patch(start, submission)
        test_changes = apply_patch(start, test_patch)
    except PatchError as exc:
        raise Reject("instance.patch-does-not-apply", str(exc)[:200]) from exc
    hidden = {p: c for p, c in test_changes.items() if c is not None}
    changes, dropped_tests = split_submission(changes, set(test_changes))
    return changes, hidden, dropped_tests


def _check_buildable(start: dict[str, str], instance: Any, *, published_image: bool) -> None:
    """Refuse a checkout whose tests need compiled extensions nobody builds: a published
    image, or a trusted spec's install inside the image build (compilers from Debian,
    `swe_recipe`), builds them; only the wheel route cannot."""
    if published_image or instance_spec(instance) is not None:
        return
    compiled = compiled_sources(start)
    if compiled:
        raise Reject(
            "instance.build-unsupported",
            f"the checkout has compiled extensions ({', '.join(compiled[:3])}): its tests "
            "need them built, and no spec recipe or published image builds them",
        )


SELF_TESTED = frozenset({"pytest-dev/pytest"})
"""Repositories whose tests run under the checkout itself, as SWE-bench runs them: the
spec's install makes the checkout the image's pytest, and the verifier's pinned pytest
installed over it would test that release instead of the agent's code (every real
pytest run was refused: `cannot import name 'Testdir'`, `not reported by the runner`)."""


def _tests_itself(instance: Any) -> bool:
    return instance.repo in SELF_TESTED and instance_spec(instance) is not None


def _recipe_provenance(spec: SweSpec | None, image_python: str) -> SweRecipe | None:
    """Which spec built the image, and its Python beside the image's (the offline base
    closest to it, `offline_bases`: where they differ, the oracle decides)."""
    if spec is None:
        return None
    return SweRecipe(
        source=spec.source,
        repo=spec.repo,
        version=spec.version,
        spec_python=spec.python,
        image_python=image_python,
        pre_install=list(spec.pre_install),
        install=list(spec.install_steps()),
    )


def _verifier_files(
    instance: Any,
    start: dict[str, str],
    hidden: dict[str, str],
    runner: OwnRunner | None,
    spec: SweSpec | None = None,
) -> list[BundleFile]:
    """The verifier: the instance's tests (hidden ones from its test patch, control
    files of the checkout restored), run by pytest or by the repository's own runner.
    A `tox.ini` or `setup.cfg` the spec's `pre_install` changes is left as the image's
    recipe made it (`KEPT_CONTROLS`), not put back to the checkout's copy."""
    targets = [*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]
    if runner is None:
        unknown = set(addressless(targets, {**start, **hidden}))
        targets = [name for name in targets if name not in unknown]
    protected = {
        p: c for p, c in start.items() if p.rsplit("/", 1)[-1] in CONTROL_FILES and p not in hidden
    }
    named = spec.pre_install_paths(protected) if spec is not None else frozenset()
    kept = sorted(p for p in named if p.rsplit("/", 1)[-1] in KEPT_CONTROLS)
    # the test patch may change the configuration too (its copy is put in place)
    config = pytest_config({**start, **hidden})
    config_copy = {**start, **hidden}[config] if config in kept else None
    protected = {p: c for p, c in protected.items() if p not in kept}
    # a test file the patch only renames (sqlfluff-1733: `std_L016_L36_combo.py` ->
    # `..._test.py`) is in the agent's image already under its old name: the verifier
    # restores it as a protected copy, not a hidden one (no secret, and no leak finding)
    visible = set(start.values())
    moved = {p: c for p, c in hidden.items() if c in visible}
    hidden = {p: c for p, c in hidden.items() if p not in moved}
    protected.update(moved)
    if runner is None:
        patch_order = [patch.path for patch in parse_unified_diff(instance.test_patch)]
        tests = grading_files(
            mode="all",
            cwd="",
            targets=files_to_run(targets, patch_order),
            expected=len(targets),
            names=targets,
            fail_to_pass=list(instance.FAIL_TO_PASS),
            kept=kept,
            protected=protected,
            hidden=hidden,
            config=config,
            config_copy=config_copy,
            env=spec.eval_environment()[1] if spec is not None else None,
        )
    else:
        tests = runner_grading_files(
            runner,
            fail_to_pass=list(instance.FAIL_TO_PASS),
            pass_to_pass=list(instance.PASS_TO_PASS),
            start=start,
            protected=protected,
            hidden=hidden,
            kept=kept,
        )
    return tests


KEPT_CONTROLS = ("tox.ini", "setup.cfg")
"""Control files a verifier may leave as the image has them: pytest runs with `-c`
(the checkout's configuration file, `pytest_config`, or `/dev/null`); when the file
pytest reads is a kept one, the verifier hands pytest the checkout's copy of it, never
the workspace's, and an own runner reads neither. A `conftest.py` or `pytest.ini` a
`pre_install` names is still put back (the checkout's copy)."""


def _binaries(
    ctx: SessionContext, start: dict[str, str], hidden: dict[str, str]
) -> dict[str, bytes]:
    """The checkout's binary files (test data the instance's tests open), except any
    path the start state or the hidden tests already give."""
    if ctx.binary_files is None:
        return {}
    found = ctx.binary_files()  # raises Reject (anchor.*) when the checkout is unreadable
    return {p: d for p, d in found.items() if p not in start and p not in hidden}


def compiled_sources(start: dict[str, str]) -> list[str]:
    """Sources of extensions a checkout must compile before its tests import it: Cython
    files, and extension-helpers' `setup_package.py` with `get_extensions` (astropy).
    A plain `Extension(` in setup.py is not enough (pvlib's optional C SPA is one).
    Building them needs a compiler, headers and build requirements in the image, at the
    instance's versions, offline; that is not done, so such runs are refused honestly
    rather than failing the oracle as if the run had not resolved its instance.
    Cython files in the top-level test folder are fixtures that nothing builds (Sphinx's
    `tests/roots/test-ext-autodoc/target/cython.pyx`, read by autodoc as text)."""
    return sorted(
        path
        for path, text in start.items()
        if (path.endswith((".pyx", ".pxd")) and path.split("/", 1)[0] not in TEST_ROOTS)
        or (path.endswith("setup_package.py") and "def get_extensions" in text)
    )


def is_instance_task(bundle: TaskBundle) -> bool:
    """A task this kind made: its id ends `-<INDEX>-<digest>` (`common.task_id`)."""
    parts = bundle.task_id.rsplit("-", 2)
    return len(parts) == 3 and parts[1] == str(INDEX)


def _checkout(replay: Replay, instance: Any = None) -> dict[str, str]:
    """The repository as it was before the run's first event: the anchored checkout.
    Files the run created later are unknown at that point and are not part of it. A
    file the run read otherwise than the checkout has it is unknown too, unless the
    instance's trusted recipe changes it (`SweSpec.pre_install_paths`): then the run
    saw the recipe's work, and the start is the checkout's copy, which the task
    image's recipe changes again."""
    files = replay.workspace.files
    seeded = {p: h.initial.content for p, h in files.items() if h.seeded and h.initial.content}
    spec = instance_spec(instance) if instance is not None else None
    recipe = spec.pre_install_paths(seeded) if spec is not None else frozenset()
    return {
        path: seeded[path] if path in recipe else state.content
        for path, state in replay.workspace.snapshot(0).items()
        if path in recipe or (state.status == "known" and state.content is not None)
    }


def reference_size(replay: Replay) -> tuple[int, int]:
    """(changed lines, bytes) of the run's submission without its test files (what the
    reference keeps, `swe_reference`): how several runs of one instance are ranked, the
    smallest reference first."""
    return reference_part_size(_submission(replay))


def _submission(replay: Replay) -> str:
    extra = replay.session.trajectory.extra or {}
    block = extra.get("swe") if isinstance(extra, dict) else None
    value = block.get("submission") if isinstance(block, dict) else None
    return value if isinstance(value, str) else ""


def apply_patch(files: dict[str, str], diff: str) -> dict[str, str | None]:
    """The files a unified diff changes, with their new content (None = deleted). Paths
    are the diff's own, relative to the repository root; one that leaves it, or a file
    the diff updates but the checkout lacks, raises PatchError."""
    patches = parse_unified_diff(diff)
    if not patches:
        raise PatchError("no file in the patch")
    out: dict[str, str | None] = {}
    for patch in patches:
        path = _inside(patch.path)
        current = out[path] if path in out else files.get(path)
        if patch.op == "delete":
            out[path] = None
        elif patch.op == "add":
            out[path] = patch.added or ""
        elif current is None:
            raise PatchError(f"{path} is not in the checkout")
        else:
            out[path] = apply_hunks(current, patch.hunks)
        if patch.move_to:
            out[_inside(patch.move_to)], out[path] = out[path], None
    return out


def _inside(path: str) -> str:
    clean = posixpath.normpath(path)
    if clean.startswith(("/", "../")) or clean in ("..", "."):
        raise PatchError(f"{path!r} is outside the repository")
    return clean
