"""Path resolution and matching shared by the analysers and the rules.

Paths are resolved lexically (no filesystem: the guard runs outside the task's
container) against the call's working directory; `~` is the agent's home. A path with
glob characters is kept as a pattern and matched component by component, so `/t?sts/*`
still reaches `/tests`.
"""

from __future__ import annotations

import fnmatch
import functools
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


# -- could a shell glob name a file a rule pattern names? ------------------------------
#
# A command's path with glob characters (`/etc/sha*ow`, `~/.aw?/credentials`, the
# `/etc/**/shadow` a `find -exec` stands for) is judged by what it could expand to: it is
# a hit when some file name matches both it and the rule's pattern. In the command, `*`,
# `?` and `[...]` stay within one name, `**/` is no directory or any number of them, a
# final `**` any rest. Whether wildcards match a leading `.` is the caller's `dot_names`:
# bash's globs do not, `find`'s descent and `-name` do. In a rule's pattern (ours) a
# leading `*` is any directory prefix and a final `/*` anything below; every other `*`
# stays within one name. The check walks both patterns at once over the characters that
# can tell them apart: no filesystem, no enumeration of names.

_ONE, _STAR, _SPAN, _REST = "one", "star", "span", "rest"
"""Token kinds: one character (`?`, `[...]` or a literal), `*` within a name, `**/` (empty
or ending in `/`), and any rest (a final `**`, a rule's leading `*` or final `/*`)."""


@functools.lru_cache(maxsize=256)
def _tokens(pattern: str, shell: bool) -> tuple[tuple[str, str], ...]:
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        whole_name = (i == 0 or pattern[i - 1] == "/") and pattern[i + 2 : i + 3] in ("/", "")
        if shell and pattern.startswith("**", i) and whole_name:
            tokens.append((_SPAN if pattern[i + 2 : i + 3] == "/" else _REST, ""))
            i += 3
        elif char == "*":
            spans = not shell and (i == 0 or (i == len(pattern) - 1 and pattern[i - 1] == "/"))
            tokens.append((_REST if spans else _STAR, ""))
            i += 1
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            tokens.append((_ONE, pattern[i : end + 1]))
            i = end + 1
        else:
            tokens.append((_ONE, char))
            i += 1
    return tuple(tokens)


@functools.lru_cache(maxsize=256)
def _rule_regex(pattern: str) -> re.Pattern[str]:
    """The rule's pattern as a regex, for a command path without glob characters."""
    parts = []
    for kind, text in _tokens(pattern, shell=False):
        if kind == _REST:
            parts.append(".*")
        elif kind == _STAR:
            parts.append("[^/]*")
        elif text == "?":
            parts.append("[^/]")
        elif len(text) > 1:
            parts.append(fnmatch.translate(text).removeprefix("(?s:").removesuffix(")\\Z"))
        else:
            parts.append(re.escape(text))
    return re.compile("".join(parts), re.S)


def _accepts(
    token: tuple[str, str], char: str, shell: bool, name_start: bool, dot_names: bool
) -> bool:
    kind, text = token
    if kind == _REST:
        return True
    if kind == _ONE and len(text) == 1 and text != "?":
        return char == text
    if shell and char == "." and name_start and not dot_names:
        return False
    if kind == _SPAN:
        return True
    if char == "/":
        return False
    return kind == _STAR or text == "?" or fnmatchcase(char, text)


def _candidates(left: tuple[str, str], right: tuple[str, str], spare: str) -> tuple[str, ...]:
    """The characters worth trying for one step of both patterns: a literal on either side
    is the only one; two wildcards need only a plain character, `.` and `/` (the ones
    the rules treat apart) and what their `[...]` sets name."""
    for kind, text in (left, right):
        if kind == _ONE and len(text) == 1 and text != "?":
            return (text,)
    sets = "".join(text for kind, text in (left, right) if len(text) > 1)
    return (spare, ".", "/", *sets)


def _literal_ends(pattern: str) -> tuple[str, str]:
    """The text before the first wildcard and after the last one."""
    first = re.search(r"[*?\[]", pattern)
    last = max(pattern.rfind(c) for c in "*?]")
    return pattern[: first.start() if first else len(pattern)], pattern[last + 1 :]


def _ends_agree(path: str, pattern: str) -> bool:
    """A name both match starts with both literal heads and ends with both literal tails,
    so one of each pair contains the other: most pairs are told apart here, at once."""
    (head, tail), (rule_head, rule_tail) = _literal_ends(path), _literal_ends(pattern)
    heads = head.startswith(rule_head) or rule_head.startswith(head)
    return heads and (tail.endswith(rule_tail) or rule_tail.endswith(tail))


def could_match(path: str, pattern: str, dot_names: bool = True) -> bool:
    """Some file name matches both the command's path (a shell glob) and the rule's
    pattern. `dot_names`: whether the command's wildcards match a leading `.` (`find`
    does, bash does not); the guard grants it outside the task's workdir, where
    credentials live, and not inside it, where `src/**/*.ts` and `find . -name '*.py'` are
    what agents type every day."""
    if not GLOB_CHARS.search(path):
        return _rule_regex(pattern).fullmatch(path) is not None
    return _ends_agree(path, pattern) and _walk(path, pattern, dot_names)


@functools.lru_cache(maxsize=4096)
def _walk(path: str, pattern: str, dot_names: bool) -> bool:
    left, right = _tokens(path, True), _tokens(pattern, False)
    spare = next(c for c in "qzxjk0123456789" if c not in path and c not in pattern)
    spans = (_STAR, _SPAN, _REST)
    seen = {(0, 0, True)}
    todo = [(0, 0, True)]
    while todo:
        i, j, name_start = todo.pop()
        if i == len(left) and j == len(right):
            return True
        moves = []
        if i < len(left) and (left[i][0] in (_STAR, _REST) or (left[i][0] == _SPAN and name_start)):
            moves.append((i + 1, j, name_start))
        if j < len(right) and right[j][0] in spans:
            moves.append((i, j + 1, name_start))
        if i < len(left) and j < len(right):
            step = (i + (left[i][0] not in spans), j + (right[j][0] not in spans))
            for char in _candidates(left[i], right[j], spare):
                if _accepts(left[i], char, True, name_start, dot_names) and _accepts(
                    right[j], char, False, name_start, dot_names
                ):
                    moves.append((*step, char == "/"))
        for move in moves:
            if move not in seen:
                seen.add(move)
                todo.append(move)
    return False
