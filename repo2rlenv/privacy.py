"""Personal data in task text: the session root and home directories, on every OS.

A task must not say where on someone's machine it came from. The session root (POSIX
`/home/x/proj`, Windows `C:\\Users\\x\\proj` or `C:/Users/x/proj`, and the escaped
`C:\\\\Users\\\\x` a JSON or Python string holds) becomes `/workspace`, where the task
runs; any other home directory (`/home/x`, `/Users/x`, `C:\\Users\\x`, `/root`) becomes
`~`; and the user names those paths reveal are replaced by `user` in instructions.
Files get the path rewrites only: a user name may also be an ordinary word in code.
"""

from __future__ import annotations

import re
from typing import Any

from repo2rlenv.bundle.standard import WORKDIR
from schemas import TaskBundle

_HOME = re.compile(
    r"(?<![\w/.-])/(?:home|Users)/(?P<posix>[^/\s'\"`<>]+)"
    r"|(?<![\w])[A-Za-z]:(?P<sep>\\\\|\\|/)(?:Users|Documents and Settings)(?P=sep)"
    r"(?P<win>[^\\/\s'\"`<>]+)(?P<rest>(?:\\{1,2}|/)[^\s'\"`<>|*?]*)?"
    r"|(?<![\w/.-])/root(?=/|\b)"
)
_HOME_CLUES = ("/home/", "Users", "Documents and Settings", "/root")
"""Text each `_HOME` match contains: a text with none of them is left unscanned."""
_GENERIC_NAMES = frozenset(
    {
        "user",
        "users",
        "public",
        "default",
        "shared",
        "runner",
        "dev",
        "admin",
        "ubuntu",
        "node",
        "app",
        "coder",
        "vscode",
        "codespace",
        "jovyan",
        "root",
        "guest",
        "test",
    }
)
"""Account names shared by every machine of a kind (containers, CI): not personal, and
ordinary words, so they stay."""
_MIN_NAME = 3
_WORD = re.compile(r"\w(?:[\w.-]*\w)?")
"""A word as user names are spelled (letters, digits, `_`, inner `.` and `-`)."""


def _root_spellings(root: str) -> list[str]:
    """Every spelling of the root that may appear in text, longest first."""
    root = root.rstrip("/\\")
    if len(root) <= 1:
        return []
    spellings = {root}
    if re.match(r"\A[A-Za-z]:[\\/]", root):
        back, fwd = root.replace("/", "\\"), root.replace("\\", "/")
        spellings |= {back, fwd, back.replace("\\", "\\\\"), f"/{root[0].lower()}{fwd[2:]}"}
    return sorted(spellings, key=len, reverse=True)


def _root_pattern(root: str | None) -> re.Pattern[str] | None:
    spellings = _root_spellings(root) if isinstance(root, str) else []
    if not spellings:
        return None
    windows = re.match(r"\A[A-Za-z]:", spellings[-1]) is not None or any(
        re.match(r"\A[A-Za-z]:", s) for s in spellings
    )
    body = "|".join(re.escape(s) for s in spellings)
    # The root ends at a separator or a non-path character, never inside a longer name;
    # the rest of the path is taken too, so Windows separators after it become "/".
    rest = r"(?P<rest>(?:\\{1,2}|/)[^\s'\"`<>|*?]*)?" if windows else ""
    return re.compile(f"(?:{body})(?![\\w.-]){rest}", re.IGNORECASE if windows else 0)


def _to_workdir(match: re.Match[str]) -> str:
    rest = match.groupdict().get("rest") or ""
    return WORKDIR + re.sub(r"\\{1,2}", "/", rest)


def user_names(text: str) -> set[str]:
    """User names that home paths in `text` reveal."""
    names = set()
    for match in _HOME.finditer(text):
        name = match.group("posix") or match.group("win")
        if (
            name
            and len(name) >= _MIN_NAME
            and name.lower() not in _GENERIC_NAMES
            and _WORD.fullmatch(name)
        ):
            names.add(name)
    return names


def scrub_paths(text: str, root: str | None) -> str:
    """The root rewritten to /workspace and every other home directory to `~`."""
    pattern = _root_pattern(root)
    if pattern is not None:
        text = pattern.sub(_to_workdir, text)
    if not any(clue in text for clue in _HOME_CLUES):
        return text  # a checkout's 40 MB: the regex took 14 s, the clues 0.2 s
    return _HOME.sub(_to_home, text)


def _to_home(match: re.Match[str]) -> str:
    return "~" + re.sub(r"\\{1,2}", "/", match.group("rest") or "")


def scrub_instruction(text: str, root: str | None) -> str:
    """Paths as in files, then the user names the root or any home path revealed."""
    names = user_names(text) | (user_names(root) if isinstance(root, str) else set())
    text = scrub_paths(text, root)
    if not names:
        return text
    # One scan over the words, each looked up in the set: linear in the text, however
    # many names the paths revealed.
    return _WORD.sub(lambda m: "user" if m.group() in names else m.group(), text)


def _scrub_values(value: Any, root: str | None) -> Any:
    if isinstance(value, str):
        return scrub_paths(value, root)
    if isinstance(value, dict):
        return {k: _scrub_values(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_values(v, root) for v in value]
    return value


def scrub_bundle(bundle: TaskBundle, root: str | None) -> TaskBundle:
    """The bundle with paths scrubbed in every text file and every metadata string, and
    the instruction scrubbed of user names too. Binary files are left as they are."""
    files = []
    for item in bundle.files:
        try:
            text = item.content.decode("utf-8")
        except UnicodeDecodeError:
            files.append(item)
            continue
        scrubbed = scrub_paths(text, root)
        files.append(
            item if scrubbed == text else item.model_copy(update={"content": scrubbed.encode()})
        )
    config = type(bundle.config).model_validate(
        _scrub_values(bundle.config.model_dump(mode="python"), root)
    )
    return bundle.model_copy(
        update={
            "instruction": scrub_instruction(bundle.instruction, root),
            "files": files,
            "config": config,
        }
    )
