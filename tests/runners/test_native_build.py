"""build from a session whose tests ran under `go test` or `cargo test` to a pass, and
the refusal of a project whose modules or crates the offline image cannot fetch."""

from __future__ import annotations

import json

import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.kinds.native_image import check_dependencies_available, check_toolchain
from repo2rlenv.replay import replay
from repo2rlenv.validate import run_static
from tests.mining.factory import SessionBuilder

CTX = SessionContext(dataset="examples", revision=None, record_id="go", base_image="img:1")
ROOT = "/home/dev/proj"
GO_MOD = "module example.com/calc\n\ngo 1.19\n"
GO_CODE = "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
GO_TESTS = (
    'package calc\n\nimport "testing"\n\n'
    'func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("add")\n\t}\n}\n\n'
    'func TestZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal("zero")\n\t}\n}\n'
)
GO_PASS = (
    "--- PASS: TestAdd (0.00s)\n--- PASS: TestZero (0.00s)\nPASS\nok  \texample.com/calc\t0.002s"
)
CARGO = '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
RUST_CODE = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
RUST_TESTS = (
    "use calc::add;\n\n#[test]\nfn adds() {\n    assert_eq!(add(1, 2), 3);\n}\n\n"
    "#[test]\nfn zero() {\n    assert_eq!(add(0, 0), 0);\n}\n"
)
RUST_PASS = (
    "running 2 tests\ntest adds ... ok\ntest zero ... ok\n\n"
    "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out"
)


def go_session(go_mod: str = GO_MOD):
    return (
        SessionBuilder()
        .user("Write Add(a, b int) int in package calc, with go tests.")
        .write(f"{ROOT}/go.mod", go_mod)
        .write(f"{ROOT}/calc/calc.go", GO_CODE)
        .write(f"{ROOT}/calc/calc_test.go", GO_TESTS)
        .run(f"cd {ROOT} && go test -v ./...", GO_PASS, 0)
        .build()
    )


def rust_session(cargo: str = CARGO):
    return (
        SessionBuilder()
        .user("Write a calc crate with add(a, b) and integration tests.")
        .write(f"{ROOT}/Cargo.toml", cargo)
        .write(f"{ROOT}/src/lib.rs", RUST_CODE)
        .write(f"{ROOT}/tests/api.rs", RUST_TESTS)
        .run(f"cd {ROOT} && cargo test", RUST_PASS, 0)
        .build()
    )


def files(bundle) -> dict[str, str]:
    return {f.path: f.content.decode() for f in bundle.files}


def test_a_go_session_drafts_a_build_task(tmp_path):
    (bundle,) = list(KINDS["build"](replay(go_session()), CTX))
    content = files(bundle)
    assert "tests/hidden/home/dev/proj/calc/calc_test.go" in content or any(
        p.endswith("hidden/calc/calc_test.go") for p in content
    )
    settings = json.loads(content["tests/grading.json"])
    assert settings["runner"] == "go-test" and settings["names"] == ["TestAdd", "TestZero"]
    assert settings["targets"] == ["./calc"] and settings["expected"] == 2
    assert settings["canary_path"] == "calc/rlenv_canary_test.go"
    assert settings["env"]["GOPROXY"] == "off" and "-json" in settings["argv"]
    assert "go.mod" in " ".join(settings["protected"])
    assert "golang-go" in content["environment/Dockerfile"]
    assert "calc.go" in content["solution/solve.sh"]
    path = write_bundle(bundle, tmp_path).path
    assert [f.rule_id for f in run_static(read_task_dir(path)) if f.severity == "error"] == []


def test_a_rust_session_drafts_a_build_task():
    (bundle,) = list(KINDS["build"](replay(rust_session()), CTX))
    content = files(bundle)
    settings = json.loads(content["tests/grading.json"])
    assert settings["runner"] == "cargo-test" and settings["names"] == ["adds", "zero"]
    assert settings["targets"] == ["--test", "api"]
    assert settings["canary_args"] == ["--test", "rlenv_canary"]
    assert settings["canary_path"] == "tests/rlenv_canary.rs"
    assert "--no-fail-fast" in settings["argv"]
    assert "rustc cargo" in content["environment/Dockerfile"]


def test_go_modules_that_cannot_be_fetched_refuse_the_session():
    go_mod = GO_MOD + "\nrequire (\n\tgithub.com/stretchr/testify v1.9.0 // indirect\n)\n"
    (reject,) = list(KINDS["build"](replay(go_session(go_mod)), CTX))
    assert isinstance(reject, Reject) and reject.reason == "build.go-modules-unavailable"


def test_crates_that_cannot_be_fetched_refuse_the_session():
    (reject,) = list(KINDS["build"](replay(rust_session(CARGO + 'serde = "1"\n')), CTX))
    assert isinstance(reject, Reject) and reject.reason == "build.crates-unavailable"


@pytest.mark.parametrize(
    ("language", "files"),
    [
        ("go", {"go.mod": GO_MOD + "require golang.org/x/text v0.3.0\n"}),
        ("rust", {"Cargo.toml": CARGO + "[target.'cfg(unix)'.dev-dependencies]\nlibc = '0.2'\n"}),
        ("rust", {"Cargo.toml": "[package\nname ="}),
    ],
)
def test_dependency_refusals(language, files):
    with pytest.raises(Reject):
        check_dependencies_available(language, "", files)


