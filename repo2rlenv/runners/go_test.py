"""go test: Go's own runner (`go test ./...`, `go test -run TestAdd ./calc`).

Its text output names packages (`ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`) and, with `-v`
or on a failure, tests (`--- PASS: TestAdd (0.00s)`, `--- FAIL: TestSub`); subtests are
indented and not counted. Without `-v` a passing package names no test, so its tests
count as one pass per `ok` package. The verifier runs `go test -json`, whose events name
every test and its outcome (`kinds.grading_node`, report `go-json`). The canary joins
the package of the first hidden test (`{package}`, filled in by the verifier), so code
that forges test output from that package forges the canary's too.
"""

from __future__ import annotations

import re

from repo2rlenv.runners.base import Counts, VerifierSpec, plain, program

VALUE_FLAGS = {
    "-run", "-skip", "-count", "-timeout", "-tags", "-p", "-parallel", "-bench",
    "-benchtime", "-cpu", "-coverprofile", "-covermode", "-coverpkg", "-o", "-exec",
    "-mod", "-ldflags", "-gcflags", "-shuffle", "-modfile",
}  # fmt: skip
NOT_A_RUN = {"-c", "-list", "-h", "-help", "--help"}
"""`go test -c` builds a test binary and `-list` names tests: neither runs them."""
TEST_LINE = re.compile(r"^--- (PASS|FAIL|SKIP): \S+", re.M)
PACKAGE_LINE = re.compile(r"^(ok|FAIL)\s+\S+\s+(?:[\d.]+s|\(cached\)|\[[^\]]+\])(.*)$", re.M)
TEST_FILE = re.compile(r"(^|/)[^/]+_test\.go$")
CONFIG = r"(^|/)(go\.mod|go\.sum|go\.work|go\.work\.sum)$"
CANARY = """package {package}

import "testing"

func TestRlenvCanaryMustPass(t *testing.T) {
\tif 1 != 1 {
\t\tt.Fatal("unreachable")
\t}
}

func TestRlenvCanaryMustFail(t *testing.T) {
\tt.Fatal("this canary must fail")
}
"""


def go_flag(word: str) -> str:
    """`--run=X` and `-run=X` as `-run`."""
    return "-" + word.lstrip("-").split("=", 1)[0]


class GoTest:
    name = "go-test"
    language = "go"

    def recognise(self, words: list[str]) -> list[str] | None:
        if len(words) < 2 or program(words[0]) != "go" or words[1] != "test":
            return None
        if any(go_flag(w) in NOT_A_RUN for w in words[2:] if w.startswith("-")):
            return None
        return words

    def targets(self, words: list[str]) -> list[str]:
        out: list[str] = []
        skip = False
        for word in words[2:]:
            if skip:
                skip = False
            elif word in {"-args", "--args"}:
                break
            elif word.startswith("-"):
                skip = "=" not in word and go_flag(word) in VALUE_FLAGS
            else:
                out.append(word)
        return out

    def counts(self, output: str | None) -> Counts | None:
        text = plain(output)
        tests = TEST_LINE.findall(text)
        packages = [(m.group(1), m.group(2)) for m in PACKAGE_LINE.finditer(text)]
        if not tests and not packages:
            return None
        failed_packages = sum(1 for state, _ in packages if state == "FAIL")
        passed = tests.count("PASS") or sum(
            1 for state, rest in packages if state == "ok" and "[no tests to run]" not in rest
        )
        return Counts(passed, max(tests.count("FAIL"), failed_packages), tests.count("SKIP"))

    def is_test_file(self, path: str) -> bool:
        return bool(TEST_FILE.search(path))

    def is_config_file(self, path: str) -> bool:
        return bool(re.search(CONFIG, path))

    def verifier(self) -> VerifierSpec:
        return VerifierSpec(
            argv=("go", "test", "-json", "-count=1"),
            report="go-json",
            canary_pass="TestRlenvCanaryMustPass",
            canary_fail="TestRlenvCanaryMustFail",
            config_pattern=CONFIG + r"|_test\.go$",
            canary=CANARY,
            env=(
                ("GOPROXY", "off"),
                ("GOTOOLCHAIN", "local"),
                ("GOCACHE", "{tmp}/gocache"),
                ("GOPATH", "{tmp}/gopath"),
            ),
        )


RUNNER = GoTest()
