"""The verifier script's readers of `go test -json` events and libtest lines, and its
count of hidden tests by name (an added test never counts; a missing one fails)."""

from __future__ import annotations

import json

import pytest

from repo2rlenv.kinds.grading_node import GRADE_NODE_PY

SETTINGS_LINE = 'SETTINGS = json.loads(Path("/tests/grading.json").read_text())'


@pytest.fixture(scope="module")
def grade() -> dict:
    assert SETTINGS_LINE in GRADE_NODE_PY
    namespace: dict = {"__name__": "grade"}
    exec(GRADE_NODE_PY.replace(SETTINGS_LINE, 'SETTINGS = {"node_modules": "/x"}'), namespace)
    return namespace


def event(action: str, test: str | None, package: str = "example.com/calc") -> str:
    return json.dumps({"Action": action, "Package": package, "Test": test})


def test_go_json_reads_top_level_tests_and_unbuilt_packages(grade):
    text = "\n".join(
        [
            event("run", "TestAdd"),
            event("pass", "TestAdd/sub"),
            event("pass", "TestAdd"),
            event("fail", "TestZero"),
            event("skip", "TestSkip"),
            "# example.com/broken: not json",
            event("fail", None, "example.com/broken"),
            event("fail", None),
        ]
    )
    assert grade["go_json"](text) == [
        ("TestAdd", "passed"),
        ("TestZero", "failed"),
        ("TestSkip", "skipped"),
        ("<package failed>", "failed"),
    ]


def test_libtest_lines(grade):
    text = (
        "running 3 tests\ntest adds ... ok\ntest tests::zero ... FAILED\n"
        "test slow ... ignored\ntest result: FAILED. 1 passed; 1 failed; 1 ignored"
    )
    assert grade["libtest"](text) == [
        ("adds", "passed"),
        ("tests::zero", "failed"),
        ("slow", "skipped"),
    ]


def test_only_the_hidden_tests_count(grade):
    cases = [("adds", "passed"), ("extra", "passed"), ("m::zero", "passed"), ("m::zero", "failed")]
    assert grade["named"](cases, ["adds", "zero", "gone"]) == ["passed", "failed", "failed"]


def test_go_canary_joins_the_tests_package_under_names_drawn_per_run(tmp_path):
    """Package code can print `--- PASS:` lines: fixed canary names could be forged."""
    from repo2rlenv.runners import RUNNERS

    spec = RUNNERS["go-test"].verifier()
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "calc_test.go").write_text("package calc\n")
    drawn = []
    for _ in range(2):
        settings = {
            "node_modules": "/x",
            "report": "go-json",
            "canary": spec.canary,
            "canary_path": "calc/rlenv_canary_test.go",
            "canary_package_of": "calc_test.go",
            "canary_pass": spec.canary_pass,
            "canary_fail": spec.canary_fail,
        }
        namespace: dict = {"__name__": "grade"}
        exec(GRADE_NODE_PY.replace(SETTINGS_LINE, f"SETTINGS = {settings!r}"), namespace)
        namespace["place_canary"](tmp_path)
        text = (tmp_path / "calc" / "rlenv_canary_test.go").read_text()
        good = namespace["SETTINGS"]["canary_pass"]
        assert text.startswith("package calc\n") and f"func {good}(" in text
        assert good.startswith(spec.canary_pass + "_") and good != spec.canary_pass
        drawn.append(good)
    assert drawn[0] != drawn[1]
