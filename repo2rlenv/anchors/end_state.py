"""End-state anchors: a session file committed next to the project it worked on.

Some repositories (delivered coding tasks, `<user>/TASK-NN`) commit the agent's session
files beside the project, and the export names no commit. The commit that first holds
the session file (exactly these bytes) holds the project as the session left it, or
later. Undoing the session's own edits, last first, gives a candidate start state;
replay then checks every read of the session against it (`anchor.read-mismatch`), so a
wrong guess is refused, never a wrong task.

Only the commit's tree (git objects) is trusted: never the work tree, never the
session. Session paths are confined lexically (`replay.paths`), as in replay.

Reasons: `anchor.end-state-not-committed` (the file is in no git repository, or no
commit holds these bytes), `anchor.end-state-no-prefix` (no file the session touched is
in the commit), `anchor.end-state-undo-failed` (an edit's new text is not found exactly
once, or an edited file is not in the commit; the detail names the file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import git

from repo2rlenv.anchors.find import Anchor, normalise_url
from repo2rlenv.anchors.repos import GIT_LOOKUP_ERRORS, AnchorError
from repo2rlenv.formats.base import (
    ApplyPatch,
    EditFile,
    ParsedSession,
    ReadFile,
    RunCommand,
    UnifiedDiff,
    WriteFile,
)
from repo2rlenv.replay.patches import (
    FilePatch,
    Hunk,
    PatchError,
    action_patches,
    apply_hunks,
)
from repo2rlenv.replay.paths import PathResolver
from repo2rlenv.shell import command_effects

FOUND_BY = "end-state"
MAX_COMMITS = 30
"""Commits tried per session file: the one that first holds it, then its ancestors."""
_NETWORK_URL = re.compile(r"\A(?:https?://|ssh://|git://|[\w.-]+@[\w.-]+:)")


@dataclass(frozen=True)
class SessionFile:
    """Where a session file lives in git: the repository's top folder, its path there,
    and the oldest commit whose tree holds exactly its bytes."""

    top: Path
    path: str
    commit: str
    url: str
    earlier: tuple[str, ...] = ()
    """The commit's first-parent ancestors, newest first: a project committed before its
    session file (the file added in a later commit) has its end state there."""
    later: tuple[str, ...] = ()
    """Its descendants up to the one adding the next session file (oldest first): a
    session file committed before the project's changes."""


def locate(file: Path) -> SessionFile:
    """The repository and commit that hold `file` (a work-tree file of a checkout)."""
    try:
        repo = git.Repo(file.parent, search_parent_directories=True)
        top = Path(repo.working_tree_dir or "")
        rel = file.resolve().relative_to(top.resolve()).as_posix()
        blob = repo.git.hash_object(str(file))
        commits = repo.git.log("--reverse", "--format=%H", "--", rel).split()
    except GIT_LOOKUP_ERRORS as exc:
        raise AnchorError(
            "anchor.end-state-not-committed", f"{file.name}: not in a git checkout ({exc})"
        ) from exc
    for sha in commits:
        try:
            if (repo.commit(sha).tree / rel).hexsha == blob:
                earlier = repo.git.rev_list("--first-parent", f"--max-count={MAX_COMMITS}", sha)
                later = _until_next_session(repo, sha, rel)
                return SessionFile(
                    top, rel, sha, _url(repo, top), tuple(earlier.split()[1:]), later
                )
        except KeyError:
            continue
    raise AnchorError(
        "anchor.end-state-not-committed", f"{rel}: no commit of {top.name} holds these bytes"
    )


def _until_next_session(repo: git.Repo, sha: str, rel: str) -> tuple[str, ...]:
    """Descendants of `sha` on the way to HEAD, before the first that adds another file
    next to the session file (the next session's)."""
    folder = str(PurePosixPath(rel).parent)
    span = f"{sha}..HEAD"
    after = repo.git.rev_list("--reverse", "--ancestry-path", span).split()
    where = [folder] if folder not in ("", ".") else ["*.json"]
    adding = repo.git.log("--format=%H", "--diff-filter=A", span, "--", *where).split()
    stop = next((i for i, c in enumerate(after) if c in set(adding)), len(after))
    return tuple(after[: min(stop, MAX_COMMITS)])


