"""The kinds' gates of issue 17, each on a real-shaped session excerpt built from
actions (no reader involved): extend from tests appended to an existing file, repair
from an inferred fail->pass, qa only from a succeeding command, a matching final reply
and a question about the files."""

import json

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.examples.session_stories import (
    SENTENCES_NEW,
    SENTENCES_OLD,
    STORIES,
    TEXTSTATS_TESTS,
)
from repo2rlenv.gate import tree_of
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.kinds.checks import same_tests_fail_then_pass
from repo2rlenv.kinds.collected import added_test_ids, collected_test_ids
from repo2rlenv.replay import replay
from repo2rlenv.runners.summary import summary_counts
from repo2rlenv.validate import run_static
from tests.mining.factory import SessionBuilder, from_story

CTX = SessionContext(dataset="examples", revision=None, record_id="story", base_image="img:1")

APPENDED = """

def test_sentences():
    assert sentence_count("Hi. How are you? Fine!") == 3


class TestSentenceEdges:
    def test_blank(self):
        assert sentence_count("   ") == 0
"""


def outcomes(story, kind):
    return list(KINDS[kind](replay(from_story(story)), CTX))


def appended_story():
    """Build, then extend with the new tests appended to the existing test file (the
    held-out case of issue 17: no extend task came out of it)."""
    story = list(STORIES["textstats"][:5])
    return [
        *story,
        ("user", STORIES["textstats"][5][1]),
        ("edit", "textstats.py", SENTENCES_OLD, SENTENCES_NEW),
        (
            "edit",
            "test_textstats.py",
            TEXTSTATS_TESTS,
            TEXTSTATS_TESTS.replace(
                "from textstats import longest_word, word_count",
                "from textstats import longest_word, sentence_count, word_count",
            )
            + APPENDED,
        ),
        ("run", "python -m pytest -q", "......      [100%]\n6 passed in 0.02s\n", 0),
        ("say", "Added sentence_count and two tests to test_textstats.py; all 6 pass."),
    ]


def test_collected_ids_from_the_syntax_tree():
    source = (
        TEXTSTATS_TESTS
        + APPENDED
        + "\nclass TestBuilt:\n    def __init__(self):\n"
        + ("        pass\n\n    def test_never(self):\n        pass\n")
    )
    assert collected_test_ids(source) == [
        "test_word_count",
        "test_word_count_empty",
        "test_longest_word",
        "test_longest_word_empty",
        "test_sentences",
        "TestSentenceEdges::test_blank",
    ]
    assert collected_test_ids("def test_x(:\n") is None
    assert added_test_ids(TEXTSTATS_TESTS, TEXTSTATS_TESTS + APPENDED) == [
        "test_sentences",
        "TestSentenceEdges::test_blank",
    ]
    assert added_test_ids("def test_x(:\n", APPENDED) == []


def test_extend_from_tests_appended_to_an_existing_file(tmp_path):
    (bundle,) = [o for o in outcomes(appended_story(), "extend") if not isinstance(o, Reject)]
    files = {f.path: f.content.decode() for f in bundle.files}
    settings = json.loads(files["tests/grading.json"])
    assert settings["targets"] == [
        "test_textstats.py::test_sentences",
        "test_textstats.py::TestSentenceEdges::test_blank",
    ]
    assert settings["expected"] == 2 and settings["hidden"] == ["test_textstats.py"]
    assert settings["protected"] == []  # the hidden, longer copy replaces the start one
    assert "test_blank" in files["tests/hidden/test_textstats.py"]
    assert "test_blank" not in files["environment/workspace/test_textstats.py"]
    assert "sentence_count" not in files["environment/workspace/textstats.py"]
    assert "test_textstats.py" not in files["solution/solve.sh"]
    assert "`sentence_count`" in bundle.instruction
    path = write_bundle(bundle, tmp_path).path
    assert [f.rule_id for f in run_static(read_task_dir(path)) if f.severity == "error"] == []


def test_extend_rejects_an_edit_that_adds_no_test():
    story = appended_story()
    story[7] = ("edit", "test_textstats.py", "== 3", "== 3  # three words")
    assert [o.reason for o in outcomes(story, "extend")] == ["extend.no-new-tests"]


NOTES = "alpha\nbeta\ngamma\n"
ROOT = "/home/dev/proj"


def qa_reasons(session) -> list[str]:
    found = KINDS["qa"](replay(session), CTX)
    return [o.reason if isinstance(o, Reject) else "task" for o in found]


def test_qa_from_a_failed_cat_is_rejected():
    """Issue 17: an export with no exit codes; the `cat` failed, its error text says
    "Exit code 1", and the agent's reply repeats the 1."""
    session = (
        SessionBuilder()
        .user("How many keys are set in .env?")
        .run("cat .env", "Exit code 1\ncat: .env: No such file or directory", None)
        .say("The .env file has 1 key set.")
        .build()
    )
    assert qa_reasons(session) == ["qa.command-failed"]


def test_qa_from_a_command_that_exited_non_zero_is_rejected():
    session = (
        SessionBuilder()
        .user("How many lines does notes.txt have?")
        .read(f"{ROOT}/notes.txt", NOTES)
        .run("wc -l notes.txt", "3 notes.txt\n", 1)
        .say("notes.txt has 3 lines.")
        .build()
    )
    assert qa_reasons(session) == ["qa.command-failed"]


def test_qa_with_unknown_exit_status_and_clean_output_is_kept():
    session = (
        SessionBuilder()
        .user("How many lines does notes.txt have?")
        .read(f"{ROOT}/notes.txt", NOTES)
        .run("wc -l notes.txt", "3 notes.txt\n", None)
        .say("notes.txt has 3 lines.")
        .build()
    )
    assert qa_reasons(session) == ["task"]


