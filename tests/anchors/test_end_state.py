"""End-state anchors (`mine --end-state`): a session file committed beside the project it
worked on, as delivered-task repositories (`<user>/TASK-NN`: `repo/` holds the project,
`sessions/*.json` the agent's sessions) do. Records and repositories are written in the
test, in the same shape; the real repositories state no licence."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from repo2rlenv.anchors.end_state import end_files, find_prefix, locate, undo_session
from repo2rlenv.anchors.repos import AnchorError
from repo2rlenv.emit import Draft, Notice
from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline
from repo2rlenv.mining.sources import FileRevision
from tests.mining.factory import ROOT, SessionBuilder

pytestmark = pytest.mark.timeout(60)

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
ACTOR = git.Actor("t", "t@example.com")


def _fix_session(read: str | None = None) -> SessionBuilder:
    builder = SessionBuilder()
    if read is not None:
        builder.read(f"{ROOT}/calc.py", read)
    return (
        builder.user("the test fails, fix add")
        .run("python -m pytest -q", "F\n1 failed in 0.01s", 1)
        .edit(f"{ROOT}/calc.py", "return a - b", "return a + b")
        .run("python -m pytest -q", ".\n1 passed in 0.01s", 0)
    )


def _commit(repo: git.Repo, files: dict[str, str], message: str) -> str:
    top = Path(repo.working_tree_dir or "")
    for rel, text in files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text)
    repo.index.add(list(files))
    return repo.index.commit(message, author=ACTOR, committer=ACTOR).hexsha


@pytest.fixture
def task_repo(tmp_path) -> tuple[Path, str]:
    """`repo/` holds the project as the session left it; the session file is committed
    with it; a later commit changes the project again (never the end state used)."""
    top = tmp_path / "TASK-1"
    repo = git.Repo.init(top)
    _commit(repo, {"repo/calc.py": BUGGY, "repo/test_calc.py": TESTS}, "start")
    end = _commit(
        repo, {"repo/calc.py": FIXED, "sessions/bugfix-1.json": "{}\n"}, "bugfix-1 and session"
    )
    _commit(repo, {"repo/calc.py": FIXED + "\n# later\n"}, "a later session")
    return top, end


def _pipeline(tmp_path: Path, end_state: bool = True) -> SessionPipeline:
    options = MineOptions(
        dataset="tasks",
        validate_tasks=False,
        base_image="img:1",
        repo_cache=tmp_path / "cache",
        end_state=end_state,
    )
    return SessionPipeline(options, runtime=None)


def _repair_drafts(tmp_path, top):
    """The repair drafts the fix session committed as `top/sessions/bugfix-1.json` gives."""
    events = _pipeline(tmp_path).session_events(
        _fix_session().build(), "bugfix-1.json", FileRevision(top / "sessions/bugfix-1.json")
    )
    drafts = [e for e in events if isinstance(e, Draft) and e.bundle.task_id.startswith("repair")]
    assert drafts, events
    return drafts


def test_undo_reverses_edits_and_drops_files_the_session_wrote():
    session = (
        SessionBuilder()
        .user("change things")
        .read(f"{ROOT}/old.txt", "before\n")
        .write(f"{ROOT}/old.txt", "after\n")
        .write(f"{ROOT}/new.txt", "created\n")
        .edit(f"{ROOT}/a.py", "x = 1", "x = 2")
        .build()
    )
    end = {"a.py": "x = 2\n", "old.txt": "after\n", "new.txt": "created\n", "b.py": "kept\n"}
    assert undo_session(session, end) == {
        "a.py": "x = 1\n",
        "old.txt": "before\n",
        "b.py": "kept\n",
    }


@pytest.mark.parametrize(
    ("end", "why"),
    [
        ({"a.py": "x = 2\nx = 2\n"}, "found 2 times"),
        ({"a.py": "x = 3\n"}, "found 0 times"),
        ({}, "not in the commit"),
    ],
)
def test_undo_refuses_an_edit_it_cannot_place(end, why):
    session = SessionBuilder().user("edit").edit(f"{ROOT}/a.py", "x = 1", "x = 2").build()
    with pytest.raises(AnchorError) as caught:
        undo_session(session, end)
    assert caught.value.reason == "anchor.end-state-undo-failed"
    assert "a.py" in str(caught.value) and why in str(caught.value)


def test_prefix_is_the_folder_most_touched_paths_live_under():
    tree = ["repo/src/a.js", "repo/package.json", "docs/src/a.js", "metadata.json"]
    assert find_prefix(["src/a.js", "package.json"], tree) == "repo/"
    assert find_prefix(["metadata.json"], tree) == ""
    assert find_prefix(["nowhere.js"], tree) is None


def test_session_files_never_enter_the_start_state():
    tree = {"sessions/develop-1.json": "{}", "sessions/bugfix-1.json": "{}", "app.js": "1"}
    assert end_files(tree, "sessions/bugfix-1.json", "") == {"app.js": "1"}
    tree = {"trajectory.json": "{}", "trajectory-1.json": "{}", "app.js": "1", "a/t.json": "2"}
    assert end_files(tree, "trajectory-1.json", "") == {"app.js": "1", "a/t.json": "2"}


def test_locate_finds_the_oldest_commit_holding_the_files_bytes(task_repo, tmp_path):
    top, end = task_repo
    found = locate(top / "sessions/bugfix-1.json")
    assert (found.commit, found.path, found.url) == (end, "sessions/bugfix-1.json", "local:TASK-1")
    (top / "sessions/bugfix-1.json").write_text("{} \n")  # bytes no commit holds
    with pytest.raises(AnchorError, match="no commit") as caught:
        locate(top / "sessions/bugfix-1.json")
    assert caught.value.reason == "anchor.end-state-not-committed"
    loose = tmp_path / "loose.json"
    loose.write_text("{}")
    with pytest.raises(AnchorError) as caught:
        locate(loose)
    assert caught.value.reason == "anchor.end-state-not-committed"


def test_end_state_anchor_gives_the_start_before_the_sessions_edits(task_repo, tmp_path):
    top, end = task_repo
    drafts = _repair_drafts(tmp_path, top)
    files = {f.path: f.content.decode() for f in drafts[0].bundle.files}
    assert files["environment/workspace/calc.py"] == BUGGY  # the later commit never used
    assert files["environment/workspace/test_calc.py"] == TESTS
    assert not any("sessions" in path or "repo/" in path for path in files)
    source = drafts[0].bundle.config.metadata.repo2rlenv.source
    assert source.commit == end and source.repository == "local:TASK-1"
    assert source.anchor_found_by.startswith("end-state:sessions/bugfix-1.json@")


def test_a_wrong_end_state_is_refused_by_the_reads(task_repo, tmp_path):
    """No commit agrees with what the session read: not anchored (never a wrong start);
    the session is mined as without the option, the reason kept as a notice."""
    top, _ = task_repo
    builder = SessionBuilder().read(f"{ROOT}/test_calc.py", TESTS.replace("5", "6"))
    parsed = builder.user("the test fails, fix add").edit(f"{ROOT}/calc.py", "- b", "+ b").build()
    events = _pipeline(tmp_path).session_events(
        parsed, "bugfix-1.json", FileRevision(top / "sessions/bugfix-1.json")
    )
    notices = [e for e in events if isinstance(e, Notice)]
    assert [n.code for n in notices] == ["anchor.read-mismatch"]
    assert "commits tried" in notices[0].detail
    for draft in (e for e in events if isinstance(e, Draft)):
        source = draft.bundle.config.metadata.repo2rlenv.source
        assert source.commit is None and not source.anchor_found_by


def test_without_the_option_no_end_state_is_looked_for(task_repo, tmp_path):
    top, _ = task_repo
    parsed = _fix_session().build()
    events = _pipeline(tmp_path, end_state=False).session_events(
        parsed, "bugfix-1.json", FileRevision(top / "sessions/bugfix-1.json")
    )
    assert not any(isinstance(e, Draft) and e.bundle.task_id.startswith("repair") for e in events)


def test_an_earlier_commit_is_tried_when_the_files_own_commit_moved_on(tmp_path):
    """The project committed, then changed again, then the session file added: the
    file's own commit cannot be undone (`return a + b` is gone), its parent can."""
    top = tmp_path / "TASK-2"
    repo = git.Repo.init(top)
    _commit(repo, {"repo/calc.py": BUGGY, "repo/test_calc.py": TESTS}, "start")
    end = _commit(repo, {"repo/calc.py": FIXED}, "the session's fix")
    _commit(repo, {"repo/calc.py": "def add(a, b):\n    return sum((a, b))\n"}, "later")
    _commit(repo, {"sessions/bugfix-1.json": "{}\n"}, "the session file")
    drafts = _repair_drafts(tmp_path, top)
    source = drafts[0].bundle.config.metadata.repo2rlenv.source
    assert source.commit == end and "(its parent" in source.anchor_found_by
    files = {f.path: f.content.decode() for f in drafts[0].bundle.files}
    assert files["environment/workspace/calc.py"] == BUGGY


