"""The verifier of session-derived tasks: a pytest run the agent cannot steer.

`tests/grade.py` (standard library only) runs inside the verifier container. It puts
back the protected copies of the tests and pytest configuration that were visible in
the start state, deletes any other conftest/pytest config the agent added, copies in
the hidden tests, runs pytest in isolated mode with a JUnit report written outside the
workspace, and writes the reward: all-or-nothing for repair, the fraction of the
expected tests that passed for build and extend.
"""

from __future__ import annotations

import json

from schemas import BundleFile

GRADE_PY = r'''"""Verifier written by rlenv-harvest. Reads its settings from /tests/grading.json."""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SETTINGS = json.loads(Path("/tests/grading.json").read_text())
WORKSPACE = Path("/workspace")
REWARD = Path("/logs/verifier/reward.txt")
CONFIG_NAMES = {"conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
                "sitecustomize.py", "usercustomize.py"}


def reset_workspace_controls():
    protected = set(SETTINGS["protected"])
    for path in WORKSPACE.rglob("*"):
        rel = path.relative_to(WORKSPACE).as_posix()
        if path.name in CONFIG_NAMES and rel not in protected and path.name != "pyproject.toml":
            path.unlink()
    for folder, names in (("protected", SETTINGS["protected"]), ("hidden", SETTINGS["hidden"])):
        for rel in names:
            target = WORKSPACE / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.is_dir():
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            shutil.copyfile(Path("/tests") / folder / rel, target)


def run_tests():
    report = Path("/logs/verifier/junit.xml")
    report.unlink(missing_ok=True)
    cwd = WORKSPACE / SETTINGS["cwd"]
    config = SETTINGS.get("config") or "/dev/null"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
               str(WORKSPACE / config) if config != "/dev/null" else config,
               "--rootdir", str(cwd), f"--junitxml={report}", *SETTINGS["targets"]]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": str(cwd)}
    try:
        done = subprocess.run(command, cwd=cwd, env=env, timeout=SETTINGS["timeout"])
        code = done.returncode
    except subprocess.TimeoutExpired:
        return 0, 0, -1
    if not report.exists():
        return 0, 0, code
    root = ET.parse(report).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    return total, total - bad - skipped, code


def main():
    REWARD.parent.mkdir(parents=True, exist_ok=True)
    REWARD.write_text("0\n")
    reset_workspace_controls()
    total, passed, code = run_tests()
    expected = max(SETTINGS["expected"], total, 1)
    if SETTINGS["mode"] == "all":
        reward = 1.0 if code == 0 and total >= SETTINGS["expected"] and passed == total else 0.0
    else:
        reward = round(passed / expected, 6)
    print(f"tests: {total} run, {passed} passed, expected {SETTINGS['expected']}, exit {code}")
    REWARD.write_text(f"{reward}\n")


main()
'''

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
) -> list[BundleFile]:
    settings = {
        "mode": mode,
        "cwd": cwd,
        "targets": targets,
        "expected": expected,
        "protected": sorted(protected),
        "hidden": sorted(hidden),
        "config": config,
        "timeout": timeout,
    }
    files = [
        BundleFile(path="tests/test.sh", content=TEST_SH.encode(), executable=True),
        BundleFile(path="tests/grade.py", content=GRADE_PY.encode()),
        BundleFile(
            path="tests/grading.json",
            content=(json.dumps(settings, indent=2, sort_keys=True) + "\n").encode(),
        ),
    ]
    for rel, text in sorted(protected.items()):
        files.append(BundleFile(path=f"tests/protected/{rel}", content=text.encode()))
    for rel, text in sorted(hidden.items()):
        files.append(BundleFile(path=f"tests/hidden/{rel}", content=text.encode()))
    return files
