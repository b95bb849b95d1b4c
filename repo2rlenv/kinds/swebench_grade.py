"""Verifier of an instance whose repository runs its tests with its own runner.

This file is carried, as it is, into such a task as `tests/grade_swebench.py` and runs
inside the verifier container (standard library only: the toolkit is not installed
there). SWE-bench runs Django's tests with `./tests/runtests.py ...` and SymPy's with
`bin/test ...`, and reads their output with a log parser per repository; this verifier
does the same with SWE-bench's own code, not a copy of it: the pinned `swebench`
package's `harness/constants/`, `harness/log_parsers/` and `harness/grading.py` are
carried into the task's hidden tests folder at mining time (`tests/vendor/`, with the
package's MIT licence and version), and loaded from there by path.

What the agent controls (the workspace, site-packages, anything on `sys.path` but the
standard library) never reaches the parsing: the `swebench` modules are registered with
explicit paths under `/tests/vendor` (no namespace-package lookup that a planted
`swebench` on `sys.path` could win), and the test runner's output is data. The test
run itself is the project's code, as in SWE-bench; a canary pair of our own runs with
it (one must pass, one must fail) and a forged or missing canary scores 0, as the
pytest verifier's canaries do. The protected copies and hidden tests are put back by
`grade.py`'s `reset_workspace_controls` (the same file every task carries), loaded by
path.

Scoring is SWE-bench's `get_eval_tests_report` and `get_resolution_status` (resolved
= every FAIL_TO_PASS and PASS_TO_PASS test passed), and stricter in one point: a test
that SWE-bench's report puts in neither list (reported, but skipped) is not a pass
here. A name the parser never reports is a failure and is printed by name.

PASS_TO_PASS names the miner's oracle settled as environment-bound (`environment_bound`
in `grading.json`: they fail or go unreported in this container on the reference and
the untouched start alike) do not decide, as in the pytest verifier; the names that did
not pass are printed on `grade.py`'s `FAILED_NAMES` line for the miner to read back.

Names are matched in one canonical form on both sides (`canonical_name`): unittest
names a test `test_x (app.tests.Case)` before Python 3.11 and `test_x
(app.tests.Case.test_x)` from 3.11 on, so a row written on one Python (SWE-bench's
Django 4.x rows: 3.9) names the image's runner's results (3.11) in the other format.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

TESTS = Path("/tests")
WORKSPACE = Path("/workspace")
REWARD = Path("/logs/verifier/reward.txt")
LOG = Path("/logs/verifier/test_output.txt")
PASSED = ("PASSED", "XFAIL")
"""SWE-bench's `test_passed`: these statuses count as a pass."""
PACKAGE_MODULES = (
    "swebench.harness.constants",
    "swebench.harness.log_parsers.python",
    "swebench.harness.grading",
)
"""What is loaded of the package: its constants (with every language's tables, which
import only the standard library), the Python log parsers and the grading functions."""
UNITTEST_NAME = re.compile(r"([A-Za-z_]\w*) \(([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,})\)")
"""unittest's `str(test)` from Python 3.11 on: `method (module.Class.method)`, at least
three dotted parts (a module, a class, the method)."""
UNITTEST_ANY = re.compile(r"[A-Za-z_]\w* \([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\)")
"""unittest's `str(test)` of any Python: `method (module.Class)` or, from 3.11 on,
`method (module.Class.method)`."""
AMBIGUOUS = "AMBIGUOUS"
"""The status of a row's name that more than one reported test matches canonically."""
SHOWN = 20
"""How many names of failing tests the verifier prints."""
ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
}


