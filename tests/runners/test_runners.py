"""The test-runner registry: every runner is registered, recognised from its command as
the shell analyser splits it, and read from a minimal output of its own, with and
without a recorded exit status."""

from __future__ import annotations

import json

import pytest

from repo2rlenv.replay import replay
from repo2rlenv.runners import RUNNERS, detect
from repo2rlenv.shell import command_effects
from tests.mining.factory import SessionBuilder

# (runner, a command that runs it, a passing output's tail, a failing output's tail)
MINIMAL = {
    "pytest": ("python -m pytest -q", "3 passed in 0.10s", "1 failed, 2 passed in 0.12s"),
    "vitest": (
        "npx vitest run",
        " Test Files  1 passed (1)\n      Tests  3 passed (3)\n   Duration  0.4s",
        " Test Files  1 failed (1)\n      Tests  1 failed | 2 passed (3)\n   Duration  0.4s",
    ),
    "jest": (
        "npx jest src",
        "Test Suites: 1 passed, 1 total\nTests:       3 passed, 3 total\nTime: 1 s",
        "Test Suites: 1 failed, 1 total\nTests:       1 failed, 2 passed, 3 total\nTime: 1 s",
    ),
    "node-test": (
        "node --test test/",
        "ℹ tests 3\nℹ suites 0\nℹ pass 3\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0",
        "# tests 3\n# suites 0\n# pass 2\n# fail 1\n# cancelled 0\n# skipped 0",
    ),
    "go-test": (
        "go test -v -run 'Test.*' ./...",
        "=== RUN   TestA\n--- PASS: TestA (0.00s)\n--- PASS: TestB (0.00s)\n"
        "=== RUN   TestC/sub\n    --- PASS: TestC/sub (0.00s)\n--- PASS: TestC (0.00s)\n"
        "PASS\nok  \texample.com/calc\t0.003s",
        "--- PASS: TestA (0.00s)\n--- PASS: TestB (0.00s)\n--- FAIL: TestC (0.00s)\n"
        "    calc_test.go:9: got 1, want 2\nFAIL\nFAIL\texample.com/calc\t0.004s\nFAIL",
    ),
    "cargo-test": (
        "cargo test --no-fail-fast",
        "running 2 tests\ntest tests::a ... ok\ntest tests::b ... ok\n\n"
        "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
        "     Running tests/api.rs\nrunning 1 test\ntest c ... ok\n"
        "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
        "running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... FAILED\n\n"
        "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n"
        "error: test failed, to rerun pass `--lib`",
    ),
}


def test_every_registered_runner_has_a_minimal_case():
    assert sorted(MINIMAL) == sorted(RUNNERS)


@pytest.mark.parametrize("name", sorted(MINIMAL))
def test_runner_is_detected_and_reads_its_summary(name):
    command, passing, failing = MINIMAL[name]
    (words,) = command_effects(command).words
    found = detect(words)
    assert found is not None and found.runner.name == name
    runner = RUNNERS[name]
    ok, bad = runner.counts(passing), runner.counts(failing)
    assert ok is not None and (ok.passed, ok.failed, ok.exit_status) == (3, 0, 0)
    assert bad is not None and (bad.passed, bad.failed, bad.exit_status) == (2, 1, 1)
    assert runner.counts("nothing to see") is None


def test_colour_codes_do_not_hide_a_summary():
    coloured = (
        "\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[32m4 passed\x1b[39m\x1b[22m\x1b[90m (4)\x1b[39m"
    )
    counts = RUNNERS["vitest"].counts(coloured)
    assert counts is not None and counts.passed == 4


PACKAGE = json.dumps({"scripts": {"test": "npm run test:unit", "test:unit": "vitest run --bail 1"}})


@pytest.mark.parametrize(
    ("command", "runner", "words"),
    [
        ("npm test -- src/a.test.ts", "vitest", ["vitest", "run", "--bail", "1", "src/a.test.ts"]),
        ("pnpm run test:unit", "vitest", ["vitest", "run", "--bail", "1"]),
        ("yarn test", "vitest", ["vitest", "run", "--bail", "1"]),
        ("pnpm exec jest a.test.js", "jest", ["jest", "a.test.js"]),
        ("yarn jest", "jest", ["jest"]),
    ],
)
def test_package_scripts_are_resolved(command, runner, words):
    (simple,) = command_effects(command).words
    found = detect(simple, lambda: PACKAGE)
    assert found is not None and (found.runner.name, found.words) == (runner, words)


@pytest.mark.parametrize(
    "command", ["npm install", "npm run build", "vitest --version", "bun test"]
)
def test_what_runs_no_tests_is_not_a_runner(command):
    (simple,) = command_effects(command).words
    assert detect(simple, lambda: PACKAGE) is None


def test_npm_test_without_a_known_package_json_is_no_runner():
    (simple,) = command_effects("npm test").words
    assert detect(simple, lambda: None) is None


def test_replay_marks_the_runner_and_infers_the_exit_status():
    """A format without exit statuses: the status comes from the runner's summary, and
    `npm test` is resolved through the package.json the session wrote."""
    session = (
        SessionBuilder()
        .user("build it")
        .write("/home/dev/proj/package.json", PACKAGE)
        .run("cd /home/dev/proj && npm test", MINIMAL["vitest"][2], None)
        .run("npm test", MINIMAL["vitest"][1], None)
        .run("ls", "package.json", None)
        .build()
    )
    commands = replay(session).commands
    assert [(c.runner, c.exit_code, c.exit_inferred) for c in commands] == [
        ("vitest", 1, True),
        ("vitest", 0, True),
        (None, None, False),
    ]
    assert commands[0].checks == []  # the Python kinds still see pytest runs only


def test_a_script_of_an_unseen_package_json_is_read_from_npms_echo():
    """npm prints the script it runs; replay never saw this package.json."""
    (simple,) = command_effects("npm test -- a.test.ts").words
    echoed = "\n> pkg@0.7.29 test\n> node --test --import tsx test/*.test.ts\n\n# pass 3\n"
    found = detect(simple, lambda: None, echoed)
    assert found is not None and found.runner.name == "node-test"
    assert found.words[-1] == "a.test.ts"
    assert detect(simple, lambda: None, "\n> pkg@1.0.0 build\n> tsc\n") is None


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "words, name",
    [
        (["node_modules/.bin/vitest.cmd", "run", "src/a.spec.ts"], "vitest"),
        (["node_modules\\.bin\\jest.cmd", "--runInBand"], "jest"),  # quoted in the session
        (["C:\\Program Files\\nodejs\\node.exe", "--test"], "node-test"),
        (["npx.cmd", "vitest", "run"], "vitest"),
    ],
)
def test_windows_launchers_are_their_runner(words: list[str], name: str) -> None:
    """npm writes `vitest.cmd`/`.ps1` beside each binary on Windows; Windows sessions run
    them by a backslashed path. The words lost that to the `/`-only basename before."""
    found = detect(words)
    assert found is not None and found.runner.name == name
