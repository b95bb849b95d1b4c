"""vitest: `vitest`, `vitest run FILES`, reached directly or through npx/pnpm/yarn/npm
scripts (`repo2rlenv.runners.scripts`).

Its summary block ends a run, with or without an exit status recorded:
` Test Files  1 failed | 2 passed (3)` then `      Tests  1 failed | 5 passed (6)`.
The verifier runs the project's own vitest from the image's pristine `node_modules`
with `--reporter=json` (jest's JSON shape) and `CI=true`, under which vitest fails a
run that holds a `.only`.
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

SUBCOMMANDS = {"run", "related", "watch", "dev"}
NOT_TESTS = {"bench", "init", "list", "typecheck"}
VALUE_FLAGS = {
    "-c",
    "--config",
    "-r",
    "--root",
    "--dir",
    "--reporter",
    "--outputFile",
    "-t",
    "--testNamePattern",
    "--project",
    "--environment",
    "--pool",
    "--mode",
    "--shard",
}
TESTS_LINE = re.compile(r"^\s*Tests\s+(\d+ (?:passed|failed|skipped|todo).*?)\s*\(\d+\)\s*$", re.M)
CONFIG = re.compile(
    r"(^|/)(vitest|vite)\.(config|workspace)\.[cm]?[jt]s$|(^|/)vitest\.workspace\.json$"
)
CANARY = """import { test, expect } from 'vitest'

test('rlenv_canary_must_pass', () => {
  expect(1).toBe(1)
})

test('rlenv_canary_must_fail', () => {
  expect(1).toBe(2)
})
"""


class Vitest:
    name = "vitest"
    language = "javascript"

    def recognise(self, words: list[str]) -> list[str] | None:
        if not words or program(words[0]) != "vitest":
            return None
        rest = words[1:]
        if (rest and rest[0] in NOT_TESTS) or any(
            w in {"--version", "-v", "--help", "-h"} for w in rest
        ):
            return None
        return words

    def targets(self, words: list[str]) -> list[str]:
        found = js_option_value_flags(words[1:], VALUE_FLAGS)
        return found[1:] if found and found[0] in SUBCOMMANDS else found

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
                "node_modules/vitest/vitest.mjs",
                "run",
                "--reporter=json",
                "--outputFile={report}",
            ),
            report="jest-json",
            canary_pass="rlenv_canary_must_pass",
            canary_fail="rlenv_canary_must_fail",
            config_pattern=CONFIG.pattern,
            canary=CANARY,
        )


RUNNER = Vitest()