def _export(when: str, calls: list[tuple[str, dict, str]]) -> str:
    """A Claude Code `{messages, meta}` export (the delivered-task shape) of `calls`."""
    messages: list[dict] = [
        {"role": "user", "timestamp": when, "content": [{"type": "text", "text": "fix add"}]}
    ]
    for n, (name, args, output) in enumerate(calls):
        block = {"type": "tool_call", "tool_call_id": f"t{n}", "name": name, "arguments": args}
        messages.append({"role": "assistant", "timestamp": when, "content": [block]})
        result = [{"type": "tool_output", "text": output}]
        messages.append({"role": "tool", "tool_call_id": f"t{n}", "content": result})
    meta = {"session_meta": {"session_id": when, "version": "2.1.90", "cwd": ROOT}}
    return json.dumps({"meta": meta, "messages": messages})


def test_sessions_committed_together_are_undone_latest_first(tmp_path):
    """bugfix-1 fixed add, bugfix-2 (later) documented it; both files and the project
    as bugfix-2 left it are committed at once: bugfix-1's start is found by undoing
    bugfix-2 first."""
    documented = FIXED.replace("b):\n", 'b):\n    """Sum."""\n')
    first = _export(
        "2026-04-08T10:00:00Z",
        [
            ("Bash", {"command": "python -m pytest -q"}, "F\n1 failed in 0.01s"),
            (
                "Edit",
                {"file_path": f"{ROOT}/calc.py", "old_string": "a - b", "new_string": "a + b"},
                "The file has been updated.",
            ),
            ("Bash", {"command": "python -m pytest -q"}, ".\n1 passed in 0.01s"),
        ],
    )
    second = _export(
        "2026-04-09T10:00:00Z",
        [
            (
                "Edit",
                {
                    "file_path": f"{ROOT}/calc.py",
                    "old_string": "b):\n",
                    "new_string": 'b):\n    """Sum."""\n',
                },
                "The file has been updated.",
            )
        ],
    )
    top = tmp_path / "TASK-3"
    repo = git.Repo.init(top)
    files = {"repo/calc.py": documented, "repo/test_calc.py": TESTS}
    _commit(
        repo, {**files, "sessions/bugfix-1.json": first, "sessions/bugfix-2.json": second}, "all"
    )
    options = MineOptions(
        dataset=str(top / "sessions"),
        validate_tasks=False,
        base_image="img:1",
        repo_cache=tmp_path / "cache",
        end_state=True,
        kinds=["repair"],
    )
    events = list(SessionPipeline(options, runtime=None).events())
    drafts = [e for e in events if isinstance(e, Draft)]
    assert [d.record_id for d in drafts] == ["bugfix-1.json"], events
    files = {f.path: f.content.decode() for f in drafts[0].bundle.files}
    assert files["environment/workspace/calc.py"] == BUGGY


