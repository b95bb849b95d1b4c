"""Applying recorded patches to known file contents: Codex's `*** Begin Patch` envelope
and unified diffs. A hunk applies only where its old lines occur exactly; anything
else raises PatchError, and replay marks the file unknown rather than guess."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from repo2rlenv.formats.base import ApplyPatch, UnifiedDiff


class PatchError(ValueError):
    pass


@dataclass
class Hunk:
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    hint: int | None = None  # 0-based line where the hunk claims to start


@dataclass
class FilePatch:
    op: str  # add | update | delete
    path: str
    hunks: list[Hunk] = field(default_factory=list)
    move_to: str | None = None
    added: str | None = None  # full content for op == add


def apply_hunks(content: str, hunks: list[Hunk]) -> str:
    lines = content.split("\n")
    trailing_newline = content.endswith("\n")
    if trailing_newline:
        lines = lines[:-1]
    cursor = 0
    for hunk in hunks:
        if not hunk.old:
            at = len(lines) if hunk.hint is None else min(max(hunk.hint, 0), len(lines))
            lines[at:at] = hunk.new
            cursor = at + len(hunk.new)
            continue
        at = _find(lines, hunk.old, cursor, hunk.hint)
        if at is None:
            raise PatchError(f"hunk does not apply: {hunk.old[:1]!r}")
        lines[at : at + len(hunk.old)] = hunk.new
        cursor = at + len(hunk.new)
    text = "\n".join(lines)
    return text + "\n" if trailing_newline or (lines and not content) else text


def _find(lines: list[str], block: list[str], start: int, hint: int | None) -> int | None:
    width = len(block)
    candidates = [i for i in range(start, len(lines) - width + 1) if lines[i : i + width] == block]
    if not candidates:
        candidates = [
            i for i in range(0, min(start, len(lines) - width + 1)) if lines[i : i + width] == block
        ]
    if not candidates:
        return None
    if hint is None:
        return candidates[0]
    return min(candidates, key=lambda i: abs(i - hint))


def action_patches(action: ApplyPatch | UnifiedDiff) -> list[FilePatch]:
    """The file patches of a patch action, whichever envelope it came in (a Codex patch
    or a unified diff); PatchError when it cannot be read. Replay and the end-state
    anchor read patches the same way."""
    if isinstance(action, ApplyPatch):
        return parse_codex_patch(action.patch)
    return parse_unified_diff(action.diff)


def parse_codex_patch(text: str) -> list[FilePatch]:
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "*** Begin Patch":
        raise PatchError("not a Codex patch envelope")
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    for line in lines[1:]:
        header = re.match(r"\*\*\* (Add|Update|Delete) File: (.+)$", line)
        if header:
            current = FilePatch(op=header.group(1).lower(), path=header.group(2).strip())
            current.added = "" if current.op == "add" else None
            patches.append(current)
            hunk = None
        elif line.startswith("*** Move to: ") and current is not None:
            current.move_to = line[len("*** Move to: ") :].strip()
        elif line.strip() in {"*** End Patch", "*** End of File"}:
            hunk = None
        elif current is None:
            continue
        elif current.op == "add":
            if line.startswith("+"):
                current.added += line[1:] + "\n"
        elif line.startswith("@@"):
            hunk = Hunk()
            current.hunks.append(hunk)
        elif line[:1] in {" ", "-", "+"} or line == "":
            if hunk is None:
                hunk = Hunk()
                current.hunks.append(hunk)
            mark, body = (line[:1], line[1:]) if line else (" ", "")
            if mark in {" ", "-"}:
                hunk.old.append(body)
            if mark in {" ", "+"}:
                hunk.new.append(body)
    for patch in patches:
        for item in patch.hunks:  # a trailing empty context line is an artefact of split
            while item.old and item.new and item.old[-1] == "" and item.new[-1] == "":
                item.old.pop()
                item.new.pop()
    return patches


def _git_header_path(line: str) -> str | None:
    """The path of `diff --git a/P b/P` when both sides name the same unquoted path (as
    git writes them for an added or deleted file), else None."""
    rest = line[len("diff --git ") :]
    size = (len(rest) - 5) // 2
    if size > 0 and rest.startswith("a/") and rest[2 + size : 5 + size] == " b/":
        path = rest[2 : 2 + size]
        return path if rest[5 + size :] == path else None
    return None


def parse_unified_diff(text: str) -> list[FilePatch]:
    """The file patches of a unified diff (git's or plain). An empty file git adds or
    deletes has only its header (`new file mode`, `deleted file mode`, no `---`/`+++`
    lines): it is a patch too (SWE-bench test patches add empty `conf.py` test roots:
    sphinx-10673).

    Not `unidiff`: the diffs read here include the ones agents write by hand in their
    tool calls, whose `@@` line counts are often wrong, and unidiff 1.0.1 refuses such a
    hunk whole (`UnidiffParseError: Hunk is shorter than expected`, checked); here a hunk
    is its lines, and `apply_hunks` finds them by content, the counts only a hint."""
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    old_path: str | None = None
    renamed: FilePatch | None = None  # git's `rename from`/`rename to` of this file
    rename_from: str | None = None
    header: FilePatch | None = None  # an add or delete known from git's header alone
    git_path: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("diff --git "):
            renamed = rename_from = current = hunk = header = None
            git_path = _git_header_path(line)
        elif line.startswith(("new file mode ", "deleted file mode ")) and hunk is None:
            if git_path is not None and header is None and current is None:
                op = "add" if line.startswith("new") else "delete"
                header = FilePatch(op=op, path=git_path, added="" if op == "add" else None)
                patches.append(header)
        elif line.startswith(("Binary files ", "GIT binary patch")) and header is not None:
            if header.op == "add":  # content the diff does not hold: not an empty file
                patches.remove(header)
            header = None
        elif line.startswith("rename from ") and hunk is None:
            rename_from = line[len("rename from ") :].strip()
        elif line.startswith("rename to ") and hunk is None and rename_from:
            # a pure rename has no ---/+++ lines; one with edits follows with them
            renamed = FilePatch(op="update", path=rename_from, move_to=line[10:].strip())
            patches.append(renamed)
            current = renamed
        elif line.startswith("--- "):
            old_path = _diff_path(line[4:])
            hunk = None
        elif line.startswith("+++ "):
            new_path = _diff_path(line[4:])
            if renamed is not None:
                current = renamed
            elif header is not None and header.path in (new_path, old_path):
                current = header  # the lines that follow git's header, same file
            elif new_path is None and old_path is not None:
                current = FilePatch(op="delete", path=old_path)
            elif old_path is None and new_path is not None:
                current = FilePatch(op="add", path=new_path, added="")
            elif new_path is not None:
                current = FilePatch(op="update", path=new_path)
            else:
                current = None
            if current is not None and current is not renamed and current is not header:
                patches.append(current)
        elif line.startswith("@@") and current is not None:
            match = re.match(r"@@ -(\d+)", line)
            hunk = Hunk(hint=int(match.group(1)) - 1 if match else None)
            current.hunks.append(hunk)
        elif hunk is not None and current is not None and line[:1] in {" ", "-", "+"}:
            mark, body = line[:1], line[1:]
            if current.op == "add":
                if mark == "+":
                    current.added += body + "\n"
                continue
            if mark in {" ", "-"}:
                hunk.old.append(body)
            if mark in {" ", "+"}:
                hunk.new.append(body)
    return patches


def _diff_path(raw: str) -> str | None:
    path = raw.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path or None
