"""extend from a session whose new JS tests ran under vitest / node --test to a pass:
the new tests (appended `test` blocks, new test files) are hidden, the old test file
and package.json are start state, the code change is the reference, and the verifier
runs and counts only the new tests."""

from __future__ import annotations

import json
import re

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.replay import replay
from repo2rlenv.validate import run_static
from tests.mining.factory import SessionBuilder

CTX = SessionContext(dataset="examples", revision=None, record_id="jsx", base_image="img:1")
ROOT = "/home/dev/proj"
PACKAGE = (
    json.dumps(
        {
            "name": "slug",
            "type": "module",
            "scripts": {"test": "vitest run"},
            "devDependencies": {"vitest": "^1.6.0"},
        },
        indent=2,
    )
    + "\n"
)
CONFIG = "import { defineConfig } from 'vitest/config'\nexport default defineConfig({ test: {} })\n"
CODE = "export function slug(s) {\n  return s.trim().toLowerCase().replace(/\\s+/g, '-')\n}\n"
CODE2 = (
    "export function slug(s, sep = '-') {\n"
    "  return s.trim().toLowerCase().replace(/[^a-z0-9]+/g, sep)\n}\n"
)
TESTS = (
    "import { test, expect } from 'vitest'\nimport { slug } from './slug.js'\n\n"
    "test('spaces', () => expect(slug(' A b ')).toBe('a-b'))\n"
)
TESTS2 = TESTS + (
    "test('custom separator (x.y)', () => expect(slug('a b', '_')).toBe('a_b'))\n"
    "test('punctuation', () => expect(slug('a, b!')).toBe('a-b-'))\n"
)
NEW_FILE = (
    "import { test, expect } from 'vitest'\nimport { slug } from './slug.js'\n\n"
    "test('dots', () => expect(slug('a.b')).toBe('a-b'))\n"
)
PASSED = " Test Files  2 passed (2)\n      Tests  4 passed (4)\n"


def session(*, append: bool = True, new_file: bool = False, code: bool = True):
    built = (
        SessionBuilder()
        .user("Write a slug(s) function in src/slug.js with vitest tests.")
        .write(f"{ROOT}/package.json", PACKAGE)
        .write(f"{ROOT}/vitest.config.js", CONFIG)
        .write(f"{ROOT}/src/slug.js", CODE)
        .write(f"{ROOT}/src/slug.test.js", TESTS)
        .run("npm test", " Test Files  1 passed (1)\n      Tests  1 passed (1)\n", 0)
        .user("Let slug take a separator and turn punctuation into it too.")
    )
    if code:
        built.write(f"{ROOT}/src/slug.js", CODE2)
    if append:
        built.write(f"{ROOT}/src/slug.test.js", TESTS2)
    if new_file:
        built.write(f"{ROOT}/src/dots.test.js", NEW_FILE)
    return built.run("npm test", PASSED, 0).build()


def files(bundle) -> dict[str, str]:
    return {f.path: f.content.decode() for f in bundle.files}


def test_appended_vitest_tests_draft_an_extend_task_that_runs_only_them(tmp_path):
    (bundle,) = [b for b in KINDS["extend"](replay(session()), CTX) if not isinstance(b, Reject)]
    content = files(bundle)
    assert content["environment/workspace/src/slug.test.js"] == TESTS  # the old file
    assert content["tests/hidden/src/slug.test.js"] == TESTS2
    assert content["environment/workspace/src/slug.js"] == CODE  # no source change
    assert "src/slug.js" in content["solution/solve.sh"] and "sep" in content["solution/solve.sh"]
    assert content["tests/protected/vitest.config.js"] == CONFIG
    assert content["environment/workspace/package.json"] == PACKAGE
    settings = json.loads(content["tests/grading.json"])
    assert settings["runner"] == "vitest"
    assert settings["titles"] == ["custom separator (x.y)", "punctuation"]
    assert settings["expected"] == 2 and settings["targets"] == ["src/slug.test.js"]
    flag = settings["argv"].index("-t")
    pattern = re.compile(settings["argv"][flag + 1])
    for title in ("custom separator (x.y)", "punctuation", "rlenv_canary_must_fail"):
        assert pattern.search(title), title
    assert not pattern.search("spaces") and not pattern.search("custom separator (xzy)")
    assert "pytest" not in content["environment/Dockerfile"]
    assert "npm install --no-audit" in content["environment/Dockerfile"]
    assert "Let slug take a separator" in bundle.instruction
    path = write_bundle(bundle, tmp_path).path
    assert [f.rule_id for f in run_static(read_task_dir(path)) if f.severity == "error"] == []


