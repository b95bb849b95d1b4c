"""What a reference script writes, read from its words (`reference_writes`).

The semantic rule `reference_reaches_the_verifier` and decontamination's touched-file
facts both need the files a `solve.sh` changes without running it. The script is task
content (hostile): it is only lexed with `shlex`, never run, and a command whose writes
cannot be read from its words makes the answer None ("unknown"), never a guess.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator

KNOWN_COMMANDS = {
    "cat", "cp", "mv", "install", "rm", "mkdir", "sed", "tee", "cd", "set", "echo",
    "printf", "exit", "git", "patch", "chmod", "true", ":", "truncate", "touch",
}  # fmt: skip
"""Commands whose effect on files the rule can read from their words; a reference that
runs anything else (a Python script, make) may write what it likes."""


def reference_writes(script: str, workdir: str = "/workspace") -> dict[str, str | None] | None:
    """Workdir-relative paths a solve.sh writes or deletes (with the content of a
    `cat > P <<X` here-document), or None when the script runs a command whose writes
    cannot be read from its words. Reads `>`/`>>` redirections, `cp`/`mv`/`install`
    destinations, `rm`, `tee`, `touch`, `sed -i`, `cd`, and the `+++` headers of a
    diff given to `git apply`/`patch`."""
    written: dict[str, str | None] = {}
    cwd = workdir
    lines = script.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        body: list[str] = []
        if heredoc:
            while index < len(lines) and lines[index].strip() != heredoc.group(1):
                body.append(lines[index])
                index += 1
            index += 1
        for words in _segments(_words(line)):
            if re.match(r"^\w+=", words[0]):
                continue  # a variable assignment
            name = posixpath.basename(words[0])
            if name not in KNOWN_COMMANDS or (name == "git" and words[1:2] != ["apply"]):
                return None
            if name == "cd":
                cwd = posixpath.normpath(posixpath.join(cwd, words[1] if len(words) > 1 else "."))
                continue
            targets = list(_segment_writes(words))
            if heredoc and name in {"git", "patch"}:
                targets += [m for b in body if (m := _diff_target(b))]
            overwrite = heredoc is not None and name == "cat" and ">" in words
            for target in targets:
                path = _workdir_path(target, cwd, workdir)
                if path:
                    written[path] = "\n".join(body) + "\n" if overwrite else None
    return written


def _words(line: str) -> list[str]:
    try:
        return shlex.split(re.sub(r"<<-?\s*['\"]?\w+['\"]?", "", line), comments=True)
    except ValueError:
        return line.split()


def _segments(words: list[str]) -> Iterator[list[str]]:
    """The simple commands of a line, `sudo`/`env` prefixes dropped."""
    segment: list[str] = []
    for word in [*words, ";"]:
        if word in {";", "&&", "||", "|", "&"}:
            while segment and segment[0] in {"sudo", "env", "command", "exec"}:
                segment = segment[1:]
            if segment:
                yield segment
            segment = []
        else:
            segment.append(word)


def _segment_writes(words: list[str]) -> Iterator[str]:
    args: list[str] = []
    skip = False
    for position, word in enumerate(words):
        if skip:
            skip = False
        elif word in {">", ">>", "2>", "&>"}:
            if word in {">", ">>", "&>"} and position + 1 < len(words):
                yield words[position + 1]
            skip = True
        elif re.match(r"^(?:&|1)?>>?\S", word):
            yield re.sub(r"^(?:&|1)?>>?", "", word)
        elif position and not word.startswith("-") and not re.match(r"^\d?>", word):
            args.append(word)
    name = posixpath.basename(words[0])
    if name in {"rm", "tee", "touch"}:
        yield from args
    elif name == "sed" and any(w.startswith("-i") for w in words):
        yield from args[1:]
    elif name in {"cp", "mv", "install"} and len(args) >= 2:
        target = args[-1]
        yield target + posixpath.basename(args[0]) if target.endswith("/") else target


def _diff_target(line: str) -> str | None:
    match = re.match(r"\+\+\+ (?:b/)?(\S+)", line)
    return match.group(1) if match and match.group(1) != "/dev/null" else None


def _workdir_path(raw: str, cwd: str, workdir: str) -> str | None:
    """`raw` relative to the task's workdir; None outside it or not a plain path."""
    if not raw or raw.startswith(("$", "&")) or raw == "/dev/null":
        return None
    full = posixpath.normpath(posixpath.join(cwd, raw))
    root = workdir.rstrip("/") or "/"
    if full == root or not full.startswith(root + "/"):
        return None
    return full[len(root) + 1 :]
