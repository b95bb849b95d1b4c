"""cargo test: Rust's runner (`cargo test`, `cargo test parse --lib`).

libtest prints one line per test (`test tests::adds ... ok`, `... FAILED`,
`... ignored`) and one summary per test binary (`test result: ok. 3 passed; 0 failed;
1 ignored; ...`); a crate has several binaries (unit, each `tests/*.rs`, doc-tests),
so a run's counts are the sum of its summaries. The verifier runs
`cargo test --no-fail-fast --offline` and reads the per-test lines, never the exit
status. Its canary is an integration test, `tests/rlenv_canary.rs`, which cargo finds
on its own (Cargo.toml, which could turn that off, is protected).
"""

from __future__ import annotations

import re

from repo2rlenv.runners.base import Counts, VerifierSpec, plain, program

VALUE_FLAGS = {
    "-p", "--package", "--test", "--bin", "--example", "--bench", "--features", "-F",
    "--target", "--target-dir", "--manifest-path", "-j", "--jobs", "--profile",
    "--exclude", "--color", "--message-format", "-Z", "--config",
}  # fmt: skip
NOT_A_RUN = {"--no-run", "--help", "-h", "--list"}
SUMMARY = re.compile(
    r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored", re.M
)
TEST_FILE = re.compile(r"(^|/)tests/[^/]+\.rs$|(^|/)tests/[^/]+/mod\.rs$")
UNIT_TESTS = re.compile(r"#\[(?:test|cfg\(test\))\]")
CONFIG = (
    r"(^|/)(Cargo\.toml|Cargo\.lock|build\.rs|rust-toolchain(\.toml)?"
    r"|\.cargo/config(\.toml)?)$"
)
CANARY = """#[test]
fn rlenv_canary_must_pass() {
    assert_eq!(1, 1);
}

#[test]
fn rlenv_canary_must_fail() {
    assert_eq!(1, 2, "this canary must fail");
}
"""


class CargoTest:
    name = "cargo-test"
    language = "rust"

    def recognise(self, words: list[str]) -> list[str] | None:
        if len(words) < 2 or program(words[0]) != "cargo":
            return None
        rest = words[1:]
        if rest[0].startswith("+"):  # `cargo +nightly test`
            rest = rest[1:]
        if rest[:1] != ["test"] or any(w in NOT_A_RUN for w in rest[1:]):
            return None
        return words

    def targets(self, words: list[str]) -> list[str]:
        """The test name filters (`cargo test parse` runs tests whose name holds `parse`)."""
        out: list[str] = []
        skip = False
        for word in words[words.index("test") + 1 :]:
            if skip:
                skip = False
            elif word == "--":
                break
            elif word.startswith("-"):
                skip = "=" not in word and word in VALUE_FLAGS
            else:
                out.append(word)
        return out

    def counts(self, output: str | None) -> Counts | None:
        found = SUMMARY.findall(plain(output))
        if not found:
            return None
        return Counts(*(sum(int(row[i]) for row in found) for i in range(3)))

    def is_test_file(self, path: str) -> bool:
        """Only the integration tests by path; a source file with `#[test]`s is a test
        file when its text says so (`has_unit_tests`)."""
        return bool(TEST_FILE.search(path))

    def is_config_file(self, path: str) -> bool:
        return bool(re.search(CONFIG, path))

    def verifier(self) -> VerifierSpec:
        return VerifierSpec(
            argv=("cargo", "test", "--no-fail-fast", "--offline"),
            report="libtest",
            canary_pass="rlenv_canary_must_pass",
            canary_fail="rlenv_canary_must_fail",
            config_pattern=CONFIG,
            canary=CANARY,
            env=(
                ("CARGO_HOME", "{tmp}/cargo"),
                ("CARGO_TARGET_DIR", "{tmp}/target"),
                ("CARGO_NET_OFFLINE", "true"),
            ),
        )


def has_unit_tests(text: str) -> bool:
    """A Rust source holding `#[test]` or `#[cfg(test)]`: its tests are in it."""
    return bool(UNIT_TESTS.search(text))


RUNNER = CargoTest()