def _url(repo: git.Repo, top: Path) -> str:
    """The origin's URL when it is a network one; a local path never reaches a task."""
    try:
        origin = repo.remotes.origin.url
    except (AttributeError, ValueError):
        origin = ""
    if origin and _NETWORK_URL.match(origin):
        return normalise_url(origin)
    return f"local:{top.name}"


def anchors_of(found: SessionFile) -> list[Anchor]:
    """The commits to try: the one holding the file, its descendants before the next
    session's file (oldest first), then its ancestors (newest first)."""
    how = f"{FOUND_BY}:{found.path}@{found.commit[:12]}"
    return [
        Anchor(found.url, found.commit, how),
        *(Anchor(found.url, sha, f"{how} (its descendant {sha[:12]})") for sha in found.later),
        *(Anchor(found.url, sha, f"{how} (its parent {sha[:12]})") for sha in found.earlier),
    ]


def _patched(event: ApplyPatch | UnifiedDiff) -> list[str]:
    try:
        patches = action_patches(event)
    except PatchError:
        return []
    return [p.path for p in patches]


def _edited_paths(session: ParsedSession, paths: PathResolver) -> list[str]:
    """Paths the session read, wrote, edited or patched (Codex sessions patch only)."""
    touched: list[str] = []
    for event in session.events:
        raws: list[str] = []
        if isinstance(event, ReadFile | WriteFile | EditFile):
            raws = [event.path]
        elif isinstance(event, ApplyPatch | UnifiedDiff):
            raws = _patched(event)
        for raw in raws:
            rel = paths.resolve(raw) if isinstance(raw, str) else None
            if rel and rel not in touched:
                touched.append(rel)
    return touched


def find_prefix(touched: list[str], tree: list[str]) -> str | None:
    """The folder of the repository the session's root maps onto: the one under which
    the most paths the session touched exist (the shortest on a tie)."""
    votes: dict[str, int] = {}
    for rel in touched:
        tail = "/" + rel
        prefixes = {t[: len(t) - len(rel)] for t in tree if t == rel or t.endswith(tail)}
        for prefix in prefixes:
            votes[prefix] = votes.get(prefix, 0) + 1
    if not votes:
        return None
    return min(votes, key=lambda p: (-votes[p], len(p), p))


def _is_session_path(path: str, session_path: str) -> bool:
    """The session file and its siblings (a `sessions/` folder; at the root, files of the
    same stem, `trajectory*.json`): the transcripts must never be part of a start."""
    folder = str(PurePosixPath(session_path).parent)
    if folder not in ("", "."):
        return path == session_path or path.startswith(folder + "/")
    stem = re.match(r"[A-Za-z_]+", PurePosixPath(session_path).name)
    return path == session_path or bool(
        stem and "/" not in path and path.startswith(stem.group(0)) and path.endswith(".json")
    )


def end_files(tree: dict[str, str], session_path: str, prefix: str) -> dict[str, str]:
    """The commit's files under `prefix`, as the session's root sees them."""
    return {
        path[len(prefix) :]: text
        for path, text in tree.items()
        if path.startswith(prefix) and not _is_session_path(path, session_path)
    }


def locate_prefix(session: ParsedSession, tree: list[str]) -> str:
    prefix = find_prefix(_edited_paths(session, PathResolver(session.cwd)), tree)
    if prefix is None:
        raise AnchorError(
            "anchor.end-state-no-prefix", "no file the session read or edited is in the commit"
        )
    return prefix


