import pytest

from repo2rlenv.replay import replay
from repo2rlenv.replay.patches import PatchError, apply_hunks, parse_codex_patch
from repo2rlenv.replay.paths import PathResolver
from repo2rlenv.shell import command_effects
from tests.mining.factory import ROOT, SessionBuilder


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a.py", "a.py"),
        ("./pkg/../a.py", "a.py"),
        (f"{ROOT}/src/x.py", "src/x.py"),
        ("../outside.py", None),
        ("/etc/passwd", None),
        (f"{ROOT}/../proj2/x", None),
        (f"{ROOT}-evil/x", None),
        ("~/.ssh/id_rsa", None),
        ("a\x00b", None),
        ("", None),
    ],
)
def test_paths_are_confined_lexically(raw, expected):
    assert PathResolver(ROOT).resolve(raw) == expected


@pytest.mark.parametrize("root", [ROOT, "C:\\Users\\x\\proj", None])
def test_a_forked_resolver_resolves_alike_and_keeps_its_own_cd(root):
    # One command's `cd` moves only that command's resolver (a fork), never the session's.
    session = PathResolver(root)
    session.chdir("pkg")
    local = session.fork()
    assert (local.root, local.windows, local.cwd) == (session.root, session.windows, session.cwd)
    for raw in ("a.py", "../b.py", "/etc/passwd", f"{ROOT}/src/x.py", "C:\\Users\\x\\proj\\y"):
        assert local.resolve(raw) == session.resolve(raw)
    local.chdir("sub")
    assert session.cwd == "pkg" and local.cwd == "pkg/sub"


def test_write_edit_read_timeline():
    session = (
        SessionBuilder()
        .user("go")
        .write("a.py", "x = 1\n")
        .edit("a.py", "x = 1", "x = 2")
        .read("b.py", "b = 0\n")
        .edit("b.py", "b = 0", "b = 9")
        .build()
    )
    result = replay(session)
    ws = result.workspace
    assert ws.snapshot(1)["a.py"].status == "absent"  # before it was created
    assert ws.snapshot(3)["a.py"].content == "x = 2\n"
    assert ws.snapshot(0)["b.py"].content == "b = 0\n"  # known from a later read
    assert ws.snapshot(5)["b.py"].content == "b = 9\n"
    assert ws.changed_between(0, 5) == ["a.py", "b.py"]


def test_edit_of_unseen_file_is_partial_and_failed_edit_is_not_applied():
    session = (
        SessionBuilder()
        .user("go")
        .edit("c.py", "a", "b")
        .write("d.py", "one\n")
        .edit("d.py", "missing", "two")
        .write("e.py", "e\n")
        .edit("e.py", "e", "E", ok=False)
        .build()
    )
    ws = replay(session).workspace
    end = ws.snapshot(99)
    assert end["c.py"].status == "partial"
    assert end["d.py"].status == "unknown"
    assert end["e.py"].content == "e\n"


def test_later_read_that_contradicts_belief_makes_earlier_state_unknown():
    session = (
        SessionBuilder()
        .user("go")
        .write("f.py", "v1\n")
        .run("black .")
        .read("f.py", "v1-formatted\n")
        .build()
    )
    ws = replay(session).workspace
    assert ws.snapshot(2)["f.py"].status == "unknown"
    assert ws.snapshot(4)["f.py"].content == "v1-formatted\n"
    assert ws.opaque_between(0, 4)


def test_outside_paths_are_recorded_never_written():
    session = (
        SessionBuilder()
        .user("go")
        .write("/etc/hosts", "x")
        .write("../up.txt", "y")
        .run("cat > /tmp/z <<'EOF'\nz\nEOF")
        .build()
    )
    result = replay(session)
    assert result.workspace.files == {}
    assert result.outside == ["/etc/hosts", "../up.txt", "/tmp/z"]


