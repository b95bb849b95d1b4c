"""Lexical path confinement: a path from a trajectory maps to a workspace-relative path or
to nothing. The real filesystem is never consulted, so no link, mount or `..` in a
recorded path can make replay read or write outside the session's root.

Windows sessions (`C:\\Users\\x\\proj`, `C:/Users/x/proj`) are confined the same way:
such paths are put in one POSIX-shaped form (`/c:/Users/x/proj`) before comparison,
compared without regard to case as Windows does, and a drive-letter or UNC path is
always absolute, so it can never become part of a relative file name.
"""

from __future__ import annotations

import posixpath
import re

_DRIVE = re.compile(r"\A([A-Za-z]):(?:[\\/]|\Z)")
_MSYS = re.compile(r"\A/[A-Za-z](?:/|\Z)")


def is_windows_path(path: str) -> bool:
    """A drive-letter (`C:\\...`, `C:/...`) or UNC (`\\\\host\\share`) path."""
    return _DRIVE.match(path) is not None or path.startswith("\\\\")


def posix_form(path: str) -> str:
    """One POSIX-shaped spelling of a Windows absolute path; other paths unchanged."""
    drive = _DRIVE.match(path)
    if drive is not None:
        rest = path[drive.end() :].replace("\\", "/")
        return f"/{drive.group(1).lower()}:/{rest}"
    if path.startswith("\\\\"):
        return "//unc/" + path[2:].replace("\\", "/")
    return path


class PathResolver:
    def __init__(self, root: str | None) -> None:
        self.windows = isinstance(root, str) and (
            is_windows_path(root) or re.match(r"\A/[a-z]:/", root) is not None
        )
        root = posix_form(root) if isinstance(root, str) else None
        self.root = posixpath.normpath(root) if root and root.startswith("/") else None
        self.cwd = ""  # relative to root

    def fork(self) -> PathResolver:
        """A copy at the same root and cwd whose own `cd`s stay its own (one command's
        `cd` does not move the session). Copied, not rebuilt: a root is parsed once per
        session, not once per command."""
        copy = object.__new__(PathResolver)
        copy.windows, copy.root, copy.cwd = self.windows, self.root, self.cwd
        return copy

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
        if is_windows_path(path) or (self.windows and "\\" in path):
            path = posix_form(path).replace("\\", "/")
        elif self.windows and _MSYS.match(path):  # Git Bash spells C:\x as /c/x
            path = f"/{path[1].lower()}:{path[2:]}"
        if path.startswith("/"):
            if self.root is None:
                return None
            absolute = posixpath.normpath(path)
            root = self.root.rstrip("/")
            if self.windows:  # Windows compares paths without regard to case
                same, inside = absolute.lower() == self.root.lower(), root.lower() + "/"
                within = absolute.lower().startswith(inside)
            else:
                same, within = absolute == self.root, absolute.startswith(root + "/")
            if same:
                rel = "."
            elif within:
                rel = absolute[len(root) + 1 :]
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