class _Undo:
    """The reverse walk: `files` is the state at the current point; `pending` the paths
    whose content before the current point is unknown (written over by the session):
    an earlier full read gives it, else the file did not exist. An edit that cannot be
    undone (the project changed the file after the session) leaves its file pending
    when the session read it in full before: that read is its content then."""

    def __init__(self, session: ParsedSession, files: dict[str, str]) -> None:
        self.session = session
        self.files = dict(files)
        self.pending: set[str] = set()
        self.paths = PathResolver(session.cwd)
        self.first_read: dict[str, int] = {}
        for index, event in enumerate(session.events):
            if isinstance(event, ReadFile) and event.ok and event.complete and event.content:
                path = self.paths.resolve(event.path)
                if path is not None:
                    self.first_read.setdefault(path, index)
        self.index = len(session.events)

    def fail(self, path: str, why: str) -> AnchorError:
        """Refused, unless a full read before this event gives the file's content."""
        if self.first_read.get(path, self.index) < self.index:
            self.overwritten(path)
            return _Recovered(path)
        return AnchorError("anchor.end-state-undo-failed", f"{path}: {why}")

    def overwritten(self, path: str) -> None:
        self.files.pop(path, None)
        self.pending.add(path)

    def run(self) -> dict[str, str]:
        for index in reversed(range(len(self.session.events))):
            self.index = index
            event = self.session.events[index]
            if not getattr(event, "ok", True):
                continue
            try:
                self.step(event)
            except _Recovered:
                continue
        return self.files

    def step(self, event: object) -> None:
        if isinstance(event, ReadFile):
            path = self.paths.resolve(event.path)
            if path in self.pending and event.complete and event.content is not None:
                self.files[path] = event.content
                self.pending.discard(path)
        elif isinstance(event, WriteFile):
            path = self.paths.resolve(event.path)
            if path is not None:
                self.overwritten(path)
        elif isinstance(event, EditFile):
            self.edit(event)
        elif isinstance(event, ApplyPatch | UnifiedDiff):
            self.patch(event)
        elif isinstance(event, RunCommand):
            self.command(event)

    def edit(self, event: EditFile) -> None:
        path = self.paths.resolve(event.path)
        if path is None or path in self.pending:
            return
        if path not in self.files:
            raise self.fail(path, "edited by the session but not in the commit")
        content = self.files[path]
        for span in reversed(event.edits):
            if span.old == "":
                if content != span.new:
                    raise self.fail(path, "a file the session created by an edit changed since")
                content = ""
                continue
            count = content.count(span.new) if span.new else 0
            if count == 0 or (count > 1 and not span.replace_all):
                raise self.fail(path, f"an edit's new text is found {count} times, not once")
            content = content.replace(span.new, span.old)
        self.files[path] = content

    def patch(self, event: ApplyPatch | UnifiedDiff) -> None:
        try:
            patches = action_patches(event)
        except PatchError:
            return  # replay skips it too
        for file_patch in reversed(patches):
            try:
                self._undo_file_patch(file_patch)
            except _Recovered:
                continue

    def _undo_file_patch(self, file_patch: FilePatch) -> None:
        path = self.paths.resolve(file_patch.path)
        target = self.paths.resolve(file_patch.move_to) if file_patch.move_to else path
        if path is None or target is None:
            return
        if file_patch.op in ("add", "delete"):
            self.overwritten(path)
            return
        if target in self.pending:
            self.pending.add(path)
            return
        if target not in self.files:
            raise self.fail(target, "patched by the session but not in the commit")
        reverse = [Hunk(old=h.new, new=h.old) for h in reversed(file_patch.hunks)]
        try:
            content = apply_hunks(self.files.pop(target), reverse)
        except PatchError as exc:
            raise self.fail(target, f"a patch's new lines are not found ({exc})") from exc
        self.files[path] = content

    def command(self, event: RunCommand) -> None:
        local = self.paths.fork()
        if event.cwd is not None and not local.chdir(event.cwd):
            return
        for effect in command_effects(event.command).effects:
            if effect.op == "cd":
                local.chdir(effect.path or ".")
                continue
            path = local.resolve(effect.path) if effect.path else None
            if path is None:
                continue
            if effect.op in ("write", "append", "copy", "move", "delete"):
                self.overwritten(path)
            if effect.op == "move" and effect.source:
                source = local.resolve(effect.source)
                if source is not None:
                    self.overwritten(source)


class _Recovered(AnchorError):
    """An undo that failed on a file whose content an earlier full read gives."""

    def __init__(self, path: str) -> None:
        super().__init__("anchor.end-state-recovered", path)


def undo_session(session: ParsedSession, end: dict[str, str]) -> dict[str, str]:
    """The start state the session's own edits lead from to `end` (module docstring)."""
    return _Undo(session, end).run()
