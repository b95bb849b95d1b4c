"""Sessions committed together: a delivered-task repository often commits all its
session files at once, with the project as the last of them left it. The end state of
an earlier session is then reached by undoing the later ones first (the files in the
same folder of the same commit whose session started later, in the same root), newest
first. The siblings are read from the commit's blobs, parsed like any session (they are
as hostile as the one mined), and only those whose root is the mined session's are used:
their paths mean the same files."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path, PurePosixPath

import git

from repo2rlenv.formats import read_record
from repo2rlenv.formats.base import FormatError, ParsedSession
from repo2rlenv.formats.files import iter_file_records

MAX_SIBLING_BYTES = 64_000_000
"""A session file larger than this is not parsed as a sibling (none of the real ones
reached 10 MB)."""


def started(session: ParsedSession) -> str | None:
    """The session's first timestamp (ISO 8601, as the export wrote it)."""
    return next((str(s.timestamp) for s in session.trajectory.steps if s.timestamp), None)


class Siblings:
    """Parsed sibling sessions, cached by blob: the same blob is in many commits."""

    def __init__(self) -> None:
        self._parsed: dict[str, ParsedSession | None] = {}

    def _parse(self, blob: git.Blob) -> ParsedSession | None:
        if blob.hexsha not in self._parsed:
            self._parsed[blob.hexsha] = None
            if blob.size <= MAX_SIBLING_BYTES:
                with tempfile.TemporaryDirectory(prefix="rlenv-sibling-") as work:
                    path = Path(work) / PurePosixPath(blob.path).name
                    path.write_bytes(blob.data_stream.read())
                    records = list(iter_file_records(path))
                if len(records) == 1 and not isinstance(records[0][1], FormatError):
                    with contextlib.suppress(FormatError):
                        self._parsed[blob.hexsha] = read_record(records[0][1], blob.path)
        return self._parsed[blob.hexsha]

    def later(
        self, repo: git.Repo, commit: str, session_path: str, session: ParsedSession
    ) -> list[tuple[str, ParsedSession]]:
        """(path, session) of the siblings that started after `session`, newest first."""
        start = started(session)
        folder = str(PurePosixPath(session_path).parent)
        if start is None or folder in ("", "."):
            return []
        try:
            tree = repo.commit(commit).tree / folder
        except (KeyError, ValueError):
            return []
        suffix = PurePosixPath(session_path).suffix
        found: list[tuple[str, str, ParsedSession]] = []
        for blob in tree.blobs:
            if blob.path == session_path or not blob.path.endswith(suffix):
                continue
            try:
                other = self._parse(blob)
            except (ValueError, OSError, git.GitCommandError):
                continue  # absent from a partial mirror
            when = started(other) if other is not None else None
            if other is not None and when and when > start and other.cwd == session.cwd:
                found.append((when, blob.path, other))
        return [(path, other) for _, path, other in sorted(found, reverse=True)]