@pytest.mark.parametrize(
    ("command", "path", "content"),
    [
        ("cat > a.txt <<'EOF'\nhello $USER\nEOF", "a.txt", "hello $USER\n"),
        ("cat <<EOF > a.txt\nplain\nEOF", "a.txt", "plain\n"),
        ("printf 'a\\nb\\n' > a.txt", "a.txt", "a\nb\n"),
        ("printf '%s\\n' x y > a.txt", "a.txt", "x\ny\n"),
        ("echo -n hi > a.txt", "a.txt", "hi"),
        ("cd sub && echo hi > a.txt", "sub/a.txt", "hi\n"),
        ("bash -c 'echo nested > a.txt'", "a.txt", "nested\n"),
    ],
)
def test_shell_writes(command, path, content):
    ws = replay(SessionBuilder().user("go").run(command).build()).workspace
    assert ws.snapshot(99)[path].content == content


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("cat <<EOF > a.txt\n$HOME\nEOF", "a.txt"),
        ("python gen.py > a.txt", "a.txt"),
        ("sed -i 's/a/b/' a.txt", "a.txt"),
    ],
)
def test_ambiguous_writes_make_the_file_unknown(command, path):
    ws = replay(SessionBuilder().user("go").write(path, "seed\n").run(command).build()).workspace
    assert ws.snapshot(99)[path].status == "unknown"


def test_cat_output_is_a_full_read_and_rm_mv_cp():
    session = (
        SessionBuilder()
        .user("go")
        .run("cat a.py", "A = 1")
        .run("cp a.py b.py && mv a.py c.py")
        .run("rm -rf gone")
        .build()
    )
    ws = replay(session).workspace
    end = ws.snapshot(99)
    assert ws.snapshot(0)["a.py"].content == "A = 1\n"
    assert end["a.py"].status == "absent"
    assert end["b.py"].content == end["c.py"].content == "A = 1\n"
    assert end["gone"].status == "absent"


def test_checks_are_recorded_with_their_cwd_and_exit_code():
    session = (
        SessionBuilder()
        .user("go")
        .run("cd pkg && python -m pytest -q tests", "1 failed", 1)
        .run("ls")
        .build()
    )
    commands = replay(session).commands
    assert commands[0].checks == [["python", "-m", "pytest", "-q", "tests"]]
    assert commands[0].cwd == "pkg" and commands[0].exit_code == 1
    assert commands[1].checks == []


CODEX_PATCH = """*** Begin Patch
*** Update File: app.py
@@ def greet():
-    return "hi"
+    return "hello"
*** Add File: new.txt
+fresh
*** Delete File: old.txt
*** End Patch"""


def test_codex_patch_and_unified_diff():
    session = (
        SessionBuilder()
        .user("go")
        .write("app.py", 'def greet():\n    return "hi"\n')
        .write("old.txt", "x\n")
        .patch(CODEX_PATCH)
        .diff("--- a/new.txt\n+++ b/new.txt\n@@ -1 +1 @@\n-fresh\n+fresher\n")
        .build()
    )
    end = replay(session).workspace.snapshot(99)
    assert end["app.py"].content == 'def greet():\n    return "hello"\n'
    assert end["new.txt"].content == "fresher\n"
    assert end["old.txt"].status == "absent"


def test_patch_that_does_not_apply_is_refused():
    patches = parse_codex_patch(
        "*** Begin Patch\n*** Update File: a\n@@\n-nope\n+yes\n*** End Patch"
    )
    with pytest.raises(PatchError):
        apply_hunks("something else\n", patches[0].hunks)


def test_turn_spans_cover_the_session():
    result = replay(
        SessionBuilder().user("one").write("a", "1").user("two").write("b", "2").build()
    )
    assert [result.turn_span(i) for i in range(2)] == [(0, 2), (2, 4)]


def test_opaque_commands_are_marked():
    effects = command_effects("npm install && ls")
    assert effects.opaque
    assert not command_effects("git status && pytest -q").opaque


def test_read_back_without_final_newline_is_not_a_conflict():
    session = (
        SessionBuilder()
        .user("go")
        .write("a.py", "x = 1\n")
        .read("a.py", "x = 1")
        .edit("a.py", "x = 1", "x = 2")
        .build()
    )
    ws = replay(session).workspace
    assert ws.snapshot(2)["a.py"].content == "x = 1\n"
    assert ws.snapshot(99)["a.py"].content == "x = 2\n"
