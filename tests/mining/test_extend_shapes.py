"""The two extend shapes of issue 31, on sessions built from actions.

(a) A module built in one request, then tests for all of it with a change in the next:
the tests of what already worked pass on the start state, so the untouched start (and
every forgery probe with it) scored 0.5. They are dropped with a counted reason.
(b) An anchored session whose first request appends tests to a test file of the
checkout: no extend candidate was drafted, because the first request was skipped.

The Docker proofs (reference 1, no-op 0, probes held) are `slow`.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from repo2rlenv.bundle import write_bundle
from repo2rlenv.examples.session_stories import TEXTSTATS
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.kinds.start_failing import start_failing_tests
from repo2rlenv.replay import replay
from repo2rlenv.validate.probes import PROBES
from tests.mining.factory import from_story

CTX = SessionContext(dataset="examples", revision=None, record_id="story", base_image="img:1")

LONGEST_OLD = '    return max(found, key=len) if found else ""\n'
LONGEST_NEW = '    return max(found, key=len).lower() if found else ""\n'
ALL_TESTS = """from textstats import longest_word, word_count


def test_word_count():
    assert word_count("one two three") == 3


def test_longest_word_lower():
    assert longest_word("a Bee") == "bee"
"""


def built_then_tested(tests: str = ALL_TESTS, edit: bool = True) -> list[tuple]:
    """Shape (a): request 1 builds textstats.py, request 2 changes longest_word and
    writes tests for the whole module."""
    return [
        ("user", "Create textstats.py with word_count(text) and longest_word(text)."),
        ("write", "textstats.py", TEXTSTATS),
        ("run", "python -c 'import textstats'", "", 0),
        ("say", "Created textstats.py."),
        ("user", "Make longest_word return lower case, and add pytest tests for the module."),
        *([("edit", "textstats.py", LONGEST_OLD, LONGEST_NEW)] if edit else []),
        ("write", "test_textstats.py", tests),
        ("run", "python -m pytest -q", "..      [100%]\n2 passed in 0.02s\n", 0),
        ("say", "Done; 2 tests pass."),
    ]


CALC = (
    "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return add(x, x)\n\n\n"
    "def neg(x):\n    return -x\n"
)
CALC_TESTS = (
    "from calc import add, double, neg\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n"
)
APPENDED = (
    "\n\ndef test_mul():\n    from calc import mul\n    assert mul(3, 4) == 12\n\n\n"
    "def test_double():\n    assert double(2) == 4\n\n\n"
    "def test_neg():\n    assert neg(2) == -2\n"
)


def appended_first_request() -> list[tuple]:
    """Shape (b): the only request fixes add(), adds mul() and appends three tests to
    the checkout's test file (one of which tests what the fix does not touch)."""
    fixed = CALC.replace("a - b", "a + b") + "\n\ndef mul(a, b):\n    return a * b\n"
    return [
        ("user", "Fix add() and add mul(a, b) to calc.py, with tests in test_calc.py."),
        ("edit", "calc.py", CALC, fixed),
        ("edit", "test_calc.py", CALC_TESTS, CALC_TESTS + APPENDED),
        ("run", "python -m pytest -q", "....\n4 passed in 0.02s\n", 0),
        ("say", "Fixed add, added mul and three tests."),
    ]


def outcomes(story: list[tuple], baseline: dict[str, str] | None = None) -> list:
    return list(KINDS["extend"](replay(from_story(story), baseline), CTX))


def grading(bundle) -> dict:
    files = {f.path: f.content.decode() for f in bundle.files}
    return json.loads(files["tests/grading.json"])


def test_tests_of_what_already_worked_are_dropped_with_a_reason():
    found = outcomes(built_then_tested())
    rejects = [o for o in found if isinstance(o, Reject)]
    (bundle,) = [o for o in found if not isinstance(o, Reject)]
    assert [r.reason for r in rejects] == ["extend.passes-on-start"]
    assert "test_textstats.py::test_word_count" in rejects[0].detail
    settings = grading(bundle)
    assert settings["targets"] == ["test_textstats.py::test_longest_word_lower"]
    assert settings["expected"] == 1 and settings["hidden"] == ["test_textstats.py"]


def test_a_request_whose_every_new_test_passes_on_the_start_is_refused():
    only_old = ALL_TESTS.split("\n\ndef test_longest_word_lower")[0] + "\n"
    found = outcomes(built_then_tested(only_old))
    assert [o.reason for o in found] == ["extend.passes-on-start"]


def test_a_new_file_that_imports_a_new_name_fails_whole():
    new_name = ALL_TESTS.replace(
        "from textstats import longest_word, word_count",
        "from textstats import longest_word, word_count\nfrom textstats import lower_longest",
    )
    story = built_then_tested(new_name)
    story[5] = (
        "edit",
        "textstats.py",
        LONGEST_OLD,
        LONGEST_OLD + "\n\ndef lower_longest():\n    pass\n",
    )
    (bundle,) = outcomes(story)
    assert grading(bundle)["targets"] == ["test_textstats.py"]  # the whole file, as before