def test_qa_reply_that_gives_two_printed_numbers_is_ambiguous():
    session = (
        SessionBuilder()
        .user("How many lines do the notes files have?")
        .read(f"{ROOT}/a.txt", NOTES)
        .read(f"{ROOT}/b.txt", NOTES + "delta\n")
        .run("wc -l a.txt b.txt", " 3 a.txt\n 4 b.txt\n 7 total\n", 0)
        .say("a.txt has 3 lines and b.txt has 4.")
        .build()
    )
    assert qa_reasons(session) == ["qa.answer-ambiguous"]


def test_qa_question_not_about_the_files_is_rejected():
    session = (
        SessionBuilder()
        .user("How many moons does Mars have?")
        .read(f"{ROOT}/notes.txt", "Phobos\nDeimos\n")
        .run("wc -l notes.txt", "2 notes.txt\n", 0)
        .say("Mars has 2 moons.")
        .build()
    )
    assert qa_reasons(session) == ["qa.not-about-files"]
    session.events[0] = session.events[0].model_copy(
        update={"text": "How many moons does my notes file list?"}
    )
    assert qa_reasons(session) == ["task"]


def inferred_repair(passing_output: str) -> list[str]:
    """The stock story as an export without exit codes would give it: replay read both
    statuses from the summary lines and marked them `exit_inferred`."""
    story = [list(step) for step in STORIES["stock"]]
    story[5][2] = passing_output
    rep = replay(from_story([tuple(s) for s in story]))
    for command in rep.commands:
        command.exit_inferred = True  # set by replay on the sessions branch
    return [o.reason if isinstance(o, Reject) else "task" for o in KINDS["repair"](rep, CTX)]


def test_repair_from_an_inferred_fail_then_pass():
    assert inferred_repair("...          [100%]\n3 passed in 0.02s\n") == ["task"]
    verbose = (
        "test_stock.py::test_restock PASSED\ntest_stock.py::test_ship PASSED\n"
        "test_stock.py::test_total PASSED\n\n============ 3 passed in 0.02s ============\n"
    )
    assert inferred_repair(verbose) == ["task"]


def test_inferred_pair_must_show_the_same_tests():
    fewer = "..           [100%]\n2 passed, 1 deselected in 0.02s\n"
    assert inferred_repair(fewer) == ["repair.inferred-mismatch"]  # the failing one not run
    other = "..           [100%]\n2 passed in 0.02s\n"
    assert inferred_repair(other) == ["repair.inferred-mismatch"]
    renamed = (
        "test_stock.py::test_restock PASSED\ntest_stock.py::test_ship PASSED\n"
        "test_stock.py::test_total_v2 PASSED\n\n=========== 3 passed in 0.02s ===========\n"
    )
    assert inferred_repair(renamed) == ["repair.inferred-mismatch"]
    assert inferred_repair("looks fine to me\n") == ["repair.inferred-mismatch"]


def test_summary_counts_of_both_runners():
    assert summary_counts("====== 1 failed, 229 passed, 2 warnings in 3.10s ======")["failed"] == 1
    unittest = "F..\n----\nRan 3 tests in 0.001s\n\nFAILED (failures=1)\n"
    assert summary_counts(unittest) == {
        "passed": 2,
        "failed": 1,
        "error": 0,
        "skipped": 0,
        "xfailed": 0,
        "xpassed": 0,
    }
    assert same_tests_fail_then_pass(unittest, "Ran 3 tests in 0.001s\n\nOK\n") is None
    assert summary_counts("no summary here") is None


def test_repair_whose_traceback_quotes_unchanged_start_code_is_clean():
    """Held-out repair case of issue 17: the failing run's traceback quotes a line of
    stock.py that the fix leaves as it is; solve.sh rewrites the whole file, so that
    line is in the reference too, but it gives nothing away."""
    story = [list(step) for step in STORIES["stock"]]
    story[3][2] = story[3][2].replace(
        "test_stock.py:16: TypeError",
        "test_stock.py:16: in test_total\n"
        "stock.py:12: in ship\n    levels[item] = levels[item] - amount\nTypeError",
    )
    (bundle,) = [
        o
        for o in KINDS["repair"](replay(from_story([tuple(s) for s in story])), CTX)
        if not isinstance(o, Reject)
    ]
    assert "levels[item] = levels[item] - amount" in bundle.instruction
    assert [f.rule_id for f in run_static(tree_of(bundle)) if f.severity == "error"] == []


def test_repair_whose_failing_test_file_was_never_seen():
    """Shape of a swe-smith trajectory: the agent wrote a scratch `test_athena.py` at the
    root, but the failing command ran `tests/test_athena/test_athena.py`, never shown."""
    session = (
        SessionBuilder()
        .user("Fix list_named_queries for work groups.")
        .write(f"{ROOT}/test_athena.py", "def test_scratch():\n    assert True\n")
        .write(f"{ROOT}/moto/models.py", "def names(q):\n    return q.workgroup.name\n")
        .run(
            "python -m pytest tests/test_athena/test_athena.py -v",
            "FAILED tests/test_athena/test_athena.py::test_list_named_queries\n"
            "1 failed, 22 passed in 0.49s\n",
            1,
        )
        .edit(f"{ROOT}/moto/models.py", "q.workgroup.name", "q.workgroup")
        .run("python -m pytest tests/test_athena/test_athena.py -v", "23 passed in 0.41s\n", 0)
        .build()
    )
    outcome = list(KINDS["repair"](replay(session), CTX))
    assert [o.reason for o in outcome] == ["reconstructable.tests-unknown"]
    assert "tests/test_athena/test_athena.py" in outcome[0].detail
