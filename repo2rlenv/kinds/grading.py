"""The verifier of session-derived tasks: a pytest run the agent cannot steer.

`tests/grade.py` (standard library only) runs inside the verifier container. It puts
back the protected copies of the tests and pytest configuration that were visible in
the start state, deletes any other conftest/pytest config the agent added (and package
metadata in the workspace declaring a `pytest11` plugin, which pytest would load from
the project folder on sys.path), copies in
the hidden tests, runs pytest in an isolated interpreter with a JUnit report written
outside the workspace, and writes the reward: all-or-nothing for repair, the fraction of
the expected tests that passed for build and extend. A canary pair runs with the tests:
one must pass and one must fail; if the must-fail canary passes (a forged report) or
either is missing, the reward is 0.
"""

from __future__ import annotations

import json

from repo2rlenv.checkout_secrets import HIDDEN, PROTECTED
from schemas import BundleFile

GRADE_PY = r'''"""Verifier written by rlenv-harvest. Reads its settings from /tests/grading.json."""
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SETTINGS = json.loads(Path("/tests/grading.json").read_text())
WORKSPACE = Path("/workspace")
REWARD = Path("/logs/verifier/reward.txt")
CONFIG_NAMES = {"conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg",
                "pyproject.toml", "sitecustomize.py", "usercustomize.py"}


def declares_plugin(path):
    try:
        return "pytest11" in path.read_text(errors="replace")
    except OSError:
        return True


def reset_workspace_controls():
    protected = set(SETTINGS["protected"]) | set(SETTINGS.get("kept", ()))
    for cache in list(WORKSPACE.rglob("__pycache__")):  # a planted .pyc can shadow its source
        shutil.rmtree(cache, ignore_errors=True)
    for path in list(WORKSPACE.rglob("*.pyc")):
        path.unlink(missing_ok=True)
    for path in WORKSPACE.rglob("*"):
        rel = path.relative_to(WORKSPACE).as_posix()
        if path.name in CONFIG_NAMES and rel not in protected and path.name != "pyproject.toml":
            path.unlink()
        elif path.name == "entry_points.txt" and rel not in protected and declares_plugin(path):
            path.unlink()  # package metadata on sys.path: pytest would load its plugin
    for folder, names in (("protected", SETTINGS["protected"]), ("hidden", SETTINGS["hidden"])):
        for rel in names:
            target = WORKSPACE / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.is_dir():
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            shutil.copyfile(Path("/tests") / folder / rel, target)


CANARY = (
    "def test_rlenv_canary_must_pass():\n    assert True\n\n\n"
    "def test_rlenv_canary_must_fail():\n    assert False\n"
)
# Isolated interpreter (no PYTHONPATH, no cwd first on sys.path, so a planted pytest or
# sitecustomize cannot shadow the real one); the project folder goes LAST on sys.path.
RUNNER = ("import sys; sys.path.append(sys.argv.pop(1)); import pytest; "
          "sys.exit(pytest.main(sys.argv[1:]))")


def with_interpreter(path):
    """`path` led by this interpreter's folder when it is not on it: in a published
    instance image the benchmark's environment (conda's `testbed`) holds the commands
    its tests call beside its Python."""
    folder = str(Path(sys.executable).parent)
    return path if folder in path.split(":") else folder + ":" + path


def config_file():
    """The configuration pytest reads: the checkout's file chosen when the task was made
    (restored above), or the verifier's copy of it when the image's recipe rewrites the
    workspace's; never one the agent added."""
    config = SETTINGS.get("config")
    if not config:
        return "/dev/null"
    return str((Path("/tests/config") if SETTINGS.get("config_copy") else WORKSPACE) / config)


def outcome(case):
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    skipped = case.find("skipped")
    if skipped is not None:
        return "xfail" if skipped.get("type") == "pytest.xfail" else "skipped"
    return "passed"


def run_tests():
    """(tests run, tests passed, canaries intact) from the JUnit report; a missing,
    malformed or forged report counts as nothing passed."""
    report = Path("/logs/verifier/junit.xml")
    report.unlink(missing_ok=True)
    cwd = WORKSPACE / SETTINGS["cwd"]
    canary = cwd / "test_rlenv_canary.py"
    canary.write_text(CANARY)
    command = [sys.executable, "-I", "-c", RUNNER, str(cwd), "-q", "-p", "no:cacheprovider",
               "-c", config_file(), "--rootdir", str(cwd),
               f"--junitxml={report}", *SETTINGS["targets"], canary.name]
    env = {"PATH": with_interpreter("/usr/local/bin:/usr/bin:/bin"), "HOME": "/tmp",
           "PYTHONDONTWRITEBYTECODE": "1", **SETTINGS.get("env", {})}
    try:
        subprocess.run(command, cwd=cwd, env=env, timeout=SETTINGS["timeout"])
    except subprocess.TimeoutExpired:
        return 0, 0, False
    try:
        cases = list(ET.parse(report).getroot().iter("testcase"))
    except (OSError, ET.ParseError):
        return 0, 0, False
    canaries = {c.get("name"): outcome(c) for c in cases
                if (c.get("name") or "").startswith("test_rlenv_canary_")}
    intact = canaries == {"test_rlenv_canary_must_pass": "passed",
                          "test_rlenv_canary_must_fail": "failed"}
    real = [c for c in cases if not (c.get("name") or "").startswith("test_rlenv_canary_")]
    if SETTINGS.get("names") is not None:
        return (*named_results(real, SETTINGS["names"]), intact)
    return len(real), sum(outcome(c) == "passed" for c in real), intact


def address(name):
    """A test's address as the JUnit report writes it (pytest's `mangle_test_address`):
    (dotted module and classes, function name with its parameters)."""
    path, bracket, params = name.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".")
    if names[0].endswith(".py"):
        names[0] = names[0][:-3]
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def older_duplicate_id(function):
    """The name pytest 7.2 and older give a repeated parameter id that ends in a digit:
    newer ones number the copies after a `_` (`test_unparse[1234-1234_0]`, as SWE-bench
    rows name them), older ones without it (`test_unparse[1234-12340]`; the bullseye
    verifier's pytest 7.2.1: sphinx-8265). None when `function` has no such suffix."""
    head, bracket, params = function.partition("[")
    stem, underscore, number = params[:-1].rpartition("_")
    if not (bracket and params.endswith("]") and underscore and number.isdigit()):
        return None
    return head + "[" + stem + number + "]" if stem[-1:].isdigit() else None


FAILED_NAMES = "rlenv-failed-names: "
"""The line naming every deciding name that did not pass, as JSON (read back when the
miner settles environment-bound tests, `mining.environment_bound`)."""


def named_results(cases, names):
    """(tests run, tests passed) counted over `names`, the row's names as SWE-bench's
    log parser wrote them from pytest's `-rA` lines: a node id cut at its first
    whitespace, its non-ASCII parameters escaped as pytest escapes them. A case is a
    name's when its address is the name's (`address`) and its function name, cut at
    its first whitespace, is the name's; a name passes when it has a case and all of
    them passed (XFAIL included, as SWE-bench's). A name no case answers is printed.
    Names the task records as environment-bound (PASS_TO_PASS tests that fail in this
    network-less container on the reference and on the untouched start alike) do not
    decide; a FAIL_TO_PASS name always does."""
    found = {}
    for case in cases:
        cut = (case.get("name") or "").split()
        found.setdefault((case.get("classname") or "", cut[0] if cut else ""), []).append(case)
    bound = set(SETTINGS.get("environment_bound", ())) - set(SETTINGS.get("fail_to_pass", ()))
    passed, failed = 0, []
    for name in names:
        module, function = address(name)
        mine = found.get((module, function.split()[0] if function.split() else ""), [])
        older = older_duplicate_id(function) if not mine and function.split() else None
        if older:
            mine = found.get((module, older.split()[0]), [])
        if name in bound:
            print(f"environment-bound, not deciding: {name}")
        elif not mine:
            print(f"not reported by the runner: {name}")
            failed.append(name)
        elif all(outcome(c) in ("passed", "xfail") for c in mine):
            passed += 1
        else:
            print(f"not passed ({', '.join(sorted(outcome(c) for c in mine))}): {name}")
            failed.append(name)
    print(FAILED_NAMES + json.dumps(failed))
    return len([n for n in names if n not in bound]), passed


def main():
    REWARD.parent.mkdir(parents=True, exist_ok=True)
    REWARD.write_text("0\n")
    reset_workspace_controls()
    total, passed, intact = run_tests()
    expected = max(SETTINGS["expected"], 1)
    if not intact:
        reward = 0.0
    elif SETTINGS["mode"] == "all":
        reward = 1.0 if total >= expected and passed == total else 0.0
    else:
        reward = round(passed / max(expected, total), 6)
    print(f"tests: {total} run, {passed} passed, expected {SETTINGS['expected']}, "
          f"canaries {'intact' if intact else 'FORGED OR MISSING'}")
    REWARD.write_text(f"{reward}\n")


if __name__ == "__main__":  # the own-runner verifier loads this file for its reset
    main()
'''

