"""Uncommitted changes a session printed: applied on top of the checkout, or a skip."""

from __future__ import annotations

import pytest

from repo2rlenv.anchors.dirty import apply_local_changes, local_state
from repo2rlenv.anchors.repos import AnchorError
from repo2rlenv.emit import Draft, Skip
from tests.anchors.test_anchors import CALC_BUGGY, URL, pipeline
from tests.mining.factory import ROOT, SessionBuilder

DIFF = (
    "diff --git a/calc.py b/calc.py\nindex 1111111..2222222 100644\n--- a/calc.py\n"
    "+++ b/calc.py\n@@ -4,3 +4,3 @@ def add(a, b):\n \n def double(x):\n"
    "-    return add(x, x)\n+    return 2 * add(x, x) // 2\n"
)
DIRTY_CALC = CALC_BUGGY.replace("return add(x, x)", "return 2 * add(x, x) // 2")
STATUS = (
    "On branch main\nChanges not staged for commit:\n"
    '  (use "git add <file>..." to update what will be committed)\n\tmodified:   calc.py\n'
)
STAGED = "On branch main\nChanges to be committed:\n\tmodified:   calc.py\n"


def dirty_session(*shown: tuple[str, str]) -> SessionBuilder:
    builder = SessionBuilder().user("the tests fail, fix add")
    for command, output in shown:
        builder.run(command, output)
    return (
        builder.run("python -m pytest -q", "F.\n1 failed, 1 passed in 0.01s", 1)
        .edit(f"{ROOT}/calc.py", "return a - b", "return a + b")
        .run("python -m pytest -q", "..\n2 passed in 0.01s", 0)
    )


def anchored(builder: SessionBuilder, commit: str):
    return builder.build(git={"repository_url": URL, "commit_hash": commit})


def test_a_printed_diff_is_applied_to_the_start_state(repo, tmp_path):
    path, commit = repo
    parsed = anchored(dirty_session(("git status", STATUS), ("git diff", DIFF)), commit)
    events = pipeline(tmp_path, path).session_events(parsed, "d1", None)
    (draft,) = [e for e in events if isinstance(e, Draft) and e.kind == "repair"]
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    assert files["environment/workspace/calc.py"] == DIRTY_CALC
    assert "2 * add(x, x) // 2" in files["solution/solve.sh"]  # the fix keeps the local edit
    source = draft.bundle.config.metadata.repo2rlenv.source
    assert source.anchor_found_by == "test.git + uncommitted: git diff"


@pytest.mark.parametrize(
    ("shown", "detail"),
    [
        ([("git status", STATUS)], "calc.py were never shown"),
        ([("git status", STATUS), ("git diff --stat", " calc.py | 2 +-\n")], "never shown"),
        ([("git status --short", " M calc.py\n?? notes.txt\n"), ("git diff", DIFF)], "notes.txt"),
        ([("git diff", DIFF.replace("return add(x, x)", "return x + x"))], "does not apply"),
        ([("git status", STAGED), ("git diff", DIFF)], "staged changes"),
    ],
)
def test_changes_that_cannot_be_rebuilt_skip_the_session(repo, tmp_path, shown, detail):
    path, commit = repo
    (event,) = pipeline(tmp_path, path).session_events(
        anchored(dirty_session(*shown), commit), "d2", None
    )
    assert isinstance(event, Skip) and event.reason == "anchor.uncommitted-changes"
    assert detail in event.detail


def test_staged_changes_shown_with_cached_diff_and_clutter_are_fine(repo, tmp_path):
    path, commit = repo
    shown = [
        ("git status -s", "M  calc.py\n?? __pycache__/\n?? .venv/\n"),
        ("git diff --cached", DIFF),
    ]
    events = pipeline(tmp_path, path).session_events(
        anchored(dirty_session(*shown), commit), "d3", None
    )
    (draft,) = [e for e in events if isinstance(e, Draft) and e.kind == "repair"]
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    assert files["environment/workspace/calc.py"] == DIRTY_CALC


def test_status_after_the_agents_first_edit_is_not_local_state():
    session = (
        SessionBuilder()
        .user("x")
        .run("git status", "nothing to commit, working tree clean\n")
        .edit(f"{ROOT}/calc.py", "a", "b")
        .run("git status", STATUS)
        .build()
    )
    assert not local_state(session).dirty
    files = {"calc.py": CALC_BUGGY}
    assert apply_local_changes(session, files) == (files, "")


def test_status_paths_are_relative_to_where_git_ran():
    session = SessionBuilder().user("x").run("git status", STATUS, cwd=f"{ROOT}/pkg").build()
    assert local_state(session).modified == {"pkg/calc.py"}
    with pytest.raises(AnchorError) as raised:
        apply_local_changes(session, {"pkg/calc.py": CALC_BUGGY})
    assert raised.value.reason == "anchor.uncommitted-changes"


def test_conflicts_count_as_local_changes():
    conflict = "On branch main\nUnmerged paths:\n\tboth modified:   calc.py\n"
    session = SessionBuilder().user("x").run("git status", conflict).build()
    assert local_state(session).modified == {"calc.py"}


def test_new_and_deleted_files_in_a_diff(tmp_path):
    diff = (
        "diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/notes.txt\n@@ -0,0 +1 @@\n+hello\n"
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-x = 1\n"
    )
    session = (
        SessionBuilder()
        .user("x")
        .run("git status -s", "?? notes.txt\n D old.py\n")
        .run("git diff HEAD", diff)
        .build()
    )
    files, shown = apply_local_changes(session, {"old.py": "x = 1\n", "a.py": ""})
    assert files == {"notes.txt": "hello\n", "a.py": ""}
    assert shown == "git diff"
