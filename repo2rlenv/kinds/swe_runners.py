"""Each instance's own test command and log parser (issue #26, point 1).

SWE-bench runs most repositories' tests with pytest, but Django's with
`./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 <labels>` and
SymPy's with `bin/test -C --verbose <files>`, and reads each output with a log parser of
its own (`parse_log_django`, `parse_log_sympy`). An instance of those repositories names
its tests as that parser reports them (`test_x (app.tests.Case.test_x)` on Python 3.11,
`test_x (app.tests.Case)` before it, `test_x`), so only that command and that parser can
decide it (the verifier matches either unittest form: `swebench_grade.canonical_name`).
All of it is taken from the pinned `swebench` package, not written again here:

- the command: the spec's `test_cmd` (`MAP_REPO_VERSION_TO_SPECS`, via `swe_specs`);
- the labels: the package's `get_test_directives` (Django's `tests/foo/test_bar.py` ->
  `foo.test_bar`; SymPy's file paths), read from its source and run on the host, since
  its module imports the harness (requests, datasets);
- the parser and the scoring: the package's `harness/constants/`,
  `harness/log_parsers/python.py` and `harness/grading.py`, carried into the task's
  hidden tests folder (`tests/vendor/`, with the package's licence, version and each
  file's RECORD hash) and run there by `swebench_grade.py` (`tests/grade_swebench.py`).

What is ours: the canary pair run with the tests (per runner, in the runner's own test
format) and the runner files restored from protected copies (Django's `runtests.py` and
its settings module, SymPy's `bin/test`): the agent edits the workspace, and these
decide what runs and how it is reported.

Other repositories keep the pytest verifier (`grading.py`).
"""

from __future__ import annotations

import ast
import base64
import functools
import hashlib
import json
import posixpath
import re
import shlex
import threading
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel, ConfigDict

from repo2rlenv.kinds import swebench_grade
from repo2rlenv.kinds.common import Reject
from repo2rlenv.kinds.grading import TEST_SH, grading_files
from repo2rlenv.kinds.swe_specs import DISTRIBUTION, spec_for
from schemas import BundleFile

VENDOR = "tests/vendor"
"""Where the package's files go in the task (the verifier's /tests/vendor)."""
GRADER = "tests/grade_swebench.py"
VENDORED = (
    "swebench/harness/constants/",
    "swebench/harness/log_parsers/python.py",
    "swebench/harness/grading.py",
)
"""The package files the verifier loads (`swebench_grade.PACKAGE_MODULES`)."""
DIRECTIVES = "swebench/harness/test_spec/python.py"
ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

DJANGO_CANARY = """from django.test import SimpleTestCase


class RlenvCanary(SimpleTestCase):
    def test_rlenv_canary_must_pass(self):
        pass

    def test_rlenv_canary_must_fail(self):
        self.fail("canary")
"""
SYMPY_CANARY = """def test_rlenv_canary_must_pass():
    assert True


def test_rlenv_canary_must_fail():
    assert False
"""


class Canary(BaseModel):
    """Tests of our own that run with the instance's: one must pass, one must fail."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    folder: str
    """The canary's own folder in the workspace: the verifier replaces it whole."""
    files: dict[str, str]
    must_pass: str = "test_rlenv_canary_must_pass"
    must_fail: str = "test_rlenv_canary_must_fail"