def test_a_later_commit_is_tried_before_the_next_sessions_file(tmp_path):
    """The session file committed first, the project's changes after it, then the next
    session's file: the commit before that one is the end state; the next session's
    own commit (which moved on) is never tried."""
    top = tmp_path / "TASK-4"
    repo = git.Repo.init(top)
    _commit(repo, {"repo/calc.py": BUGGY, "repo/test_calc.py": TESTS}, "start")
    _commit(repo, {"sessions/bugfix-1.json": "{}\n"}, "the session file")
    end = _commit(repo, {"repo/calc.py": FIXED}, "the session's fix")
    _commit(repo, {"repo/calc.py": "def add(a, b):\n    return a.__add__(b)\n"}, "later")
    _commit(repo, {"sessions/bugfix-2.json": "{}\n", "repo/calc.py": FIXED}, "next session")
    found = locate(top / "sessions/bugfix-1.json")
    assert len(found.later) == 2  # the fix and "later"; not the next session's commit
    drafts = _repair_drafts(tmp_path, top)
    source = drafts[0].bundle.config.metadata.repo2rlenv.source
    assert source.commit == end and "(its descendant" in source.anchor_found_by


def test_a_compacted_session_starts_at_its_last_compaction(task_repo, tmp_path):
    """Only the events after the last compaction are replayed: undoing them from the
    end state gives the state at the compaction, a known start for that part."""
    top, _ = task_repo
    parsed = _fix_session().build(compacted=True, compacted_at=1)
    events = _pipeline(tmp_path).session_events(
        parsed, "bugfix-1.json", FileRevision(top / "sessions/bugfix-1.json")
    )
    drafts = [e for e in events if isinstance(e, Draft) and e.bundle.task_id.startswith("repair")]
    assert drafts, events
    files = {f.path: f.content.decode() for f in drafts[0].bundle.files}
    assert files["environment/workspace/calc.py"] == BUGGY


