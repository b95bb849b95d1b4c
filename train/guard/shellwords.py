"""The words the shell analysis knows: interpreters and their code flags, commands
that touch no file, secret-looking variable names."""

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
