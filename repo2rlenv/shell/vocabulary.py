"""The one command vocabulary of the shell analyser: which commands touch no file, which
only read, which delete, which interpreters take code on their command line, and which
variable names look secret.

Replay reads these lists to decide whether a command may have changed files it cannot
name (`opaque`); the guard reads the same lists to decide what a command accesses. One
list per notion, so the two cannot disagree about what `grep` or `rm` does.
"""

from __future__ import annotations

import re

MAX_DEPTH = 6
CODE_FLAGS = {
    "python": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "deno": ("eval",),
    "bun": ("-e", "--eval"),
}
# Commands that neither read nor write a file named by their arguments (the guard skips
# their operands; replay records nothing for them).
NO_ACCESS = frozenset(
    {
        "echo",
        "printf",
        "export",
        "alias",
        "cd",
        "pushd",
        "test",
        "[",
        "true",
        "false",
        "sleep",
        "mkdir",
    }
)
# Commands that write no file (beyond their redirections): the no-access ones plus the
# readers. `mkdir` is here because replay tracks files, not directories.
READ_ONLY = NO_ACCESS | frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "pwd",
        "tree",
        "stat",
        "file",
        "which",
        "env",
        "sort",
        "uniq",
        "cut",
        "awk",
        "diff",
        "du",
        "df",
        "nl",
        "less",
        "more",
        "date",
        "whoami",
        "id",
        "uname",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "md5sum",
        "sha256sum",
        "jq",
        "xxd",
        "od",
        "tr",
        "set",
        "type",
        "command",
        "history",
        "clear",
    }
)
# Readers whose output is a function of the files they name and nothing else: a qa task
# may take their output over a recorded workspace as the answer.
PURE_READERS = frozenset(
    {"wc", "grep", "egrep", "awk", "sort", "uniq", "head", "tail", "cat", "cut", "tr", "nl"}
)
# Readers whose every operand is a file, even a bare name (`cd /etc && cat shadow`): the
# guard reads their operands as paths without asking whether a word looks like one.
FILE_READERS = frozenset(
    {
        "cat",
        "tac",
        "head",
        "tail",
        "less",
        "more",
        "nl",
        "od",
        "xxd",
        "hexdump",
        "strings",
        "base64",
        "wc",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "stat",
        "file",
        "source",
        ".",
    }
)
# `git` subcommands that leave the work tree as it is.
GIT_READ_ONLY = frozenset(
    {"status", "diff", "log", "show", "branch", "rev-parse", "remote", "ls-files", "blame"}
)
DELETERS = frozenset({"rm", "rmdir", "unlink", "shred"})
ENV_DUMPS = frozenset({"env", "printenv"})
LISTERS = frozenset({"ls", "find", "tree", "du", "grep", "rg", "ag", "fd", "cat", "tar", "zip"})
SECRET_NAME = re.compile(
    r"(?i)(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|SECRETS|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH"
    r"|COOKIE|PRIVATE_KEY)(?:_|$)"
)
RUNNER_ALIASES = re.compile(r"^(?:pytest|py\.test|python3?|tox|nox|make|bash|sh)=")
ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.S)


def interpreter(name: str | None) -> str | None:
    """`python3.11` -> python, `nodejs` -> node; None for anything else."""
    if not name:
        return None
    if re.fullmatch(r"python[\d.]*|pypy[\d.]*", name):
        return "python"
    if name in ("node", "nodejs"):
        return "node"
    return name if name in CODE_FLAGS else None


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def is_check(words: list[str]) -> bool:
    """A command that runs tests: what repair and extend tasks use as their verifier."""
    if not words:
        return False
    head = words[0].rsplit("/", 1)[-1]
    if head in {"pytest", "py.test"}:
        return True
    if head.startswith("python") and len(words) >= 3 and words[1] == "-m":
        return words[2] in {"pytest", "unittest"}
    return False
