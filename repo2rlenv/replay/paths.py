"""Lexical path confinement: a path from a trajectory maps to a workspace-relative path or
to nothing. The real filesystem is never consulted, so no link, mount or `..` in a
recorded path can make replay read or write outside the session's root."""

from __future__ import annotations

import posixpath


class PathResolver:
    def __init__(self, root: str | None) -> None:
        self.root = posixpath.normpath(root) if root and root.startswith("/") else None
        self.cwd = ""  # relative to root

    def chdir(self, path: str) -> bool:
        """Follow a `cd`; returns False (and stays put) when it would leave the root."""
        rel = self.resolve(path, allow_root=True)
        if rel is None:
            return False
        self.cwd = rel
        return True

    def resolve(self, path: str, *, allow_root: bool = False) -> str | None:
        """Workspace-relative POSIX path, or None when it is outside the root or unusable."""
        if not isinstance(path, str) or not path or "\x00" in path or len(path) > 4096:
            return None
        path = path.strip()
        if path.startswith("file://"):
            path = path[len("file://") :]
        if path.startswith("~"):
            return None
        if path.startswith("/"):
            if self.root is None:
                return None
            absolute = posixpath.normpath(path)
            if absolute == self.root:
                rel = "."
            elif absolute.startswith(self.root.rstrip("/") + "/"):
                rel = absolute[len(self.root.rstrip("/")) + 1 :]
            else:
                return None
        else:
            rel = posixpath.normpath(posixpath.join(self.cwd or ".", path))
        if rel == "..":
            return None
        if rel.startswith("../"):
            return None
        if rel == ".":
            return "" if allow_root else None
        return rel