class RunnerKind(BaseModel):
    """What this project adds to SWE-bench's command for one repository."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    canary: Canary
    protected: tuple[str, ...]
    """Files of the checkout that steer the run (the runner, its settings): the
    verifier restores them, whatever the agent did."""


RUNNER_KINDS: dict[str, RunnerKind] = {
    "django/django": RunnerKind(
        # a test app of runtests.py's own kind: a folder of tests/ with __init__.py
        canary=Canary(
            label="rlenv_canary",
            folder="tests/rlenv_canary",
            files={
                "tests/rlenv_canary/__init__.py": "",
                "tests/rlenv_canary/tests.py": DJANGO_CANARY,
            },
        ),
        protected=("tests/runtests.py", "tests/test_sqlite.py"),
    ),
    "sympy/sympy": RunnerKind(
        # bin/test runs the files under sympy/ whose path holds a given argument
        canary=Canary(
            label="sympy/rlenv_canary/test_rlenv_canary.py",
            folder="sympy/rlenv_canary",
            files={"sympy/rlenv_canary/test_rlenv_canary.py": SYMPY_CANARY},
        ),
        protected=("bin/test",),
    ),
}
"""Repositories SWE-bench tests with their own runner (not pytest)."""


class OwnRunner(BaseModel):
    """An instance's test run: SWE-bench's command for its repository and version."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repo: str
    version: str
    source: str
    """`swebench 4.1.0`: where the command, labels and parser come from."""
    test_cmd: str
    argv: tuple[str, ...]
    """The command's words after its environment assignments; the first is a script
    of the checkout (run by the image's interpreter)."""
    env: dict[str, str]
    """The test run's environment: the spec's `eval_commands` exports (Django 2.x/3.x:
    `LANG=en_US.UTF-8`, the locale the recipe's build generates), then the command's
    own assignments."""
    labels: tuple[str, ...]
    kind: RunnerKind


def needs_own_runner(repo: str) -> bool:
    return repo in RUNNER_KINDS


def own_runner(repo: str, version: str | None, test_patch: str, start: dict[str, str]) -> OwnRunner:
    """The instance's runner, or Reject `instance.runner-unsupported` naming what is
    missing (no swebench package, no spec for the version, a command that is not a
    script of the checkout)."""
    spec = spec_for(repo, version)
    if spec is None or not spec.test_cmd:
        raise Reject(
            "instance.runner-unsupported",
            f"{repo} runs its tests with its own runner: SWE-bench's spec for version "
            f"{version} is needed (pip install --no-deps swebench==4.1.0)",
        )
    env, argv = split_command(spec.test_cmd)
    env = {**spec.eval_environment()[1], **env}  # the eval script's exports, then the command's
    script = posixpath.normpath(argv[0]) if argv else ""
    if script not in start:
        raise Reject(
            "instance.runner-unsupported",
            f"{spec.source} {repo} {version}: the test command's program {script or '?'} "
            "is not a file of the checkout",
        )
    labels = tuple(test_directives(repo, test_patch))
    if not labels:
        raise Reject("instance.no-tests", f"the test patch names no test file of {repo}")
    return OwnRunner(
        repo=repo,
        version=str(version),
        source=spec.source,
        test_cmd=spec.test_cmd,
        argv=(script, *argv[1:]),
        env=env,
        labels=labels,
        kind=RUNNER_KINDS[repo],
    )


