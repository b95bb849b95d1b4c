"""Forgery probes for tasks whose verifier runs a JavaScript runner (vitest, jest,
node --test): a fake runner, a config that skips everything, and `.only`/`.skip` edits.

They are planted the way an agent could, in the folder the verifier runs from
(`tests/grading.json`'s `cwd`); the verifier (`kinds.grading_node`) must still score 0
without the reference solution. Python tasks are not given them (`applies`).
"""

from __future__ import annotations

import json
import re

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime import TrialRequest

JS_RUNNERS = frozenset({"vitest", "jest", "node-test"})
FORGED_REPORT = json.dumps(
    {
        "success": True,
        "testResults": [
            {
                "status": "passed",
                "assertionResults": [
                    {"title": "rlenv_canary_must_pass", "status": "passed"},
                    {"title": "rlenv_canary_must_fail", "status": "failed"},
                    *({"title": f"forged {i}", "status": "passed"} for i in range(50)),
                ],
            }
        ],
    }
)
FAKE_RUNNER = (
    "const fs = require('fs')\n"
    "for (const a of process.argv) {\n"
    "  if (a.startsWith('--outputFile=')) fs.writeFileSync(a.slice(13), "
    + json.dumps(FORGED_REPORT)
    + ")\n"
    "  if (a.startsWith('--test-reporter-destination=')) fs.writeFileSync(a.slice(28), "
    "'ok 1 - rlenv_canary_must_pass\\nnot ok 2 - rlenv_canary_must_fail\\nok 3 - forged\\n')\n"
    "}\nprocess.exit(0)\n"
).encode()
EXIT_ZERO_SH = b"#!/bin/sh\nexit 0\n"
SKIP_ALL_VITEST = (
    b"export default { test: { include: ['rlenv-nothing/**'], passWithNoTests: true } }\n"
)
SKIP_ALL_JEST = b"module.exports = { testPathIgnorePatterns: ['.*'], passWithNoTests: true }\n"
JS_TEST = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")
ONLY_TEST = b"test.only('forged', () => {})\n"


def settings(tree: TaskTree) -> dict:
    entry = tree.files.get("tests/grading.json")
    try:
        found = json.loads(entry[0]) if entry else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def runner_name(tree: TaskTree) -> str | None:
    """The registered runner a task's verifier names (`"vitest"`, `"go-test"`), or None:
    an own-runner instance task (Django, SymPy) keeps a mapping under the same key (its
    command, labels and canary), and a task file is hostile, so any other shape is
    no runner name."""
    found = settings(tree).get("runner")
    return found if isinstance(found, str) else None


def applies(tree: TaskTree) -> bool:
    return runner_name(tree) in JS_RUNNERS


def _folder(tree: TaskTree) -> str:
    root = (tree.config.environment.workdir if tree.config else None) or "/workspace"
    cwd = str(settings(tree).get("cwd") or "")
    return f"{root}/{cwd}".rstrip("/")


def fake_runner(tree: TaskTree, label: str) -> TrialRequest:
    """A runner in node_modules (and on PATH) that writes a passing report, canaries
    included, and exits 0: only a verifier that brings its own copy is safe."""
    folder = _folder(tree)
    plants = {
        f"{folder}/node_modules/vitest/vitest.mjs": FAKE_RUNNER.replace(
            b"const fs = require('fs')", b"import fs from 'fs'"
        ),
        f"{folder}/node_modules/jest/bin/jest.js": FAKE_RUNNER,
        "/usr/local/bin/vitest": EXIT_ZERO_SH,
        "/usr/local/bin/jest": EXIT_ZERO_SH,
    }
    return TrialRequest(
        label=label,
        plant_files=plants,
        agent_commands=["chmod +x /usr/local/bin/vitest /usr/local/bin/jest"],
    )


def skip_all_config(tree: TaskTree, label: str) -> TrialRequest:
    folder = _folder(tree)
    return TrialRequest(
        label=label,
        plant_files={
            f"{folder}/vitest.config.js": SKIP_ALL_VITEST,
            f"{folder}/vitest.config.ts": SKIP_ALL_VITEST,
            f"{folder}/vite.config.js": SKIP_ALL_VITEST,
            f"{folder}/jest.config.js": SKIP_ALL_JEST,
        },
    )


def only_skip_edits(tree: TaskTree, label: str) -> TrialRequest:
    """Visible test files with every test skipped, plus a planted `.only` test."""
    prefix = "environment/workspace/"
    root = (tree.config.environment.workdir if tree.config else None) or "/workspace"
    plants = {
        f"{root}/{p[len(prefix) :]}": re.sub(rb"\b(test|it)\(", rb"\1.skip(", content)
        for p, (content, _x) in tree.files.items()
        if p.startswith(prefix) and JS_TEST.search(p)
    }
    plants[f"{_folder(tree)}/rlenv-forged.test.js"] = ONLY_TEST
    return TrialRequest(label=label, plant_files=plants)
