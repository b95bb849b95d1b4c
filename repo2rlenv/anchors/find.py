"""Which repository and commit a session worked on, and how we know.

Sources, most explicit first: the harness's own record (Codex `session_meta.git`), fields
a dataset row or ATIF `extra` carries (repo / repository_url + base_commit /
commit_hash), and what the session itself printed (`git rev-parse HEAD`, `git log -1`,
`git remote -v`, `git status`). The result says which source it came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from repo2rlenv.formats.base import ParsedSession, RunCommand

SHA = re.compile(r"\b[0-9a-f]{40}\b")
COMMIT_LINE = re.compile(r"^commit ([0-9a-f]{40})\b", re.MULTILINE)
REMOTE = re.compile(r"^origin\s+(\S+)\s+\(fetch\)", re.MULTILINE)
GIT_LOG = re.compile(r"\bgit (log|show)\b")
URL_KEYS = ("repository_url", "repo_url", "repository", "repo", "remote_url", "url")
COMMIT_KEYS = ("commit_hash", "base_commit", "commit", "sha", "head")


@dataclass(frozen=True)
class Anchor:
    url: str
    commit: str
    found_by: str  # e.g. "codex.session_meta.git", "atif.extra", "command:git rev-parse HEAD"


def normalise_url(url: str) -> str:
    """One spelling per repository: scp-style and https URLs, with or without .git."""
    url = url.strip()
    match = re.match(r"^[\w.-]+@([\w.-]+):(.+)$", url)
    if match:
        url = f"https://{match.group(1)}/{match.group(2)}"
    url = re.sub(r"^(?:git\+)?(?:ssh|git|http)://(?:[^@/]+@)?", "https://", url)
    url = re.sub(r"^https://[^@/]+@", "https://", url)
    if re.fullmatch(r"[\w.-]+/[\w.-]+", url):  # "owner/name" as SWE rows write it
        url = f"https://github.com/{url}"
    return url.removesuffix("/").removesuffix(".git")


def _from_mapping(data: Any, where: str) -> Anchor | None:
    if not isinstance(data, dict):
        return None
    url = next((data[k] for k in URL_KEYS if isinstance(data.get(k), str) and data[k]), None)
    commit = next(
        (data[k] for k in COMMIT_KEYS if isinstance(data.get(k), str) and SHA.fullmatch(data[k])),
        None,
    )
    if url and commit:
        return Anchor(normalise_url(url), commit, where)
    for key, value in data.items():
        if isinstance(value, dict):
            nested = _from_mapping(value, f"{where}.{key}")
            if nested is not None:
                return nested
    return None


def _printed(session: ParsedSession) -> Iterator[tuple[str, str, str]]:
    for action in session.actions:
        if isinstance(action, RunCommand) and action.output and action.exit_code in (0, None):
            yield action.command, action.output, action.cwd or ""


def _from_commands(session: ParsedSession) -> Anchor | None:
    commit = url = None
    how: list[str] = []
    for command, output, _cwd in _printed(session):
        if commit is None and "rev-parse" in command and "HEAD" in command:
            match = SHA.search(output)
            if match:
                commit = match.group(0)
                how.append("git rev-parse HEAD")
        if commit is None and "git " in command and GIT_LOG.search(command):
            match = COMMIT_LINE.search(output)
            if match:
                commit = match.group(1)
                how.append("git log")
        if url is None and "remote" in command:
            match = REMOTE.search(output)
            if match:
                url = match.group(1)
                how.append("git remote -v")
        if commit and url:
            return Anchor(normalise_url(url), commit, "command:" + " + ".join(how))
    return None


def find_anchor(session: ParsedSession) -> Anchor | None:
    if session.git:
        found = _from_mapping(session.git, f"{session.harness}.git")
        if found is not None:
            return found
    extra = session.trajectory.extra or {}
    found = _from_mapping(extra, "trajectory.extra")
    return found or _from_commands(session)
