"""Commands that run other commands on files they find or read: `find ... -exec` and
`xargs`.

`cat /etc/shadow` is easy to judge; `find /etc -name shadow -exec cat {} +` runs the
same `cat` on a file the text never spells out, and `echo shadow | xargs -I{} cat
/etc/{}` builds its path from its input. These helpers return the inner command lines
with what each placeholder can stand for, so a reader of commands (the guard) judges
the inner command as if it had been typed. `sudo`, `env`, `timeout` and `nohup` are
unwrapped by the parser itself (`parse.py`).

A `find` placeholder becomes a path pattern: `ROOT/**/NAME` (`**/` spans any number of
directories, NAME is the `-name` pattern) or `ROOT/**` (anything below) without one;
the reader of the pattern decides whether its wildcards reach dot-files (find's do).
An `xargs` placeholder becomes each item of its input when the input is known text,
else `*`.
"""

from __future__ import annotations

import shlex

FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
FIND_NAME = frozenset({"-name", "-iname"})
FIND_EXEC_ENDS = frozenset({";", "+"})
PLACEHOLDER = "{}"
XARGS_VALUE_FLAGS = frozenset({"-a", "-d", "-E", "-e", "-I", "-L", "-l", "-n", "-P", "-s"})
"""xargs options whose value is the next word (`-I {}`) or glued to them (`-I{}`)."""
XARGS_MAX_ITEMS = 32
"""Items of a known input that are substituted one by one; more are not looked at."""


def find_exec_commands(args: list[str]) -> list[str]:
    """The command lines a `find` runs through `-exec`/`-execdir`/`-ok`/`-okdir`, with
    `{}` replaced by the pattern of the paths it can receive."""
    roots: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!")):
            break
        roots.append(arg)
    names = [args[i + 1] for i, a in enumerate(args[:-1]) if a in FIND_NAME]
    leaf = "/**/" + names[0] if len(names) == 1 and names[0] not in ("*", "") else "/**"
    patterns = [(root.rstrip("/") or "") + leaf for root in roots or ["."]]
    lines: list[str] = []
    i = 0
    while i < len(args):
        if args[i] not in FIND_EXEC:
            i += 1
            continue
        end = next((k for k in range(i + 1, len(args)) if args[k] in FIND_EXEC_ENDS), len(args))
        inner = args[i + 1 : end]
        if inner:
            for pattern in patterns:
                lines.append(shlex.join([w.replace(PLACEHOLDER, pattern) for w in inner]))
        i = end + 1
    return lines


def xargs_commands(args: list[str], stdin: str | None) -> list[str]:
    """The command lines an `xargs` runs: its command with the items of `stdin` (when
    known) appended, or put in place of the `-I` replacement string; an unknown input
    stands for `*` in place of the replacement and adds nothing otherwise."""
    replace: str | None = None
    separator: str | None = None
    i = 0
    while i < len(args) and args[i].startswith("-"):
        flag = args[i]
        if flag == "--":
            i += 1
            break
        head, glued = flag[:2], flag[2:]
        if flag == "-i" or flag.startswith("--replace"):
            replace = flag.partition("=")[2] or PLACEHOLDER
        elif head in XARGS_VALUE_FLAGS:
            value = glued if glued else (args[i + 1] if i + 1 < len(args) else "")
            if head == "-I":
                replace = value
            elif head == "-d":
                separator = value.encode().decode("unicode_escape") if value else None
            i += 0 if glued else 1
        elif flag == "-0" or flag == "--null":
            separator = "\0"
        i += 1
    command = args[i:] or ["echo"]
    items = _items(stdin, separator, lines=replace is not None)
    if replace is None:
        return [shlex.join(command + (items or []))]
    values = items if items is not None else ["*"]
    return [shlex.join([w.replace(replace, v) for w in command]) for v in values]


def _items(stdin: str | None, separator: str | None, lines: bool) -> list[str] | None:
    if stdin is None:
        return None
    if separator is not None:
        parts = stdin.split(separator)
    elif lines:
        parts = stdin.splitlines()
    else:
        parts = stdin.split()
    return [p.strip() if lines else p for p in parts if p.strip()][:XARGS_MAX_ITEMS]
