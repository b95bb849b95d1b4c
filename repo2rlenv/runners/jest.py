"""jest: `jest`, `jest FILES`, reached directly or through npx/pnpm/yarn/npm scripts.

Its summary: `Tests:       1 failed, 5 passed, 6 total` (after `Test Suites:`). The
verifier runs the image's jest with `--ci --json --outputFile`, file paths taken as
paths (`--runTestsByPath`), so a pattern planted in the config cannot widen the run.
The canary uses jest's globals only, so it runs as CommonJS or ESM, JS or TS alike.
"""

from __future__ import annotations

import re

from repo2rlenv.runners.base import (
    JS_TEST_FILE,
    Counts,
    VerifierSpec,
    js_bar_summary,
    js_option_value_flags,
    program,
)

VALUE_FLAGS = {
    "-c",
    "--config",
    "-t",
    "--testNamePattern",
    "--outputFile",
    "--reporters",
    "--rootDir",
    "--roots",
    "--testPathPattern",
    "--testPathIgnorePatterns",
    "--maxWorkers",
    "-w",
    "--selectProjects",
    "--shard",
}
TESTS_LINE = re.compile(r"^Tests:\s+(.*?\d+ total)\s*$", re.M)
CONFIG = re.compile(
    r"(^|/)jest\.(config|setup)\.[cm]?[jt]s(on)?$|(^|/)(babel\.config\.[cm]?js|\.babelrc)$"
)
CANARY = """test('rlenv_canary_must_pass', () => {
  expect(1).toBe(1)
})

test('rlenv_canary_must_fail', () => {
  expect(1).toBe(2)
})
"""


class Jest:
    name = "jest"
    language = "javascript"

    def recognise(self, words: list[str]) -> list[str] | None:
        if not words or program(words[0]) != "jest":
            return None
        if any(
            w in {"--version", "-v", "--help", "-h", "--init", "--showConfig", "--listTests"}
            for w in words[1:]
        ):
            return None
        return words

    def targets(self, words: list[str]) -> list[str]:
        return js_option_value_flags(words[1:], VALUE_FLAGS)

    def counts(self, output: str | None) -> Counts | None:
        return js_bar_summary(TESTS_LINE, output)

    def is_test_file(self, path: str) -> bool:
        return bool(JS_TEST_FILE.search(path))

    def is_config_file(self, path: str) -> bool:
        return bool(CONFIG.search(path)) or path.rsplit("/", 1)[-1] == "package.json"

    def verifier(self) -> VerifierSpec:
        return VerifierSpec(
            argv=(
                "node",
                "node_modules/jest/bin/jest.js",
                "--ci",
                "--json",
                "--outputFile={report}",
                "--runTestsByPath",
            ),
            report="jest-json",
            canary_pass="rlenv_canary_must_pass",
            canary_fail="rlenv_canary_must_fail",
            config_pattern=CONFIG.pattern,
            canary=CANARY,
        )


RUNNER = Jest()
