"""Which files a shell command writes, deletes, moves or copies, as far as its text
tells: the one answer replay and the guard share.

`redirect_writes` reads a simple command's redirections, `argument_effects` what its
arguments name (`rm`, `mv`, `cp`, `touch`, `tee`, `sed -i`, `truncate`, `dd of=`, `git
rm`, `find -delete`), and whether it may also have changed files it does not name
(*opaque*: anything outside the read-only vocabulary). `command_effects` runs both over
every simple command of a recorded command text (pipes, `&&`, subshells, `sh -c`,
heredocs fed to shells, `$(...)`), adding the contents a heredoc, `printf` or `echo`
writes when they are literal. Nothing is executed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from repo2rlenv.shell import deobfuscate as deob
from repo2rlenv.shell.parse import (
    SHELLS,
    Command,
    Heredoc,
    find_exec_rm,
    heredoc_bodies,
    parse,
    runs_script,
)
from repo2rlenv.shell.vocabulary import DELETERS, GIT_READ_ONLY, READ_ONLY, is_check

MAX_TEXT = 1_000_000
# Redirection operators that open their target for writing (after any fd number).
WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
COPIERS = frozenset({"cp", "install", "rsync", "ln"})
# Options whose value is a separate word, by command (so the value is not a file).
VALUE_OPTIONS = {
    "cp": frozenset({"-t", "--target-directory", "-S", "--suffix"}),
    "install": frozenset({"-t", "--target-directory", "-m", "--mode", "-o", "-g"}),
    "rsync": frozenset({"-e", "--rsh"}),
    "sed": frozenset({"-e", "--expression", "-f", "--file"}),
    "truncate": frozenset({"-s", "--size", "-r", "--reference"}),
}
EXPANSION = re.compile(r"[$`]")
PRINTF_LITERAL = re.compile(r"(?:[^%]|%%|%s)*", re.S)


@dataclass(slots=True)
class FileEffect:
    """One file effect. `op`: write | append | unknown (written, content unknown) |
    delete | delete_tree (everything under `path`) | copy | move (from `source`) | touch
    | truncate | cd."""

    op: str
    path: str
    content: str | None = None
    source: str | None = None


@dataclass
class CommandEffects:
    effects: list[FileEffect] = field(default_factory=list)
    opaque: bool = False
    words: list[list[str]] = field(default_factory=list)


def operands(args: list[str], values: frozenset[str] = frozenset()) -> list[str]:
    """Arguments that are not options, skipping the values of `values` options
    (everything after `--` is an operand)."""
    out: list[str] = []
    options, skip = True, False
    for arg in args:
        if skip:
            skip = False
        elif options and arg == "--":
            options = False
        elif options and arg.startswith("-") and arg != "-":
            skip = arg in values
        else:
            out.append(arg)
    return out


def redirect_writes(command: Command) -> list[tuple[str, bool]]:
    """(target, append) of each redirection that writes a file. Duplicated descriptors
    (`2>&1`) and devices (`/dev/null`) are not files."""
    out = []
    for op, target, _ in command.redirects:
        bare = op.lstrip("0123456789")
        if bare not in WRITE_OPS or target.isdigit() or target in ("-", ""):
            continue
        if target.startswith(("&", "/dev/")):
            continue
        out.append((target, bare.endswith(">>")))
    return out


def _copy(name: str, args: list[str]) -> tuple[list[FileEffect], bool]:
    values = VALUE_OPTIONS.get(name, frozenset())
    for i, arg in enumerate(args):
        if arg in ("-t", "--target-directory") and i + 1 < len(args):
            return [FileEffect("unknown", args[i + 1])], True
        if arg.startswith("--target-directory="):
            return [FileEffect("unknown", arg.split("=", 1)[1])], True
    named = operands(args, values)
    if name in ("cp", "mv") and len(named) == 2:
        return [FileEffect("copy" if name == "cp" else "move", named[1], source=named[0])], False
    if len(named) < 2:
        return [], True
    into = [FileEffect("unknown", named[-1])]
    if name == "mv":
        into += [FileEffect("delete", source) for source in named[:-1]]
    return into, True


def _git(args: list[str]) -> tuple[list[FileEffect], bool]:
    sub, rest = (args[0], args[1:]) if args else ("", [])
    if sub in GIT_READ_ONLY:
        return [], False
    if sub == "rm":
        cached = "--cached" in rest
        return ([] if cached else [FileEffect("delete", a) for a in operands(rest)]), False
    if sub == "mv":
        return _copy("mv", rest)
    return [], True


def _find(args: list[str]) -> tuple[list[FileEffect], bool]:
    roots = []
    for arg in args:
        if arg.startswith(("-", "(", "!")):
            break
        roots.append(arg)
    if "-delete" in args or find_exec_rm(args):
        return [FileEffect("delete_tree", root) for root in roots or ["."]], True
    return [], bool({"-exec", "-execdir", "-ok", "-fprint"} & set(args))


def argument_effects(name: str, args: list[str]) -> tuple[list[FileEffect], bool]:
    """The file effects a command's arguments name, and whether it may have changed
    files it does not name. `args` are the words after the command name."""
    if name in ("cd", "pushd"):
        return [FileEffect("cd", args[0] if args else "")], False
    if name in DELETERS:
        return [FileEffect("delete", a) for a in operands(args)], False
    if name == "mv" or name in COPIERS:
        return _copy(name, args)
    if name in ("touch", "tee"):
        op = "touch" if name == "touch" else "unknown"  # tee writes its input, unknown here
        return [FileEffect(op, a) for a in operands(args)], False
    if name == "truncate":
        named = operands(args, VALUE_OPTIONS["truncate"])
        return [FileEffect("truncate", a) for a in named], False
    if name == "dd":
        return [FileEffect("unknown", a[3:]) for a in args if a.startswith("of=")], False
    if name == "sed" and any(a.startswith(("-i", "--in-place")) for a in args):
        script = VALUE_OPTIONS["sed"]
        # BSD sed takes the backup suffix as the next word: `sed -i '' 's/a/b/' f`
        args = [a for i, a in enumerate(args) if a or not i or args[i - 1] != "-i"]
        named = operands(args, script)
        scripted = any(a.split("=", 1)[0] in script for a in args)
        return [FileEffect("unknown", a) for a in (named if scripted else named[1:])], False
    if name == "git":
        return _git(args)
    if name == "find":
        return _find(args)
    if is_check([name, *args]) or name in READ_ONLY:
        return [], False
    return [], True


def written_content(
    name: str, args: list[str], heredoc: Heredoc | None, expands: bool
) -> str | None:
    """What a command writes to its output when its text alone says: a heredoc given to
    `cat`, `printf` with only `%s` slots, `echo`; None when unknown."""
    if name == "cat" and heredoc is not None and not args:
        if heredoc.quoted or not ("$" in heredoc.text or "`" in heredoc.text):
            return heredoc.text
        return None
    if expands:
        return None
    if name == "printf" and args and PRINTF_LITERAL.fullmatch(args[0]):
        return deob.printf_output(args)
    if name == "echo":
        newline = not any(re.fullmatch(r"-[neE]*n[neE]*", a) for a in args[:1])
        return deob.echo_output(args) + ("\n" if newline else "")
    return None


def command_effects(text: str) -> CommandEffects:
    """Effects of one recorded command text, as far as it tells."""
    result = CommandEffects()
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        result.opaque = True
        return result
    script = parse(text)
    if not script.complete:
        result.opaque = True
        return result
    heredocs = heredoc_bodies(script, text)
    for command in script.commands:
        argv = [word for word, _ in command.argv()]
        if not argv:
            continue
        name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
        if name in SHELLS and (command.nested or runs_script(command)):
            result.opaque |= not command.nested
            continue  # the commands it runs are in the script too
        result.words.append(argv)
        heredoc = heredocs.get(id(command))
        if heredoc is not None and not heredoc.closed:
            result.opaque = True
            continue
        targets = redirect_writes(command)
        if targets:
            raw = text[command.span[0] : command.span[1]]
            content = written_content(name, args, heredoc, "$" in raw or "`" in raw)
            for target, append in targets:
                op = ("append" if append else "write") if content is not None else "unknown"
                result.effects.append(FileEffect(op, target, content))
            result.opaque |= content is None and name not in READ_ONLY
            continue
        if command.words[:1] == ["command"] and command.words[1:2] in (["-v"], ["-V"]):
            continue  # `command -v NAME` looks NAME up, it does not run it
        effects, opaque = argument_effects(name, args)
        for effect in effects:
            replayable = _replayable(effect)
            if replayable is None:
                result.opaque = True
            else:
                result.effects.append(replayable)
        result.opaque |= opaque
    return result


def _replayable(effect: FileEffect) -> FileEffect | None:
    """The effect as replay can apply it: a file named by an expansion (`rm $F`) is not
    known, a copy from one leaves its destination unknown, a truncation to a size the
    text may not state is unknown, a deleted tree is left to `opaque` (None)."""
    if effect.op == "delete_tree" or EXPANSION.search(effect.path):
        return None
    if effect.op == "truncate" or (effect.source is not None and EXPANSION.search(effect.source)):
        return FileEffect("unknown", effect.path)
    return effect
