"""go test and cargo test, beyond the registry's minimal cases: what they select, what
is not a run, and the forms of their output a session shows."""

from __future__ import annotations

import pytest

import repo2rlenv.replay  # noqa: F401  (imported first: runners <-> replay cycle on main)
from repo2rlenv.runners import RUNNERS, detect
from repo2rlenv.runners.cargo_test import has_unit_tests
from repo2rlenv.shell import command_effects


def words(command: str) -> list[str]:
    (simple,) = command_effects(command).words
    return simple


@pytest.mark.parametrize(
    ("command", "runner", "targets"),
    [
        ("go test -run TestAdd -count=1 ./calc", "go-test", ["./calc"]),
        ("go test -v -timeout 30s ./... -args -x", "go-test", ["./..."]),
        ("cargo test parse --lib -p core", "cargo-test", ["parse"]),
        ("cargo +nightly test -- --nocapture", "cargo-test", []),
    ],
)
def test_targets(command, runner, targets):
    found = detect(words(command))
    assert found is not None and found.runner.name == runner
    assert found.runner.targets(found.words) == targets


@pytest.mark.parametrize(
    "command", ["go test -c ./calc", "go build ./...", "go vet ./...", "cargo test --no-run",
                "cargo build", "cargo check --tests"],
)  # fmt: skip
def test_what_runs_no_tests_is_not_a_runner(command):
    assert detect(words(command)) is None


def test_go_without_v_counts_packages_and_failures():
    go = RUNNERS["go-test"]
    text = (
        "ok  \texample.com/a\t0.01s\nok  \texample.com/b\t(cached)\n"
        "?   \texample.com/c\t[no test files]"
    )
    counts = go.counts(text)
    assert counts is not None and (counts.passed, counts.failed) == (2, 0)
    broken = go.counts("./a.go:3:1: syntax error\nFAIL\texample.com/a [build failed]")
    assert broken is not None and broken.exit_status == 1


def test_cargo_sums_every_test_binary():
    text = "\n".join(
        f"test result: ok. {n} passed; 0 failed; {i} ignored; 0 measured; 0 filtered out"
        for n, i in ((4, 1), (2, 0), (0, 0))
    )
    counts = RUNNERS["cargo-test"].counts(text)
    assert counts is not None and (counts.passed, counts.skipped) == (6, 1)


def test_test_files():
    go, cargo = RUNNERS["go-test"], RUNNERS["cargo-test"]
    assert go.is_test_file("calc/add_test.go") and not go.is_test_file("calc/add.go")
    assert cargo.is_test_file("tests/api.rs") and not cargo.is_test_file("src/lib.rs")
    assert has_unit_tests("fn f() {}\n#[cfg(test)]\nmod tests {}")
    assert not has_unit_tests("fn f() {}")
    assert go.is_config_file("go.sum") and cargo.is_config_file("sub/Cargo.lock")
    assert cargo.is_config_file(".cargo/config.toml") and not cargo.is_config_file("src/main.rs")
