"""The working directory of Claude Code's persistent Bash shell, for formats that lost it.

Claude Code runs every Bash call in one shell, so `cd repo && npm install` leaves the
next call (`npm run test:unit`) running in `repo`. Its JSONL sessions record that
directory on every line; a `{messages, meta}` export keeps only the session's first
`cwd`, and without the shell's directory a test run is placed at the root, where no
package.json is (`build.node-no-package-json` on every JS run of such exports). So the
directory is followed here: a command that opens with `cd DIR` (one literal operand)
moves it, Claude Code's own note "Shell cwd was reset to DIR" (it returns the shell to
the project when a `cd` leaves it) puts it back, and a `cd` this cannot resolve
(`cd "$X"`, `cd -`, `cd ~`) makes it unknown, so later calls keep no directory rather
than a wrong one.
"""

from __future__ import annotations

import ntpath
import posixpath
import re

from repo2rlenv.shell.parse import parse

_RESET = re.compile(r"Shell cwd was reset to (\S[^\n]*)")


def _is_windows(path: str) -> bool:
    return bool(re.match(r"[A-Za-z]:[\\/]", path)) or "\\" in path


class ShellCwd:
    """The shell's directory as calls go by; None once it is not known."""

    def __init__(self, start: str | None) -> None:
        self.cwd = start

    def after_command(self, command: str) -> None:
        if not command.lstrip().startswith("cd"):
            return
        script = parse(command)
        first = script.commands[0].words if script.complete and script.commands else []
        if first[:1] != ["cd"]:
            return
        self.cwd = self._resolve(first[1:])

    def after_output(self, text: str | None) -> None:
        match = _RESET.search(text or "")
        if match is not None:
            self.cwd = match.group(1).strip()

    def _resolve(self, args: list[str]) -> str | None:
        if len(args) != 1 or self.cwd is None:
            return None
        target = args[0]
        if not target or target[0] in "$~-`" or "$" in target:
            return None
        flavour = ntpath if _is_windows(self.cwd) or _is_windows(target) else posixpath
        if flavour.isabs(target):
            return flavour.normpath(target)
        return flavour.normpath(flavour.join(self.cwd, target))