def split_command(test_cmd: str) -> tuple[dict[str, str], list[str]]:
    """(environment, argv) of a spec's `test_cmd`: leading `NAME=value` words are the
    environment (SymPy's `PYTHONWARNINGS='ignore::UserWarning,...' bin/test ...`)."""
    words = shlex.split(test_cmd)
    env: dict[str, str] = {}
    while words and ENV_WORD.match(words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    return env, words


def _root() -> Path:
    """The installed package's site-packages folder (Reject when it is absent)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError as exc:
        raise Reject(
            "instance.runner-unsupported", "the swebench package is not installed"
        ) from exc
    return Path(str(dist.locate_file("")))


_LOADING = threading.Lock()


def _package() -> SimpleNamespace:
    """The package's parsers and constants, loaded once. `load_swebench` swaps entries of
    `sys.modules` while it loads, so two mining threads loading at once broke each
    other (`KeyError: 'swebench.harness.log_parsers.python'` under `mine -j 2`): the
    first load holds a lock."""
    with _LOADING:
        return _load_package()


@functools.cache
def _load_package() -> SimpleNamespace:
    return swebench_grade.load_swebench(_root())


def test_directives(repo: str, test_patch: str) -> list[str]:
    """SWE-bench's labels for a test patch: its `get_test_directives`, taken from the
    package's source and run with the package's own constants (`NON_TEST_EXTS`). Its
    module cannot be imported without the harness's dependencies (requests), and the
    function itself uses only `re` and those constants."""
    path = _root() / DIRECTIVES
    tree = ast.parse(path.read_text(), str(path))
    found = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_test_directives"
    ]
    if not found:
        raise Reject("instance.runner-unsupported", f"no get_test_directives in {DIRECTIVES}")
    constants = _package().constants
    namespace: dict[str, Any] = {
        "re": re,
        "NON_TEST_EXTS": constants.NON_TEST_EXTS,
        "SWEbenchInstance": constants.SWEbenchInstance,
    }
    exec(compile(ast.Module(body=found, type_ignores=[]), str(path), "exec"), namespace)
    return list(namespace["get_test_directives"]({"repo": repo, "test_patch": test_patch}))


def vendored_files() -> dict[str, bytes]:
    """`tests/vendor/...` -> bytes: the package files the verifier loads, each checked
    against the installed distribution's RECORD hash (a modified install is refused),
    its licence, and `SOURCE.txt` naming the version and every file's hash."""
    dist = metadata.distribution(DISTRIBUTION)
    out: dict[str, bytes] = {}
    lines = [f"{DISTRIBUTION} {dist.version} (MIT licence: LICENSE), loaded by grade_swebench.py\n"]
    for record in sorted(dist.files or [], key=str):
        name = str(record).replace("\\", "/")
        is_licence = name.endswith(".dist-info/licenses/LICENSE")
        if not (is_licence or (name.endswith(".py") and name.startswith(VENDORED))):
            continue
        if name.startswith("swebench/harness/constants/") and name.count("/") != 3:
            continue
        data = Path(str(dist.locate_file(record))).read_bytes()
        if record.hash is not None:
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            if record.hash.value != digest:
                raise Reject("instance.runner-unsupported", f"{name} differs from its RECORD hash")
        target = "LICENSE" if is_licence else name
        out[f"{VENDOR}/{target}"] = data
        lines.append(f"{target} sha256={hashlib.sha256(data).hexdigest()}\n")
    out[f"{VENDOR}/SOURCE.txt"] = "".join(lines).encode()
    return out


def runner_grading_files(
    runner: OwnRunner,
    *,
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    start: dict[str, str],
    protected: dict[str, str],
    hidden: dict[str, str],
    timeout: int = 600,
    kept: list[str] | None = None,
) -> list[BundleFile]:
    """The verifier of an own-runner instance: `grade.py`'s protected copies and hidden
    tests (plus the runner's own files), `grade_swebench.py` in place of the pytest run,
    and the package files it loads. Names are taken as the row gives them (the verifier
    matches them to the log's in `swebench_grade.canonical_name`'s form)."""
    protected = {
        **protected,
        **{p: start[p] for p in runner.kind.protected if p in start and p not in hidden},
    }
    targets = [*fail_to_pass, *pass_to_pass]
    files = grading_files(
        mode="all",
        cwd="",
        targets=list(runner.labels),
        expected=len(targets),
        protected=protected,
        hidden=hidden,
        config=None,
        timeout=timeout,
    )
    settings = {
        "mode": "all",
        "cwd": "",
        "targets": list(runner.labels),
        "expected": len(targets),
        "protected": sorted(protected),
        "hidden": sorted(hidden),
        "config": None,
        "timeout": timeout,
        **({"kept": sorted(kept)} if kept else {}),
        "runner": {
            "repo": runner.repo,
            "version": runner.version,
            "source": runner.source,
            "test_cmd": runner.test_cmd,
            "argv": list(runner.argv),
            "env": runner.env,
            "labels": list(runner.labels),
            "fail_to_pass": fail_to_pass,
            "pass_to_pass": pass_to_pass,
            "canary": runner.kind.canary.model_dump(),
        },
    }
    replaced = {
        "tests/test.sh": TEST_SH.replace("/tests/grade.py", f"/{GRADER}").encode(),
        "tests/grading.json": (json.dumps(settings, indent=2, sort_keys=True) + "\n").encode(),
    }
    out = [
        BundleFile(path=f.path, content=replaced[f.path], executable=f.executable)
        if f.path in replaced
        else f
        for f in files
    ]
    out.append(BundleFile(path=GRADER, content=Path(swebench_grade.__file__).read_bytes()))
    out += [BundleFile(path=p, content=c) for p, c in sorted(vendored_files().items())]
    return out
