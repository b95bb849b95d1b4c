"""The start state of an anchored session: the checkout it names, or (`--end-state`) the
commit of the git checkout that holds its file, with the session's own edits undone
(anchors/end_state.py). Moved out of session_miner so both routes read one module."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import git

from repo2rlenv.anchors.dirty import apply_local_changes
from repo2rlenv.anchors.end_state import (
    FOUND_BY,
    SessionFile,
    anchors_of,
    end_files,
    locate,
    locate_prefix,
    undo_session,
)
from repo2rlenv.anchors.find import Anchor, find_anchor
from repo2rlenv.anchors.repos import AnchorError, RepoCache, detect_licence
from repo2rlenv.anchors.siblings import Siblings
from repo2rlenv.emit import Notice, Skip
from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.kinds import Reject, SessionContext
from repo2rlenv.replay import replay

SOURCE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", "package.json")
"""A checkout with none of these is `anchor.language-unsupported`: Python and Node
projects are the ones the kinds can build and verify."""


def _binary_files(repos: RepoCache, anchor: Anchor, prefix: str = "") -> dict[str, bytes]:
    """The checkout's binary files (under `prefix`, as the session sees them), read when
    a task asks for them; an unreadable checkout refuses that task with the reason."""
    try:
        files = repos.binary_files_at(anchor)
    except AnchorError as exc:
        raise Reject(exc.reason, str(exc)) from exc
    return {p[len(prefix) :]: data for p, data in files.items() if p.startswith(prefix)}


def _session_file(ctx: SessionContext) -> Path | None:
    path = getattr(ctx.revision, "path", None)
    return path if isinstance(path, Path) else None


def _end_state(
    session: ParsedSession, ctx: SessionContext, repos: RepoCache, siblings: Siblings
) -> tuple[Anchor, dict[str, str], dict[str, str], str]:
    """(anchor, start state, published files under the prefix, prefix) of an end-state
    anchor: the first commit (the file's own, then its ancestors) where the session's
    edits undo and every read of the session agrees with the start. AnchorError says
    why not: the reason the file's own commit gave. Sessions committed with it that
    started later are undone first (anchors/siblings.py)."""
    file = _session_file(ctx)
    if file is None:
        raise AnchorError(
            "anchor.end-state-not-committed", "the record is not a local file of a git checkout"
        )
    found = locate(file)
    repos.local.setdefault(found.url, found.top)
    first: AnchorError | None = None
    candidates = anchors_of(found)
    for anchor in candidates:
        try:
            tree = repos.files_at(anchor)
            prefix = locate_prefix(session, list(tree))
            end = end_files(tree, found.path, prefix)
            start = _undo_chain(session, end, found, anchor.commit, siblings)
            mismatches = replay(session, start).workspace.mismatches
            if mismatches:
                raise AnchorError(
                    "anchor.read-mismatch",
                    f"files read in the session differ from {anchor.commit}: "
                    + ", ".join(mismatches[:3]),
                )
        except AnchorError as exc:
            first = first or exc
            continue
        return anchor, start, end, prefix
    assert first is not None
    raise AnchorError(first.reason, f"{first} ({len(candidates)} commits tried)")


def _undo_chain(
    session: ParsedSession,
    end: dict[str, str],
    found: SessionFile,
    commit: str,
    siblings: Siblings,
) -> dict[str, str]:
    state = end
    for path, other in siblings.later(git.Repo(found.top), commit, found.path, session):
        try:
            state = undo_session(other, state)
        except AnchorError as exc:
            raise AnchorError(exc.reason, f"{exc} (undoing {path}, a later session)") from exc
    return undo_session(session, state)


def anchored(
    session: ParsedSession,
    ctx: SessionContext,
    repos: RepoCache,
    *,
    end_state: Siblings | None,
    strict_secrets: bool,
) -> tuple[dict[str, str] | None, SessionContext, Skip | Notice | None]:
    """The repository checkout the session started from, when it names one (or, with
    `end_state`, the parsed siblings of its run, when its file is committed beside the
    project). A session that names no commit and cannot be anchored on its end state is
    mined unanchored, as without the option, with a `Notice` of the reason."""
    anchor = find_anchor(session)
    if anchor is not None and session.compacted:
        return None, ctx, None  # the checkout is the state before the dropped history
    if anchor is None and end_state is None:
        return None, ctx, None
    # an end state undone over the events after the last compaction is the state at
    # that compaction: the start of the part replayed
    fmt = session.source_format

    def skip(reason: str, detail: str) -> tuple[None, SessionContext, Skip]:
        return None, ctx, Skip(ctx.record_id, reason, detail, stage="record", source_format=fmt)

    prefix, shown_by = "", None
    try:
        if anchor is None:
            assert end_state is not None
            try:
                anchor, baseline, published, prefix = _end_state(session, ctx, repos, end_state)
            except AnchorError as exc:  # mined as without --end-state, the reason seen
                return None, ctx, Notice(ctx.record_id, exc.reason, str(exc))
        else:
            published = repos.files_at(anchor)
            baseline, shown_by = apply_local_changes(session, published)
    except AnchorError as exc:
        return skip(exc.reason, str(exc))
    if not any(p.endswith(SOURCE_SUFFIXES) for p in baseline):
        detail = f"{anchor.url} has no Python or JavaScript/TypeScript files"
        if anchor.found_by.startswith(FOUND_BY):  # mined unanchored, as without the option
            return None, ctx, Notice(ctx.record_id, "anchor.language-unsupported", detail)
        return skip("anchor.language-unsupported", detail)
    found_by = anchor.found_by + (f" + uncommitted: {shown_by}" if shown_by else "")
    ctx = replace(
        ctx,
        repository=anchor.url,
        commit=anchor.commit,
        anchor_found_by=found_by + (f" (under {prefix})" if prefix else ""),
        license=detect_licence(published),
        published=None if strict_secrets else published,
        binary_files=partial(_binary_files, repos, anchor, prefix),
        committed_at=partial(repos.committed_at, anchor),
        files_at_commit=partial(repos.text_files_at, anchor),
        scm_version=partial(repos.scm_version, anchor),
    )
    return baseline, ctx, None
