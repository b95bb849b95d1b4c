"""Each kind drafted from the example stories (no reader involved), checked statically."""

import json

import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.examples.session_stories import STORIES
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.replay import replay
from repo2rlenv.validate import run_static
from tests.mining.factory import SessionBuilder, from_story

CTX = SessionContext(dataset="examples", revision=None, record_id="story", base_image="img:1")


def outcomes(story_name: str, kind: str):
    return list(KINDS[kind](replay(from_story(STORIES[story_name])), CTX))


def bundles(story_name: str, kind: str):
    return [o for o in outcomes(story_name, kind) if not isinstance(o, Reject)]


def files(bundle) -> dict[str, str]:
    return {f.path: f.content.decode() for f in bundle.files}


@pytest.mark.parametrize(
    ("story", "kind"),
    [
        ("textstats", "build"),
        ("textstats", "extend"),
        ("stock", "repair"),
        ("slug", "repair"),
        ("roman", "build"),
        ("orders", "qa"),
    ],
)
def test_story_yields_a_clean_task(story, kind, tmp_path):
    (bundle,) = bundles(story, kind)
    assert bundle.config.metadata.repo2rlenv.kind == kind
    path = write_bundle(bundle, tmp_path).path
    assert [f.rule_id for f in run_static(read_task_dir(path)) if f.severity == "error"] == []


def test_repair_start_state_is_before_the_fix_and_tests_are_protected():
    (bundle,) = bundles("stock", "repair")
    content = files(bundle)
    assert "return sum(levels)\n" in content["environment/workspace/stock.py"]
    assert "sum(levels.values())" in content["solution/solve.sh"]
    assert (
        content["tests/protected/test_stock.py"] == content["environment/workspace/test_stock.py"]
    )
    settings = json.loads(content["tests/grading.json"])
    assert settings["mode"] == "all" and settings["expected"] == 3
    assert "1 failed, 2 passed" in bundle.instruction
    assert "sum(levels.values())" not in bundle.instruction


def test_build_hides_the_agents_tests_and_states_the_interface():
    (bundle,) = bundles("textstats", "build")
    content = files(bundle)
    assert not any(p.startswith("environment/workspace/") for p in content)
    assert "tests/hidden/test_textstats.py" in content
    assert "textstats.py" in content["solution/solve.sh"]
    assert "`longest_word`, `word_count`" in bundle.instruction
    assert json.loads(content["tests/grading.json"])["mode"] == "fraction"


def test_extend_starts_from_the_first_turns_end():
    (bundle,) = bundles("textstats", "extend")
    content = files(bundle)
    assert "sentence_count" not in content["environment/workspace/textstats.py"]
    assert "environment/workspace/test_textstats.py" in content
    assert "tests/hidden/test_sentences.py" in content
    assert json.loads(content["tests/grading.json"])["targets"] == ["test_sentences.py"]
    assert bundle.instruction.startswith("Now add sentence_count(text)")


def test_qa_answer_and_rederiving_reference():
    (bundle,) = bundles("orders", "qa")
    content = files(bundle)
    assert json.loads(content["tests/expected.json"]) == {"answer": "3"}
    assert "grep -c ',Canada,shipped' orders.csv" in content["solution/solve.sh"]
    assert content["environment/workspace/orders.csv"].count("Canada") == 4
    assert "answer.txt" in bundle.instruction and "3" not in bundle.instruction.split("?")[1]


def test_reasons_for_sessions_that_cannot_become_tasks():
    chat = outcomes("chat-only", "qa")
    assert [o.reason for o in chat] == ["qa.not-a-quantity-question"]
    assert outcomes("outside-root", "build")[0].reason == "build.no-passing-tests"
    unseen = (
        SessionBuilder()
        .user("fix it")
        .run("pytest -q", "1 failed", 1)
        .edit("/home/dev/proj/app.py", "a", "b")
        .run("pytest -q", "1 passed", 0)
        .build()
    )
    reasons = [o.reason for o in KINDS["repair"](replay(unseen), CTX)]
    assert reasons == ["reconstructable.unknown-files"]


def test_secrets_in_files_reject_the_task():
    story = [list(s) for s in STORIES["roman"]]
    story[1][2] += '\nAPI_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"\n'
    session = from_story([tuple(s) for s in story])
    assert [o.reason for o in KINDS["build"](replay(session), CTX)] == ["clean.secret-in-files"]


def test_task_ids_are_stable():
    first = bundles("stock", "repair")[0].task_id
    assert first == bundles("stock", "repair")[0].task_id
    assert first.startswith("repair-story-0-")