FAILED_NAMES = "rlenv-failed-names: "
"""`grade.py`'s line of the deciding names that did not pass (the same text there)."""

TEST_SH = """#!/bin/bash
# Verifier written by rlenv-harvest: 0 is written first, so a crash scores 0.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd /workspace 2>/dev/null || exit 0
python3 -I /tests/grade.py
"""


def grading_files(
    *,
    mode: str,
    cwd: str,
    targets: list[str],
    expected: int,
    protected: dict[str, str],
    hidden: dict[str, str],
    config: str | None,
    timeout: int = 600,
    names: list[str] | None = None,
    fail_to_pass: list[str] | None = None,
    kept: list[str] | None = None,
    config_copy: str | None = None,
    env: dict[str, str] | None = None,
) -> list[BundleFile]:
    """The verifier's files. `names`, when given, are the tests that decide (a
    benchmark row's names, `named_results` in `tests/grade.py`) and `targets` only
    what pytest is asked to run. `kept` are control files left as the task image has
    them (neither deleted nor restored: a trusted recipe changed them in the image,
    and pytest, always given `-c`, reads no other configuration file). `config_copy`,
    when given, is the checkout's text of `config` where that file is a kept one: the
    verifier hands pytest this copy (`tests/config/`), not the workspace's. `env` is
    added to the test run's environment (a trusted spec's `eval_commands` exports)."""
    settings: dict[str, object] = {
        "mode": mode,
        "cwd": cwd,
        "targets": targets,
        "expected": expected,
        "protected": sorted(protected),
        "hidden": sorted(hidden),
        "config": config,
        "timeout": timeout,
    }
    if names is not None:
        settings["names"] = names
    if fail_to_pass is not None:
        settings["fail_to_pass"] = fail_to_pass
    if kept:
        settings["kept"] = sorted(kept)
    if config_copy is not None:
        settings["config_copy"] = True
    if env:
        settings["env"] = dict(sorted(env.items()))
    files = [
        BundleFile(path="tests/test.sh", content=TEST_SH.encode(), executable=True),
        BundleFile(path="tests/grade.py", content=GRADE_PY.encode()),
        BundleFile(
            path="tests/grading.json",
            content=(json.dumps(settings, indent=2, sort_keys=True) + "\n").encode(),
        ),
    ]
    for rel, text in sorted(protected.items()):
        files.append(BundleFile(path=PROTECTED + rel, content=text.encode()))
    for rel, text in sorted(hidden.items()):
        files.append(BundleFile(path=HIDDEN + rel, content=text.encode()))
    if config and config_copy is not None:
        files.append(BundleFile(path=f"tests/config/{config}", content=config_copy.encode()))
    return files
