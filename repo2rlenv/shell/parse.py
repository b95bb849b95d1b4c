"""The one door to atif-scan's static shell reader, and what is read off its parse.

`atif_scan.data.shell` (MIT) splits command text into simple commands (words without
quotes, redirections, pipelines, nested `sh -c`/`$(...)`/heredoc-fed commands, heredoc
bodies). It is an internal module of atif-scan, so it is imported here only: a change
upstream touches this file. Nothing here executes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from atif_scan.data.shell import SHELLS, Command, Script, parse, runs_script, writes

from repo2rlenv.shell import deobfuscate as deob
from repo2rlenv.shell.vocabulary import DELETERS

__all__ = [
    "SHELLS",
    "Command",
    "Heredoc",
    "Script",
    "find_exec_rm",
    "here_string",
    "heredoc_bodies",
    "parse",
    "runs_script",
    "static_output",
    "writes",
]


def here_string(command: Command, expand: Callable[[str], str]) -> str | None:
    for op, target, _ in command.redirects:
        if op == "<<<":
            return expand(target) + "\n"
    return None


def find_exec_rm(args: list[str]) -> bool:
    return any(
        a == "-exec" and i + 1 < len(args) and args[i + 1] in DELETERS for i, a in enumerate(args)
    )


@dataclass(frozen=True, slots=True)
class Heredoc:
    """A heredoc body given to a program. `quoted`: the delimiter was quoted, so the
    shell expanded nothing in it; `closed`: its delimiter line was found (an unclosed
    heredoc runs to the end of the text, and what it was meant to hold is unknown)."""

    text: str
    quoted: bool
    closed: bool


def heredoc_bodies(script: Script, text: str) -> dict[int, Heredoc]:
    """Heredoc bodies given to non-shell programs, by the id of the command reading them
    (the reader lists them in the order their commands open them). `<<-` bodies lose
    their leading tabs, as the shell strips them."""
    if not script.bodies:
        return {}  # most commands feed no heredoc: skip reading every command's name
    openers = [
        (span, op, command)
        for command in script.commands
        if command.name not in SHELLS or runs_script(command)
        for op, _, span in command.redirects
        if op in ("<<", "<<-")
    ]
    openers.sort(key=lambda item: item[0][0])
    bodies = sorted(script.bodies)
    out: dict[int, Heredoc] = {}
    for (span, op, command), (start, end) in zip(openers, bodies, strict=False):
        body = text[start:end]
        if op == "<<-":
            body = "\n".join(line.lstrip("\t") for line in body.split("\n"))
        opener = text[span[0] : span[1]]
        heredoc = Heredoc(body, "'" in opener or '"' in opener or "\\" in opener, end < len(text))
        out.setdefault(id(command), heredoc)
    return out


def static_output(text: str, variables: dict[str, str] | None = None) -> str | None:
    """What a `$(...)` body prints, when it is a pipeline of literal producers and
    decoding filters (`echo ...`, `printf '\\x2f...'`, `... | base64 -d | rev`)."""
    script = parse(text)
    if not script.complete or not script.commands:
        return None
    current: str | None = None
    for command in script.commands:
        words = [deob.substitute_vars(w, variables or {}) for w, _ in command.argv()]
        if not words:
            return None
        name, args = words[0].rsplit("/", 1)[-1], words[1:]
        here = here_string(command, lambda w: w)
        produced = deob.produce(name, args)
        if produced is not None:
            current = produced
        elif deob.is_decoder(name, args) and (here or current) is not None:
            current = deob.apply_filter(name, args, here if here is not None else current or "")
        else:
            return None
    return current
