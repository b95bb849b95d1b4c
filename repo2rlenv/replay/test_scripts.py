"""Shell scripts a session wrote and then ran (`bash run_tests.sh`, `./run_tests.sh`).

Delivered-task sessions put their tests behind a `run_tests.sh` the agent wrote itself
(`node --test unit_tests/*.test.js`, `npx jest`); the command replay sees is only
`bash run_tests.sh`, which names no test runner, so a passing run of the agent's tests
was never a test run (`build.no-passing-tests`). When the script's text is known in
full at that point of the session, its simple commands are offered to the runner
registry the way an npm script's are (one level: a script the script runs is not
followed). A script whose text is not known stays what it was: no test run.
"""

from __future__ import annotations

from collections.abc import Callable

from repo2rlenv.shell import command_effects
from repo2rlenv.shell.parse import parse

_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
MAX_SCRIPT_CHARS = 20_000


def script_paths(command: str) -> list[str]:
    """The `.sh` files the command runs: `bash X.sh`, `sh X.sh`, `./X.sh`, `path/X.sh`
    (options before the script, such as `bash -e`, are skipped; `bash -c` runs text, not a
    file)."""
    script = parse(command)
    if not script.complete:
        return []
    found: list[str] = []
    for simple in script.commands:
        words = list(simple.words)
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        if head in _SHELLS:
            rest = [w for w in words[1:] if not w.startswith("-")]
            if "-c" not in words[1:] and rest and rest[0].endswith(".sh"):
                found.append(rest[0])
        elif words[0].endswith(".sh") and "/" in words[0]:
            found.append(words[0])
    return found


def script_words(command: str, read: Callable[[str], str | None]) -> list[list[str]]:
    """The simple commands of every known script the command runs; `read(path)` gives a
    script's text when replay knows it in full, else None."""
    words: list[list[str]] = []
    for path in script_paths(command):
        text = read(path)
        if text is not None and len(text) <= MAX_SCRIPT_CHARS:
            words.extend(command_effects(text).words)
    return words
