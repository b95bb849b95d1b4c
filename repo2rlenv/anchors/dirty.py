"""Uncommitted changes a session reveals before the agent's first edit.

The commit alone is the start state only when the working tree was clean. A session that
printed `git status` with local modifications started from the commit *plus* those
edits; when it also printed them in full (`git diff`, `git diff --cached`, `git diff
HEAD`), they are applied on top of the checkout with the project's own patch code, so
replay, the read-mismatch check and the task start from what the agent really saw.
Modified, staged or untracked files no printed diff covers cannot be rebuilt: the
session is skipped with `anchor.uncommitted-changes`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field

from repo2rlenv.anchors.repos import AnchorError
from repo2rlenv.formats.base import ParsedSession, RunCommand
from repo2rlenv.replay.patches import FilePatch, PatchError, apply_hunks, parse_unified_diff
from repo2rlenv.shell import command_effects

REASON = "anchor.uncommitted-changes"
AGENT_CHANGES = {"write", "edit", "apply_patch", "unified_diff"}
LONG_ENTRY = re.compile(r"^\t(?:([a-z ]+):\s+)?(.+)$")  # "\tmodified:   x", "\tx"
SHORT_ENTRY = re.compile(r"^([ MADRCU?!])([ MADRCU?!]) (.+)$")
SECTION_STAGED = "Changes to be committed"
SECTION_UNTRACKED = "Untracked files"
# Untracked clutter that never holds source the tests could depend on.
IGNORABLE = re.compile(
    r"(^|/)(__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|\.venv|venv|\.tox|build|"
    r"dist|node_modules|[^/]+\.egg-info)(/|$)|\.pyc$"
)


@dataclass
class LocalState:
    """What the session printed about its working tree before it changed anything."""

    modified: set[str] = field(default_factory=set)
    staged: set[str] = field(default_factory=set)
    untracked: set[str] = field(default_factory=set)
    patches: list[FilePatch] = field(default_factory=list)
    staged_diff: bool = False  # a diff that includes the index (--cached/--staged/HEAD)
    shown_by: list[str] = field(default_factory=list)

    @property
    def dirty(self) -> bool:
        return bool(self.modified or self.staged or self.untracked or self.patches)


def _relative(cwd: str | None, root: str | None, path: str) -> str:
    """`git status` prints paths relative to where it ran; make them root-relative."""
    path = path.strip().strip('"')
    if cwd and root and cwd.startswith(root.rstrip("/") + "/"):
        return posixpath.normpath(posixpath.join(cwd[len(root.rstrip("/")) + 1 :], path))
    return posixpath.normpath(path)


def _status(output: str, into: LocalState, cwd: str | None, root: str | None) -> None:
    section = ""
    for line in output.splitlines():
        if line.endswith(":") and not line.startswith(("\t", " ")):
            section = line
            continue
        long = LONG_ENTRY.match(line)
        if long and (section or long.group(1)):
            path = long.group(2).split(" -> ")[-1]
            rel = _relative(cwd, root, path)
            if section.startswith(SECTION_UNTRACKED):
                if not IGNORABLE.search(rel):
                    into.untracked.add(rel)
            elif section.startswith(SECTION_STAGED):
                into.staged.add(rel)
            elif long.group(1):
                into.modified.add(rel)
            continue
        short = SHORT_ENTRY.match(line)
        if short and not section:
            rel = _relative(cwd, root, short.group(3).split(" -> ")[-1])
            if short.group(1) == "?":
                if not IGNORABLE.search(rel):
                    into.untracked.add(rel)
                continue
            if short.group(1) not in " !":
                into.staged.add(rel)
            if short.group(2) not in " !":
                into.modified.add(rel)


def _diff(command: str, output: str, into: LocalState) -> None:
    if "diff --git" not in output:
        return  # --stat, --name-only or an empty tree: nothing to rebuild from
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    into.patches.extend(parse_unified_diff(output[output.index("diff --git") :]))
    if any(w in {"--cached", "--staged", "HEAD"} for w in words):
        into.staged_diff = True
    into.shown_by.append("git diff" + (" --cached" if "--cached" in words else ""))


def _may_change_files(command: str) -> bool:
    """A command that writes, deletes or may do anything (a script): after it, `git diff`
    shows the agent's work, not the tree the session started from."""
    effects = command_effects(command)
    return effects.opaque or any(e.op != "cd" for e in effects.effects)


def local_state(session: ParsedSession) -> LocalState:
    """`git status` / `git diff` output seen before the agent's first change."""
    state = LocalState()
    for action in session.actions:
        if not isinstance(action, RunCommand):
            if action.kind in AGENT_CHANGES:
                break
            continue
        if _may_change_files(action.command):
            break  # shell-only harnesses (mini-swe-agent) edit with `cat > f`, `sed -i`...
        output = action.output or ""
        if action.exit_code not in (0, None) or not output:
            continue
        if re.search(r"\bgit\s+status\b", action.command):
            _status(output, state, action.cwd, session.cwd)
        elif re.search(r"\bgit\s+diff\b", action.command):
            _diff(action.command, output, state)
    return state


def apply_local_changes(
    session: ParsedSession, files: dict[str, str]
) -> tuple[dict[str, str], str]:
    """The checkout with the session's uncommitted edits applied, and how they were
    shown ("" when the tree was clean). Raises AnchorError when they cannot be rebuilt."""
    state = local_state(session)
    if not state.dirty:
        return files, ""
    covered = {p.path for p in state.patches} | {p.move_to for p in state.patches if p.move_to}
    missing = sorted((state.modified | state.untracked | state.staged) - covered)
    if missing:
        raise AnchorError(
            REASON, f"local changes to {', '.join(missing[:3])} were never shown as a full diff"
        )
    if state.staged and not state.staged_diff:
        raise AnchorError(REASON, "staged changes were shown without `git diff --cached`/HEAD")
    result = dict(files)
    for patch in state.patches:
        try:
            if patch.op == "add":
                result[patch.path] = patch.added or ""
            elif patch.op == "delete":
                result.pop(patch.path, None)
            elif patch.path not in result:
                raise PatchError(f"{patch.path} is not in the checkout")
            else:
                result[patch.path] = apply_hunks(result[patch.path], patch.hunks)
            if patch.move_to and patch.path in result:
                result[patch.move_to] = result.pop(patch.path)
        except PatchError as exc:
            raise AnchorError(REASON, f"the printed diff does not apply: {exc}") from exc
    return result, " + ".join(dict.fromkeys(state.shown_by)) or "git status"
