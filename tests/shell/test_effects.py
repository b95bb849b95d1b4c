"""The shared analyser's file effects on the shapes replay and the guard both meet."""

from __future__ import annotations

import subprocess
import sys

from repo2rlenv.shell import argument_effects, command_effects
from repo2rlenv.shell.deobfuscate import printf_output
from repo2rlenv.shell.vocabulary import NO_ACCESS, PURE_READERS, READ_ONLY


def _ops(command: str) -> list[tuple[str, str]]:
    return [(e.op, e.path) for e in command_effects(command).effects]


def test_an_unclosed_heredoc_is_opaque():
    effects = command_effects("cat > a.py <<'EOF'\nx = 1\n")
    assert effects.opaque and not effects.effects


def test_a_dash_heredoc_loses_its_leading_tabs():
    (effect,) = command_effects("cat > a.py <<-'EOF'\n\tx = 1\n\tEOF").effects
    assert effect.content == "x = 1\n"


def test_an_unquoted_heredoc_with_expansions_writes_unknown_content():
    (effect,) = command_effects("cat > a.txt <<EOF\nhome=$HOME\nEOF").effects
    assert (effect.op, effect.content) == ("unknown", None)


def test_a_file_named_by_an_expansion_is_not_known():
    effects = command_effects("rm $TARGET")
    assert effects.opaque and not effects.effects
    assert _ops("cp $(npm root -g)/x.json dst.json") == [("unknown", "dst.json")]


def test_mv_into_a_directory_deletes_the_sources_and_is_opaque():
    effects = command_effects("mv a.py b.py pkg/")
    assert effects.opaque
    assert sorted((e.op, e.path) for e in effects.effects) == [
        ("delete", "a.py"),
        ("delete", "b.py"),
        ("unknown", "pkg/"),
    ]


def test_command_lookups_and_wrappers():
    assert not command_effects("command -v opencode || true").opaque
    assert not command_effects("sudo -u app cat /etc/hosts").opaque
    assert command_effects("npm install && ls").opaque


def test_truncate_skips_its_size_value():
    assert argument_effects("truncate", ["-s", "0", "t.py"]) == (
        argument_effects("truncate", ["t.py"])[0],
        False,
    )
    assert _ops("truncate -s 0 t.py") == [("unknown", "t.py")]


def test_printf_reuses_its_format_for_left_arguments():
    assert printf_output(["%s=%s\\n", "a", "1", "b", "2"]) == "a=1\nb=2\n"
    assert printf_output(["plain\\n", "ignored"]) == "plain\n"


def test_the_vocabulary_nests():
    """What touches no file writes none, and a pure reader writes none: one list
    extends the other."""
    assert NO_ACCESS <= READ_ONLY
    assert PURE_READERS <= READ_ONLY
    assert "rm" not in READ_ONLY and "python" not in READ_ONLY


def test_the_analyser_stays_in_the_task_core():
    """The guard imports the analyser, never the other way round."""
    code = (
        "import sys, repo2rlenv.shell, repo2rlenv.replay.replay, repo2rlenv.kinds.qa;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'train'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
