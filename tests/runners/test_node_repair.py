"""repair from a session whose jest run failed, then passed after a code change: the
start state is before the fix, the tests and package.json are protected, the verifier
runs jest over the visible tests, all-or-nothing."""

from __future__ import annotations

import json

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.kinds import KINDS, Reject
from repo2rlenv.replay import replay
from repo2rlenv.validate import run_static
from tests.mining.factory import SessionBuilder
from tests.runners.test_node_build import CTX, ROOT

PACKAGE = (
    json.dumps({"name": "sum", "scripts": {"test": "jest"}, "devDependencies": {"jest": "^29.7.0"}})
    + "\n"
)
BROKEN = "function sum(a, b) {\n  return a - b\n}\nmodule.exports = { sum }\n"
FIXED = BROKEN.replace("a - b", "a + b")
TESTS = "const { sum } = require('./sum')\ntest('adds', () => expect(sum(1, 2)).toBe(3))\n"
FAILED = "Test Suites: 1 failed, 1 total\nTests:       1 failed, 1 total\n"
PASSED = "Test Suites: 1 passed, 1 total\nTests:       1 passed, 1 total\n"


def session(edit_tests: bool = False, passing_exit: int | None = 0):
    built = (
        SessionBuilder()
        .user("the sum test fails, fix it")
        .read(f"{ROOT}/package.json", PACKAGE)
        .read(f"{ROOT}/sum.js", BROKEN)
        .read(f"{ROOT}/sum.test.js", TESTS)
        .run("npm test", FAILED, 1)
        .edit(f"{ROOT}/sum.js", "a - b", "a + b")
    )
    if edit_tests:
        built.edit(f"{ROOT}/sum.test.js", "toBe(3)", "toBe(-1)")
    return built.run("npm test", PASSED, passing_exit).build()


def test_a_jest_fix_drafts_a_repair_task(tmp_path):
    (bundle,) = list(KINDS["repair"](replay(session()), CTX))
    content = {f.path: f.content.decode() for f in bundle.files}
    assert content["environment/workspace/sum.js"] == BROKEN
    assert content["tests/protected/sum.test.js"] == TESTS
    assert content["tests/protected/package.json"] == PACKAGE
    assert "a + b" in content["solution/solve.sh"]
    settings = json.loads(content["tests/grading.json"])
    assert (settings["runner"], settings["mode"], settings["expected"]) == ("jest", "all", 1)
    assert settings["targets"] == ["sum.test.js"] and "--json" in settings["argv"]
    assert "Running `jest` fails" in bundle.instruction
    path = write_bundle(bundle, tmp_path).path
    assert [f.rule_id for f in run_static(read_task_dir(path)) if f.severity == "error"] == []


def test_a_fix_that_edits_the_tests_is_refused():
    (reject,) = list(KINDS["repair"](replay(session(edit_tests=True)), CTX))
    assert isinstance(reject, Reject) and reject.reason == "repair.tests-edited"


def test_summaries_without_exit_statuses_are_compared():
    (bundle,) = list(KINDS["repair"](replay(session(passing_exit=None)), CTX))
    assert bundle.config.metadata.repo2rlenv.kind == "repair"
