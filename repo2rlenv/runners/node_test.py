"""node --test: Node's built-in runner (`node --test`, `node --test test/a.test.js`).

Its summary is the same counts in either reporter: the spec reporter's `ℹ tests 3`,
`ℹ pass 3`, `ℹ fail 0` and TAP's `# pass 3`. The verifier asks for TAP written to a
file (`--test-reporter=tap --test-reporter-destination`, Node >= 18.15, so Debian 12's
18.19 has it) and counts its leaf test points. The canary is CommonJS (`.cjs`), which
Node runs as such whatever the package's `type`.
"""

from __future__ import annotations

import re

from repo2rlenv.runners.base import (
    JS_TEST_FILE,
    Counts,
    VerifierSpec,
    js_option_value_flags,
    plain,
    program,
)

VALUE_FLAGS = {
    "--import",
    "--require",
    "-r",
    "--loader",
    "--experimental-loader",
    "--test-reporter",
    "--test-reporter-destination",
    "--test-name-pattern",
    "--test-concurrency",
}
COUNT_LINE = re.compile(r"^\s*(?:ℹ|#) (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$", re.M)
TEST_DIR = re.compile(r"(^|/)test/[^/]+\.[cm]?js$|(^|/)(test|[^/]+[.-_]test)\.[cm]?js$")
CONFIG = r"(^|/)\.(npmrc|node-version|nvmrc)$"
"""Files that steer how node runs; the tests name their own setup with `--import`."""
CANARY = """const { test } = require('node:test')
const assert = require('node:assert')

test('rlenv_canary_must_pass', () => {
  assert.strictEqual(1, 1)
})

test('rlenv_canary_must_fail', () => {
  assert.strictEqual(1, 2)
})
"""


class NodeTest:
    name = "node-test"
    language = "javascript"

    def recognise(self, words: list[str]) -> list[str] | None:
        if not words or program(words[0]) not in {"node", "nodejs"}:
            return None
        return words if "--test" in words[1:] else None

    def targets(self, words: list[str]) -> list[str]:
        return js_option_value_flags([w for w in words[1:] if w != "--test"], VALUE_FLAGS)

    def counts(self, output: str | None) -> Counts | None:
        text = plain(output)
        blocks = [m for m in COUNT_LINE.finditer(text)]
        if not blocks:
            return None
        last_start = (
            max(m.start() for m in blocks if m.group(1) == "tests")
            if any(m.group(1) == "tests" for m in blocks)
            else 0
        )
        found = {m.group(1): int(m.group(2)) for m in blocks if m.start() >= last_start}
        return Counts(
            found.get("pass", 0),
            found.get("fail", 0) + found.get("cancelled", 0),
            found.get("skipped", 0) + found.get("todo", 0),
        )

    def is_test_file(self, path: str) -> bool:
        return bool(JS_TEST_FILE.search(path) or TEST_DIR.search(path))

    def is_config_file(self, path: str) -> bool:
        return path.rsplit("/", 1)[-1] == "package.json"

    def verifier(self) -> VerifierSpec:
        return VerifierSpec(
            argv=("node", "--test", "--test-reporter=tap", "--test-reporter-destination={report}"),
            report="tap",
            canary_pass="rlenv_canary_must_pass",
            canary_fail="rlenv_canary_must_fail",
            config_pattern=CONFIG,
            canary=CANARY,
            name_flag="--test-name-pattern=",
        )


RUNNER = NodeTest()
