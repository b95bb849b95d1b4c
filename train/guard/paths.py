"""Path resolution and matching shared by the analysers and the rules.

Paths are resolved lexically (no filesystem: the guard runs outside the task's
container) against the call's working directory; `~` is the agent's home. A path with
glob characters is kept as a pattern and matched component by component, so `/t?sts/*`
still reaches `/tests`.
"""

from __future__ import annotations

import posixpath
import re
from fnmatch import fnmatchcase

HOME = "/root"
GLOB_CHARS = re.compile(r"[*?\[]")


def resolve(path: str, cwd: str) -> str:
    if path.startswith("~"):
        path = HOME + path[1:]
    elif not path.startswith("/"):
        path = posixpath.join(cwd, path)
    resolved = posixpath.normpath(path)
    return "/" + resolved.lstrip("/") if resolved.startswith("//") else resolved


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p]


def _match(path: str, root: str) -> tuple[bool, bool]:
    """(path is root or inside it, path is a strict ancestor of root)."""
    if not GLOB_CHARS.search(path):
        root = root.rstrip("/") or "/"
        inside = path == root or path.startswith(root.rstrip("/") + "/")
        ancestor = not inside and (path == "/" or root.startswith(path.rstrip("/") + "/"))
        return inside, ancestor
    parts, root_parts = _parts(path), _parts(root)
    for i, want in enumerate(root_parts):
        if i >= len(parts):
            return False, True
        if parts[i] == "**":
            return True, False
        if not fnmatchcase(want, parts[i]):
            return False, False
    return True, False


def under(path: str, root: str) -> bool:
    """`path` is `root` or inside it; glob components in `path` match any name."""
    return _match(path, root)[0]


def overlaps(path: str, root: str) -> bool:
    """`path` is inside `root` or contains it (a recursive delete of `/logs` reaches
    `/logs/verifier`)."""
    inside, ancestor = _match(path, root)
    return inside or ancestor


def under_any(path: str, roots: list[str] | tuple[str, ...]) -> str | None:
    for root in roots:
        if under(path, root):
            return root
    return None


def overlaps_any(path: str, roots: list[str] | tuple[str, ...]) -> str | None:
    for root in roots:
        if overlaps(path, root):
            return root
    return None


def looks_like_path(word: str) -> bool:
    """A word that names a file: has a slash, starts with `~` or `.`, or has an
    extension; option words and URLs are not paths."""
    if not word or word.startswith("-") or "://" in word or len(word) > 4096:
        return False
    return "/" in word or word.startswith(("~", ".")) or bool(re.search(r"\.\w{1,8}$", word))


ABS_PATH_IN_TEXT = re.compile(r"(?<![\w.:/-])(/[\w.@%+~*?\[\]-]+(?:/[\w.@%+~*?\[\]-]*)*)")
HOME_PATH_IN_TEXT = re.compile(r"(?<![\w./-])(~/[\w.@%+~*?-]+(?:/[\w.@%+~*?-]*)*)")


def paths_in_text(text: str) -> list[str]:
    """Absolute and home paths mentioned anywhere in `text` (code, unknown tools)."""
    found = [m.group(1) for m in ABS_PATH_IN_TEXT.finditer(text)]
    found += [resolve(m.group(1), "/") for m in HOME_PATH_IN_TEXT.finditer(text)]
    return found