def load_swebench(root: Path) -> types.SimpleNamespace:
    """SWE-bench's parsers and grading functions, from the package files under `root`
    (`root/swebench/harness/...`). The parent packages are registered with explicit
    paths (their `__init__` files import the whole harness: docker, requests...), and
    `swebench.harness.test_spec.test_spec` is a stand-in: the parsers import its
    `TestSpec` for annotations only. `sys.modules` is left as it was found."""
    package = root / "swebench"
    saved = {k: v for k, v in sys.modules.items() if k == "swebench" or k.startswith("swebench.")}
    for name in saved:
        del sys.modules[name]
    try:
        stubs = {}
        for name, path in (
            ("swebench", package),
            ("swebench.harness", package / "harness"),
            ("swebench.harness.log_parsers", package / "harness" / "log_parsers"),
            ("swebench.harness.test_spec", None),
            ("swebench.harness.test_spec.test_spec", None),
        ):
            module = types.ModuleType(name)
            module.__path__ = [str(path)] if path else []  # type: ignore[attr-defined]
            sys.modules[name] = stubs[name] = module

        class TestSpec:  # the parsers' annotations only
            pass

        stubs["swebench.harness.test_spec.test_spec"].TestSpec = TestSpec  # type: ignore[attr-defined]
        for name in PACKAGE_MODULES:
            found = importlib.util.find_spec(name)
            origin = Path(found.origin or "") if found else Path()
            if not origin.resolve().is_relative_to(package.resolve()):
                raise ImportError(f"{name} was not found under {package}")
        python = importlib.import_module("swebench.harness.log_parsers.python")
        # the package's log_parsers/__init__ joins every language's table, and its
        # JavaScript parsers import the harness's utils (dotenv, datasets...): only
        # the Python table is needed, and grading.py reads it under this name
        stubs["swebench.harness.log_parsers"].MAP_REPO_TO_PARSER = python.MAP_REPO_TO_PARSER_PY  # type: ignore[attr-defined]
        grading = importlib.import_module("swebench.harness.grading")
        constants = importlib.import_module("swebench.harness.constants")
        return types.SimpleNamespace(
            parsers=python.MAP_REPO_TO_PARSER_PY,
            report=grading.get_eval_tests_report,
            resolution=grading.get_resolution_status,
            full=constants.ResolvedStatus.FULL.value,
            constants=constants,
        )
    finally:
        for name in [k for k in sys.modules if k == "swebench" or k.startswith("swebench.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def canaries_intact(status: dict[str, str], must_pass: str, must_fail: str) -> bool:
    """The canary that must pass is reported passed and never failed; the one that
    must fail is reported failed (or errored) and never passed. A parser's key names a
    test with more than its function name (Django: `name (module.Class.name)`; SymPy's
    failure headers: `path.py:name`), so keys are matched on the function name."""
    seen: dict[str, set[str]] = {must_pass: set(), must_fail: set()}
    for key, value in status.items():
        name = key.split()[0].rsplit(":", 1)[-1] if key.split() else ""
        if name in seen:
            seen[name].add(value)
    return (
        seen[must_pass] == {"PASSED"}
        and bool(seen[must_fail])
        and seen[must_fail]
        <= {
            "FAILED",
            "ERROR",
        }
    )


def described_results(log: str, parse: Any) -> dict[str, str]:
    """The statuses of tests unittest printed on two lines, under their names. For a
    test whose docstring's first line is non-empty, unittest prints `test_x (app.Case)`
    alone and the docstring's line with the status (`Special characters ... ok`), so
    SWE-bench's parser keys the result by the docstring. A docstring that opens with a
    newline is no description on Python 3.6 (its `shortDescription` takes the first line
    unstripped; 3.9's strips the docstring first), so the rows of 3.6 instances name such
    tests by their names (Django 3.2's
    `test_patterns_escape (expressions.tests.ExpressionsTests)`), which the offline
    base's 3.9 reports under the docstring. Each such pair is joined on one line and read
    by the same parser, so two tests sharing a docstring keep their own statuses."""
    lines = log.split("\n")
    out: dict[str, str] = {}
    for at in range(len(lines) - 1):  # no itertools.pairwise: the image's Python may be 3.9
        name, second = lines[at].strip(), lines[at + 1]
        if UNITTEST_ANY.fullmatch(name) and " ... " in second:
            out.update(parse(f"{name} ... {second.split(' ... ', 1)[1]}", None))
    return out


def canonical_name(name: str) -> str:
    """A test's name in one form whatever Python's unittest printed it: Python 3.11's
    `test_x (app.tests.Case.test_x)` becomes the older `test_x (app.tests.Case)`; any
    other name (a docstring line, SymPy's `test_x`, a pytest node id, a parenthesised
    path of two parts, whose last part is a class, or one that does not end in the
    method's name) is returned unchanged. Within one runner's output the map is
    one-to-one (every name there has the same format); where two names still meet,
    `matched_status` refuses to pick one."""
    found = UNITTEST_NAME.fullmatch(name)
    if found is None:
        return name
    method, owner = found.groups()
    prefix, _, last = owner.rpartition(".")
    return f"{method} ({prefix})" if last == method else name


def matched_status(status: dict[str, str], names: list[str]) -> dict[str, str]:
    """The parser's status of each row name that the runner reported: by the name
    itself, else by its canonical form (`canonical_name`) when exactly one reported
    test has that form and no other row name does; more than one reported test of
    that form gives `AMBIGUOUS` (no pass). Names the runner never reported are left out
    (SWE-bench's report counts them as failures)."""
    reported: dict[str, list[str]] = {}
    for key in status:
        reported.setdefault(canonical_name(key), []).append(key)
    wanted: dict[str, set[str]] = {}
    for name in names:
        wanted.setdefault(canonical_name(name), set()).add(name)
    out: dict[str, str] = {}
    for name in names:
        if name in status:
            out[name] = status[name]
            continue
        form = canonical_name(name)
        keys = reported.get(form, [])
        if len(keys) > 1 or (keys and len(wanted[form]) > 1):
            out[name] = AMBIGUOUS
        elif keys:
            out[name] = status[keys[0]]
    return out


def score(
    swebench: types.SimpleNamespace,
    status: dict[str, str],
    fail_to_pass: list[str],
    pass_to_pass: list[str],
) -> tuple[bool, list[str]]:
    """(resolved, lines that say why not), with SWE-bench's own report; a test in
    neither of its lists (skipped) is not a pass here, and every name that is not a
    pass is listed with what the log said of it. The row's names are matched to the
    log's results in their canonical form (`matched_status`)."""
    status = matched_status(status, [*fail_to_pass, *pass_to_pass])
    report = swebench.report(status, {"FAIL_TO_PASS": fail_to_pass, "PASS_TO_PASS": pass_to_pass})
    resolved = swebench.resolution(report) == swebench.full
    lines = []
    for kind, names in (("FAIL_TO_PASS", fail_to_pass), ("PASS_TO_PASS", pass_to_pass)):
        bad = [n for n in names if status.get(n) not in PASSED]
        lines.append(f"{kind}: {len(names) - len(bad)} of {len(names)} passed")
        for name in bad[:SHOWN]:
            lines.append(f"  {status.get(name, 'not reported by the runner')}: {name}")
        if len(bad) > SHOWN:
            lines.append(f"  {len(bad) - SHOWN} more not passed")
    passed_all = all(status.get(n) in PASSED for n in [*fail_to_pass, *pass_to_pass])
    return resolved and passed_all, lines


def decide(
    swebench: types.SimpleNamespace,
    status: dict[str, str],
    runner: dict[str, Any],
    bound: list[str],
    failed_names_prefix: str,
) -> tuple[bool, list[str]]:
    """`score` over the row's names less the PASS_TO_PASS ones the miner's oracle settled
    as environment-bound (`mining.environment_bound`; a FAIL_TO_PASS name in `bound`
    still decides), with a line for each settled name and, last, the line the miner
    reads back: every deciding name that did not pass, as JSON after
    `failed_names_prefix` (`grade.py`'s `FAILED_NAMES`)."""
    fail_to_pass = list(runner["fail_to_pass"])
    dropped = set(bound) - set(fail_to_pass)
    pass_to_pass = [n for n in runner["pass_to_pass"] if n not in dropped]
    resolved, lines = score(swebench, status, fail_to_pass, pass_to_pass)
    settled = [n for n in runner["pass_to_pass"] if n in dropped]
    lines += [f"environment-bound, not deciding: {n}" for n in settled]
    deciding = [*fail_to_pass, *pass_to_pass]
    matched = matched_status(status, deciding)
    failed = [n for n in deciding if matched.get(n) not in PASSED]
    lines.append(failed_names_prefix + json.dumps(failed))
    return resolved, lines


def command(settings: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The runner's argv (the checkout's script run by this interpreter, not by its
    shebang: the image may have no `python`) and environment."""
    runner = settings["runner"]
    argv = [sys.executable, *runner["argv"], *runner["labels"], runner["canary"]["label"]]
    folder = str(Path(sys.executable).parent)  # a published image's environment first
    path = ENV["PATH"] if folder in ENV["PATH"].split(":") else f"{folder}:{ENV['PATH']}"
    return argv, {**ENV, "PATH": path, **runner["env"]}


def run_tests(settings: dict[str, Any]) -> str:
    """The runner's output (stdout and stderr together, as SWE-bench's log), after the
    canary folder is replaced by ours (a folder, file or symlink the agent left there
    goes first)."""
    canary = settings["runner"]["canary"]
    folder = WORKSPACE / canary["folder"]  # ours alone: whatever the agent put there goes
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)
    for rel, text in canary["files"].items():
        target = WORKSPACE / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    argv, env = command(settings)
    try:
        done = subprocess.run(
            argv,
            cwd=WORKSPACE,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=settings["timeout"],
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or b""
        return out.decode("utf-8", "replace") + "\nrlenv: the test run timed out\n"
    return done.stdout.decode("utf-8", "replace")


def main() -> None:
    REWARD.parent.mkdir(parents=True, exist_ok=True)
    REWARD.write_text("0\n")
    settings = json.loads((TESTS / "grading.json").read_text())
    spec = importlib.util.spec_from_file_location("rlenv_grade", TESTS / "grade.py")
    if spec is None or spec.loader is None:
        raise SystemExit("grade.py missing")
    grade = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grade)  # its main() runs only as a script
    grade.reset_workspace_controls()
    swebench = load_swebench(TESTS / "vendor")
    runner = settings["runner"]
    log = run_tests(settings)
    LOG.write_text(log)
    parse = swebench.parsers[runner["repo"]]
    status = parse(log, None)
    for name, value in described_results(log, parse).items():
        status.setdefault(name, value)
    canary = runner["canary"]
    intact = canaries_intact(status, canary["must_pass"], canary["must_fail"])
    bound = [str(n) for n in settings.get("environment_bound") or []]
    resolved, lines = decide(swebench, status, runner, bound, grade.FAILED_NAMES)
    print("\n".join(lines))
    print(
        f"runner: {runner['source']} {runner['repo']} {runner['version']}; "
        f"{len(status)} results parsed; canaries {'intact' if intact else 'FORGED OR MISSING'}"
    )
    REWARD.write_text(f"{1.0 if resolved and intact else 0.0}\n")


if __name__ == "__main__":
    main()
