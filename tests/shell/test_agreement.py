"""Replay and the guard read command text through one analyser: on the same commands
they name the same written and deleted files."""

from __future__ import annotations

import posixpath

import pytest

from repo2rlenv.shell import command_effects
from train.guard.shell import analyze_shell

CWD = "/workspace"
WRITES = {"write", "append", "unknown", "touch", "copy", "move"}

CASES = [
    # (command, written, deleted) relative to CWD
    ("cat > a.py <<'EOF'\nx = 1\nEOF", {"a.py"}, set()),
    ("cat <<EOF > notes.txt\nplain\nEOF\nls", {"notes.txt"}, set()),
    ("printf '%s\\n' a b > out.txt && cat out.txt", {"out.txt"}, set()),
    ("echo hi >> log.txt; echo done", {"log.txt"}, set()),
    ("pytest -q 2> err.log | tail -5", {"err.log"}, set()),
    ("rm -f a.py b.py", set(), {"a.py", "b.py"}),
    ("rmdir build && unlink link", set(), {"build", "link"}),
    ("mv old.py new.py", {"new.py"}, {"old.py"}),
    ("cp src.py dst.py", {"dst.py"}, set()),
    ("touch tests/__init__.py", {"tests/__init__.py"}, set()),
    ("sed -i 's/a/b/' conf.ini", {"conf.ini"}, set()),
    ("sed -i '' 's/a/b/' conf.ini", {"conf.ini"}, set()),
    ("git rm -q tests/test_app.py", set(), {"tests/test_app.py"}),
    ("git rm --cached secrets.env", set(), set()),
    ("git status && git diff", set(), set()),
    ("cd sub && rm y.py", set(), {"sub/y.py"}),
    ("(cd sub && echo x > z.txt)", {"sub/z.txt"}, set()),
    ("bash -c 'rm tests/test_x.py'", set(), {"tests/test_x.py"}),
    ('sh -c "echo x > inner.txt"', {"inner.txt"}, set()),
    ("bash <<'EOF'\nrm -rf tests\nEOF", set(), {"tests"}),
    ("cat setup.py | tee copy.py > /dev/null", {"copy.py"}, set()),
    ("ls 2>/dev/null && grep -rn foo . 2>&1", set(), set()),
    ("timeout 60 pytest -x tests/", set(), set()),
    ("X=1 rm gone.txt", set(), {"gone.txt"}),
]


def _replay_view(command: str) -> tuple[set[str], set[str]]:
    """Replay's effects resolved the way replay applies them (cd moves the cwd)."""
    cwd, written, deleted = "", set(), set()
    for effect in command_effects(command).effects:
        path = posixpath.normpath(posixpath.join(cwd, effect.path))
        if effect.op == "cd":
            cwd = path
        elif effect.op == "delete":
            deleted.add(path)
        elif effect.op in WRITES:
            written.add(path)
            if effect.op == "move" and effect.source:
                deleted.add(posixpath.normpath(posixpath.join(cwd, effect.source)))
    return written, deleted


def _guard_view(command: str) -> tuple[set[str], set[str]]:
    facts = analyze_shell(command, CWD)

    def rel(path: str) -> str:
        return posixpath.relpath(path, CWD)

    return {rel(w.path) for w in facts.writes}, {rel(p) for p in facts.deletes}


@pytest.mark.parametrize(("command", "written", "deleted"), CASES)
def test_replay_and_guard_name_the_same_files(command, written, deleted):
    assert _replay_view(command) == (written, deleted)
    assert _guard_view(command) == (written, deleted)


@pytest.mark.parametrize(
    "command",
    ["cat > a.py <<'EOF'\nx = 1\nif a > b:\n    pass\nEOF", "printf 'k=%s\\n' 1 2 > a.py"],
)
def test_replay_and_guard_see_the_same_content(command):
    (replayed,) = command_effects(command).effects
    (guarded,) = analyze_shell(command, CWD).writes
    assert replayed.content == guarded.content


def test_a_deleted_tree_is_a_delete_for_the_guard_and_unknown_for_replay():
    """`find DIR -delete` removes files replay cannot name: opaque there, a delete of the
    tree for the guard."""
    effects = command_effects("find tests -name '*.py' -delete")
    assert effects.opaque and not effects.effects
    assert analyze_shell("find tests -name '*.py' -delete", CWD).deletes == ["/workspace/tests"]


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        ("cp src.py dst.py", ["/workspace/src.py"]),
        ("touch a/b.py", []),
        ("sed -i 's,a,b,' conf.ini", []),
        ("tee out.txt < in.txt", ["/workspace/in.txt"]),
    ],
)
def test_the_guard_does_not_take_a_written_file_for_a_read(command, reads):
    assert analyze_shell(command, CWD).reads == reads
