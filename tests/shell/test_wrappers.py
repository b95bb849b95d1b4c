"""`find -exec` and `xargs` give the command lines they run, with what each placeholder
can stand for (the guard judges those lines as if typed)."""

from __future__ import annotations

import pytest

from repo2rlenv.shell.wrappers import find_exec_commands, xargs_commands


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["/etc", "-name", "shadow", "-exec", "cat", "{}", "+"], ["cat '/etc/**/shadow'"]),
        (["-name", "*.py", "-execdir", "grep", "x", "{}", ";"], ["grep x './**/*.py'"]),
        (["/a", "/b", "-type", "f", "-exec", "cat", "{}", ";"], ["cat '/a/**'", "cat '/b/**'"]),
        (["/", "-name", "t.py", "-ok", "rm", "{}", ";"], ["rm '/**/t.py'"]),
        (["/etc", "-name", "shadow"], []),
        (["/x", "-exec", "a", "{}", ";", "-exec", "b", "{}", "+"], ["a '/x/**'", "b '/x/**'"]),
    ],
)
def test_find_exec_runs_its_command_on_the_pattern_of_found_paths(
    args: list[str], expected: list[str]
) -> None:
    assert find_exec_commands(args) == expected


@pytest.mark.parametrize(
    ("args", "stdin", "expected"),
    [
        (["-I{}", "cat", "/etc/{}"], "shadow\n", ["cat /etc/shadow"]),
        (["-I", "%", "cat", "/etc/%"], "a\nb c\n", ["cat /etc/a", "cat '/etc/b c'"]),
        (["-I{}", "cat", "/etc/{}"], None, ["cat '/etc/*'"]),
        (["cat"], "/etc/shadow /etc/hosts\n", ["cat /etc/shadow /etc/hosts"]),
        (["-0", "cat"], "/a b\0/c", ["cat '/a b' /c"]),
        (["-n", "1", "cat"], None, ["cat"]),
        ([], "x", ["echo x"]),
    ],
)
def test_xargs_runs_its_command_with_its_input(
    args: list[str], stdin: str | None, expected: list[str]
) -> None:
    assert xargs_commands(args, stdin) == expected