def test_anchored_first_request_appending_tests_gives_extend():
    baseline = {"calc.py": CALC, "test_calc.py": CALC_TESTS}
    found = outcomes(appended_first_request(), baseline)
    assert [o.reason for o in found if isinstance(o, Reject)] == ["extend.passes-on-start"]
    (bundle,) = [o for o in found if not isinstance(o, Reject)]
    settings = grading(bundle)
    # test_double reaches the fixed add() through double(); neg() is not changed.
    assert settings["targets"] == ["test_calc.py::test_mul", "test_calc.py::test_double"]
    assert settings["hidden"] == ["test_calc.py"] and settings["expected"] == 2
    files = {f.path: f.content.decode() for f in bundle.files}
    assert files["environment/workspace/calc.py"] == CALC
    assert "test_mul" not in files["environment/workspace/test_calc.py"]
    assert outcomes(appended_first_request()) == []  # no checkout: the first request is build's


def test_start_failing_reads_methods_fixtures_and_what_it_cannot_read():
    cart = "class Cart:\n    def total(self):\n        return 0\n\n"
    code = {"shop.py": cart + "    def size(self):\n        return 0\n"}
    changed = {"shop.py": code["shop.py"].replace("return 0\n\n", "return 1\n\n", 1)}
    tests = (
        "import pytest\nfrom shop import Cart\n\n\n"
        "@pytest.fixture\ndef cart():\n    return Cart()\n\n\n"
        "def test_total(cart):\n    assert cart.total() == 1\n\n\n"
        "class TestSize:\n    def test_size(self):\n        assert Cart().size() == 0\n\n\n"
        "def test_plain():\n    assert 1 + 1 == 2\n"
    )
    ids = ["test_total", "TestSize::test_size", "test_plain"]
    # Cart is affected through its changed method, so a test that builds one is kept.
    assert start_failing_tests(code, changed, "test_shop.py", tests, ids) == ids[:2]
    assert start_failing_tests(code, {"data.json": "{}"}, "test_shop.py", tests, ids) is None
    assert start_failing_tests(code, {"shop.py": "def (:"}, "test_shop.py", tests, ids) is None


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_both_shapes_are_proven_in_docker(docker_ready, tmp_path):
    """Reference 1, no-op 0 and every forgery probe held (at 0), for both shapes."""
    from repo2rlenv.cli import main

    ctx = dataclasses.replace(CTX, base_image=docker_ready)
    baseline = {"calc.py": CALC, "test_calc.py": CALC_TESTS}
    for story, seed in ((built_then_tested(), None), (appended_first_request(), baseline)):
        for found in KINDS["extend"](replay(from_story(story), seed), ctx):
            if not isinstance(found, Reject):
                write_bundle(found, tmp_path / "tasks")
    report = tmp_path / "validate.json"
    args = ["validate", str(tmp_path / "tasks"), "--reruns", "1", "-j", "1", "--no-cache"]
    assert main([*args, "--json", str(report)]) == 0
    tasks = json.loads(report.read_text())["tasks"]
    assert len(tasks) == 2
    for task in tasks:
        rewards = {t["label"]: t["reward"] for t in task["trials"]}
        assert rewards["reference"] == rewards["reference-rerun-1"] == 1.0
        assert rewards["noop"] == rewards["noop-rerun-1"] == 0.0
        planted = [p for p, probe in PROBES.items() if probe.applies is None]  # not JS's
        assert {p: rewards[p] for p in planted} == dict.fromkeys(planted, 0.0)
        assert task["label"]["status"] == "verified"


def test_start_failing_reads_module_statements_and_scripts_run_by_name():
    code = {"tool.py": "HANDLERS = {}\n\n\ndef run(name):\n    return HANDLERS[name]()\n"}
    registered = code["tool.py"] + '\n\nHANDLERS.update(hello=lambda: "hi")\n'
    tests = (
        "import subprocess\n\nfrom tool import run\n\n\n"
        'def test_hello():\n    assert run("hello") == "hi"\n\n\n'
        'def test_script():\n    subprocess.run(["python", "tool.py"], check=True)\n\n\n'
        "def test_plain():\n    assert subprocess is not None\n"
    )
    ids = ["test_hello", "test_script", "test_plain"]
    kept = start_failing_tests(code, {"tool.py": registered}, "test_tool.py", tests, ids)
    # HANDLERS is named by the new module-level call, run() uses it, the script is
    # named by file; test_plain reaches nothing the change touches.
    assert kept == ["test_hello", "test_script"]