def test_a_new_test_file_runs_whole_by_file():
    (bundle,) = [
        b
        for b in KINDS["extend"](replay(session(append=False, new_file=True)), CTX)
        if not isinstance(b, Reject)
    ]
    content = files(bundle)
    settings = json.loads(content["tests/grading.json"])
    assert settings["titles"] is None and "-t" not in settings["argv"]
    assert settings["targets"] == ["src/dots.test.js"] and settings["expected"] == 1
    assert "environment/workspace/src/dots.test.js" not in content
    assert content["tests/protected/src/slug.test.js"] == TESTS


def test_no_code_change_is_refused():
    reasons = [r.reason for r in KINDS["extend"](replay(session(code=False)), CTX)]
    assert reasons == ["extend.no-code-change"]


def test_an_unnamed_appended_test_is_refused():
    built = (
        SessionBuilder()
        .user("Write slug.")
        .write(f"{ROOT}/package.json", PACKAGE)
        .write(f"{ROOT}/src/slug.js", CODE)
        .write(f"{ROOT}/src/slug.test.js", TESTS)
        .run("npx vitest run", PASSED, 0)
        .user("Add a separator.")
        .write(f"{ROOT}/src/slug.js", CODE2)
        .write(f"{ROOT}/src/slug.test.js", TESTS + "test.each([1])('n %i', () => {})\n")
        .run("npx vitest run", PASSED, 0)
        .build()
    )
    reasons = [r.reason for r in KINDS["extend"](replay(built), CTX) if isinstance(r, Reject)]
    assert reasons == ["extend.tests-unnamed"]


def test_node_test_appended_tests_use_the_name_pattern():
    old = (
        "const test = require('node:test')\nconst { add } = require('../add.js')\n"
        "test('adds', () => { if (add(1, 2) !== 3) throw new Error() })\n"
    )
    new = old + "test('adds three', () => { if (add(1, 2, 3) !== 6) throw new Error() })\n"
    built = (
        SessionBuilder()
        .user("Write add(a, b) in add.js with node tests.")
        .write(f"{ROOT}/package.json", '{"name": "add"}\n')
        .write(f"{ROOT}/add.js", "exports.add = (a, b) => a + b\n")
        .write(f"{ROOT}/test/add.test.js", old)
        .run("node --test", "ℹ tests 1\nℹ pass 1\nℹ fail 0\n", 0)
        .user("Let add take any number of arguments.")
        .write(f"{ROOT}/add.js", "exports.add = (...n) => n.reduce((a, b) => a + b, 0)\n")
        .write(f"{ROOT}/test/add.test.js", new)
        .run("node --test", "ℹ tests 2\nℹ pass 2\nℹ fail 0\n", 0)
        .build()
    )
    (bundle,) = [b for b in KINDS["extend"](replay(built), CTX) if not isinstance(b, Reject)]
    settings = json.loads(files(bundle)["tests/grading.json"])
    assert settings["runner"] == "node-test" and settings["titles"] == ["adds three"]
    assert (
        "--test-name-pattern=(?:adds three|rlenv_canary_must_pass|rlenv_canary_must_fail)$"
        in (settings["argv"])
    )