@pytest.mark.parametrize(
    ("language", "files"),
    [
        ("go", {"go.mod": GO_MOD}),
        ("go", {"go.mod": GO_MOD + "require a.b/c v1.0.0\n", "vendor/modules.txt": "# a.b/c"}),
        ("rust", {"Cargo.toml": CARGO + 'util = { path = "../util" }\n'}),
        (
            "rust",
            {
                "Cargo.toml": CARGO + 'serde = "1"\n',
                "vendor/serde/Cargo.toml": "",
                ".cargo/config.toml": "",
            },
        ),
    ],
)
def test_what_builds_offline_is_not_refused(language, files):
    check_dependencies_available(language, "", files)


@pytest.mark.parametrize(("session", "expected"), [("go", 2), ("rust", 2)])
def test_native_probes_are_planted_on_go_and_rust_tasks(tmp_path, session, expected):
    from repo2rlenv.validate.probes import probe_requests

    made = go_session() if session == "go" else rust_session()
    (bundle,) = list(KINDS["build"](replay(made), CTX))
    tree = read_task_dir(write_bundle(bundle, tmp_path).path)
    native = [r for r in probe_requests(tree) if "native" in r.label]
    assert len(native) == expected and all(r.plant_files for r in native)
    assert not any(r.label.startswith("probe.js-") for r in probe_requests(tree))
    assert {r.label for r in native} == {
        "probe.native-fake-toolchain",
        "probe.native-skipped-tests",
    }
    skipped = next(r for r in native if r.label == "probe.native-skipped-tests")
    planted = b"".join(skipped.plant_files.values())
    assert (b".Skip()" if session == "go" else b"#[ignore]") in planted


def test_extend_names_a_passing_go_run_instead_of_no_passing_tests():
    """Real Go sessions (issue 31: kalom60/TASK-86, hakumatata321-star/TASK-102) ran
    `go test` / `cargo test` to a pass while adding tests to an existing project; extend
    drafts no Go or Rust task, and the refusal must say so, not "no test run passed"."""
    assert _extend_reasons(GO_PASS, 0) == ["extend.runner-unsupported"]


def test_extend_without_any_passing_run_keeps_no_passing_tests():
    failing = "--- FAIL: TestAdd (0.00s)\nFAIL"
    assert _extend_reasons(failing, 1) == ["extend.no-passing-tests"]


def _extend_reasons(output: str, exit_code: int) -> list[str]:
    """extend's refusals of a Go session that adds tests and runs `go test` once."""
    session = (
        SessionBuilder()
        .user("Read the calc module.")
        .read(f"{ROOT}/go.mod", GO_MOD)
        .read(f"{ROOT}/calc/calc.go", GO_CODE)
        .user("Add tests for Add.")
        .write(f"{ROOT}/calc/calc_test.go", GO_TESTS)
        .run(f"cd {ROOT} && go test -v ./...", output, exit_code)
        .build()
    )
    return [o.reason for o in KINDS["extend"](replay(session), CTX) if isinstance(o, Reject)]


@pytest.mark.parametrize(
    ("language", "files", "reason"),
    [
        # Real go.mod lines of the Go sessions of issue 31 (yonathanalulam/TASK-79,
        # Leul-deg/w2t26): Go 1.19 cannot parse them.
        ("go", {"go.mod": "module m\n\ngo 1.25.0\n"}, "build.go-toolchain-too-old"),
        ("go", {"go.mod": "module m\n\ngo 1.19.0\n"}, "build.go-toolchain-too-old"),
        (
            "go",
            {"go.mod": "module m\n\ngo 1.24\n\ntoolchain go1.24.4\n"},
            "build.go-toolchain-too-old",
        ),
        ("rust", {"Cargo.toml": CARGO.replace("2021", "2024")}, "build.rust-toolchain-too-old"),
        (
            "rust",
            {"Cargo.toml": CARGO + "", "Cargo.lock": "version = 4\n"},
            "build.rust-toolchain-too-old",
        ),
        (
            "rust",
            {
                "Cargo.toml": CARGO.replace(
                    'edition = "2021"', 'edition = "2021"\nrust-version = "1.80"'
                )
            },
            "build.rust-toolchain-too-old",
        ),
    ],
)
def test_a_manifest_debians_toolchain_cannot_load_is_refused(language, files, reason):
    with pytest.raises(Reject) as caught:
        check_toolchain(language, "", files)
    assert caught.value.reason == reason


@pytest.mark.parametrize(
    ("language", "files"),
    [
        ("go", {"go.mod": GO_MOD}),  # go 1.19
        ("go", {"go.mod": "module m\n\ngo 1.22\n"}),  # two-part: advisory to Go 1.19
        ("rust", {"Cargo.toml": CARGO, "Cargo.lock": "version = 3\n"}),
    ],
)
def test_a_manifest_debians_toolchain_loads_is_kept(language, files):
    check_toolchain(language, "", files)


def test_a_go_session_with_a_new_go_line_is_refused_as_a_build():
    (reject,) = list(KINDS["build"](replay(go_session(GO_MOD.replace("1.19", "1.22.12"))), CTX))
    assert isinstance(reject, Reject) and reject.reason == "build.go-toolchain-too-old"