def test_a_file_changed_after_the_session_starts_from_its_full_read():
    """The project moved on after the session (`x = 2` is gone from the commit): the
    file's start is the session's full read before its first edit; without such a read
    the undo is refused."""
    session = (
        SessionBuilder()
        .user("edit")
        .read(f"{ROOT}/a.py", "x = 1\ny = 0\n")
        .edit(f"{ROOT}/a.py", "x = 1", "x = 2")
        .edit(f"{ROOT}/b.py", "z = 1", "z = 2")
        .build()
    )
    end = {"a.py": "x = 3\ny = 0\n", "b.py": "z = 2\n"}
    assert undo_session(session, end) == {"a.py": "x = 1\ny = 0\n", "b.py": "z = 1\n"}
    with pytest.raises(AnchorError, match=r"b\.py"):
        undo_session(session, {"a.py": "x = 3\n", "b.py": "z = 3\n"})
    partial = SessionBuilder().user("e").read(f"{ROOT}/a.py", "x = 1\n", complete=False)
    partial = partial.edit(f"{ROOT}/a.py", "x = 1", "x = 2").build()
    with pytest.raises(AnchorError, match=r"a\.py"):
        undo_session(partial, {"a.py": "x = 3\n"})


def test_an_end_state_in_another_language_is_a_notice(tmp_path):
    """A Go project: not anchored (the kinds cannot build it), mined as without the
    option, the reason a notice rather than the whole record skipped."""
    top = tmp_path / "TASK-5"
    repo = git.Repo.init(top)
    _commit(repo, {"repo/calc.go": "package calc\n", "sessions/bugfix-1.json": "{}\n"}, "go")
    parsed = (
        SessionBuilder()
        .user("fix it")
        .read(f"{ROOT}/calc.go", "package calc\n")
        .run("go test ./...", "ok  \tcalc\t0.01s", 0)
        .build()
    )
    events = _pipeline(tmp_path).session_events(
        parsed, "bugfix-1.json", FileRevision(top / "sessions/bugfix-1.json")
    )
    assert [e.code for e in events if isinstance(e, Notice)] == ["anchor.language-unsupported"]


def test_a_partial_local_mirror_is_read_in_place(tmp_path):
    """A repo-map entry whose repository lacks a blob (a partial mirror) cannot be
    fetched from; its commit is read in place, the absent blob left out."""
    from repo2rlenv.anchors.find import Anchor
    from repo2rlenv.anchors.repos import RepoCache

    top = tmp_path / "mirror"
    repo = git.Repo.init(top)
    commit = _commit(repo, {"calc.py": FIXED, "big.txt": "large\n" * 10}, "one")
    blob = (repo.commit(commit).tree / "big.txt").hexsha
    (top / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    url = "https://github.com/example/partial"
    cache = RepoCache(tmp_path / "cache", {url: str(top)})
    files = cache.files_at(Anchor(url, commit, "test"))
    assert files == {"calc.py": FIXED}


def test_a_patch_only_session_finds_its_prefix_from_the_patched_paths():
    """A Codex session edits through apply_patch only: those paths place its root."""
    from repo2rlenv.anchors.end_state import locate_prefix

    patch = (
        "*** Begin Patch\n*** Update File: src/a.js\n@@\n-const a = 1;\n+const a = 2;\n"
        "*** End Patch\n"
    )
    session = SessionBuilder().user("change a").patch(patch).build()
    assert locate_prefix(session, ["fullstack/src/a.js", "README.md"]) == "fullstack/"
    undone = undo_session(session, {"src/a.js": "const a = 2;\n"})
    assert undone == {"src/a.js": "const a = 1;\n"}
