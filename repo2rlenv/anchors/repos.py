"""Repository checkouts for anchored sessions: cached, concurrent-safe, offline-capable.

A repository URL is looked up in the repo map (`--repo-map FILE`: JSON or TOML mapping
URLs to local paths or mirror URLs) and fetched into a bare mirror under the cache
(`--repo-cache DIR`), one per repository, guarded by a file lock so parallel workers and
runs share it. Only the one commit is fetched where the source allows it (shallow);
files are read from the commit's tree, so no history ever reaches a task.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import tomllib
from contextlib import contextmanager
from datetime import UTC
from pathlib import Path

import git

from repo2rlenv.anchors.find import Anchor, normalise_url
from repo2rlenv.anchors.reach import unresolvable_host
from repo2rlenv.kinds.scm_version import NO_REPOSITORY, NO_TAG, ScmVersion, from_describe
from repo2rlenv.settings import MAX_REPO_BYTES, MAX_REPO_FILES

GIT_LOOKUP_ERRORS = (
    git.InvalidGitRepositoryError,
    git.NoSuchPathError,
    git.GitCommandError,
    ValueError,
    OSError,
)
"""What opening a folder as a git checkout and asking it for a commit or file can raise
when the folder is not one, or does not hold it."""


MAX_FILE_BYTES = 1_000_000
FETCH_TIMEOUT_S = 600.0
"""One `git fetch` of an anchor (a shallow commit, or a repository's branches): past
this, git is killed and the sessions of that commit are skipped with the reason."""
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0"}
"""git never asks for a user name or password: a private or missing repository over
https fails at once ("terminal prompts disabled") instead of waiting on a terminal."""


LICENCE_MARKERS = (
    ("Apache-2.0", "Apache License"),
    ("MIT", "Permission is hereby granted, free of charge"),
    ("GPL-3.0", "GNU GENERAL PUBLIC LICENSE"),
    ("BSD-3-Clause", "Neither the name"),
    ("BSD-2-Clause", "Redistributions in binary form"),
    ("MPL-2.0", "Mozilla Public License"),
    ("ISC", "Permission to use, copy, modify, and/or distribute"),
)
NO_LICENCE = "none-found"
_UNREACHABLE = (
    "Could not resolve host",
    "Could not resolve hostname",
    "Failed to connect",
    "Connection refused",
    "Connection timed out",
    "Network is unreachable",
)
"""git's words for a remote it cannot reach at all (as opposed to one refusing a ref)."""
_UNREACHABLE_OR_STUCK = (*_UNREACHABLE, "did not complete in", "terminal prompts disabled")
"""...and for one that did not answer in time, or wants credentials: asking it again
for all its branches would only wait or be refused again."""


COMMIT_ID = re.compile(r"[0-9a-f]{40}")
"""A full commit id: what `text_files_at` asks git for."""


def _git_reason(exc: Exception) -> str:
    """git's own last words (its stderr), not GitPython's first line `Cmd('git')
    failed due to: exit code(128)`, which says nothing of why."""
    stderr = str(getattr(exc, "stderr", "") or "").strip()
    if stderr.startswith("stderr:"):
        stderr = stderr[len("stderr:") :].strip().strip("'")
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    text = lines[-1] if lines else (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text[:200]


def detect_licence(files: dict[str, str]) -> str:
    """SPDX id of the repository's licence file, or `none-found` (filterable)."""
    for path in sorted(files):
        if "/" not in path and path.upper().startswith(("LICENSE", "LICENCE", "COPYING")):
            text = files[path]
            return next(
                (spdx for spdx, marker in LICENCE_MARKERS if marker in text), "unrecognised"
            )
    return NO_LICENCE


def _holds_no_objects(mirror: Path) -> bool:
    """True when the mirror cannot hold the commit: it does not exist yet, or it is a
    fresh bare repository with no object at all (no loose object, no pack, no alternate).
    Anything else, or any doubt, is for git to answer."""
    if not mirror.exists():
        return True
    try:
        with os.scandir(mirror / "objects") as entries:
            for entry in entries:
                if entry.name == "info":
                    if any(os.scandir(entry.path)):
                        return False  # alternates, packs list: objects may live elsewhere
                elif entry.name == "pack":
                    if any(os.scandir(entry.path)):
                        return False
                else:
                    return False  # a loose-object folder, or something unknown
    except OSError:
        return False
    return True


def _local_holding(source: str, commit: str) -> git.Repo | None:
    """A repo-map entry that is a local repository holding the commit, read in place
    when fetching from it failed: a partial mirror (blobs absent) cannot be fetched
    from (`fetch-pack: invalid index-pack output`), yet its commit's tree reads, and
    `files_at` leaves out the blobs it lacks (a read of one is a mismatch). Anything
    that is not such a repository is None, never an error: the caller falls back."""
    if "://" in source or not Path(source).is_dir():
        return None
    try:
        repo = _open_local(Path(source))
        repo.git.cat_file("-e", f"{commit}^{{commit}}")
    except GIT_LOOKUP_ERRORS:
        return None
    return repo


def _open_local(path: Path) -> git.Repo:
    """The repository at `path`, its git commands pointed at it. A bare repository
    without a `config` file (a snapshot of a mirror's objects and refs) is taken by
    GitPython for a work tree's `.git` whose work tree is the parent folder, so every
    command ran there and git found no repository (the first mining of a SymPy
    snapshot ended in a BrokenPipeError from git's object reader)."""
    repo = git.Repo(path)
    if not repo.bare and not (path / ".git").exists() and (path / "HEAD").is_file():
        repo.git.update_environment(GIT_DIR=str(path.resolve()))
    return repo


class AnchorError(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def load_repo_map(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    text = Path(path).read_text()
    data = tomllib.loads(text) if Path(path).suffix == ".toml" else json.loads(text)
    return {normalise_url(k): str(v) for k, v in data.items()}


class RepoCache:
    def __init__(
        self,
        cache_dir: Path,
        repo_map: dict[str, str] | None = None,
        *,
        max_files: int = MAX_REPO_FILES,
        max_bytes: int = MAX_REPO_BYTES,
    ) -> None:
        """`max_files` / `max_bytes`: the largest checkout read (settings
        `max_repo_files` / `max_repo_bytes`); a larger one is `anchor.repo-too-large`."""
        self.root = Path(cache_dir) / "repos"
        self.repo_map = repo_map or {}
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.local: dict[str, Path] = {}
        """Repositories read in place (an end-state anchor's own checkout): nothing is
        fetched, the commit's tree is read from that repository's objects."""
        self._failed: dict[tuple[str, str], AnchorError] = {}
        """Checkouts that failed in this run: other sessions of the same commit skip alike."""

    @contextmanager
    def _locked(self, key: str):
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _mirror(self, anchor: Anchor) -> git.Repo:
        if anchor.url in self.local:
            return git.Repo(self.local[anchor.url])
        source = self.repo_map.get(anchor.url, anchor.url)
        key = hashlib.sha256(anchor.url.encode()).hexdigest()[:16]
        path = self.root / f"{key}.git"
        with self._locked(key):
            repo = None
            if not _holds_no_objects(path):
                repo = git.Repo(path)
                try:
                    repo.commit(anchor.commit)
                    return repo
                except (ValueError, git.BadName):
                    pass
            unreachable = unresolvable_host(source, path)
            if unreachable is not None:
                raise AnchorError(
                    "anchor.checkout-failed",
                    f"cannot get {anchor.commit[:12]} of {anchor.url} from {source}: {unreachable}",
                )
            if repo is None:
                repo = git.Repo(path) if path.exists() else git.Repo.init(path, bare=True)
            timed = {"kill_after_timeout": FETCH_TIMEOUT_S, "env": GIT_ENV}
            try:
                try:
                    repo.git.fetch(source, anchor.commit, depth=1, **timed)
                except git.GitCommandError as first:
                    if any(sign in str(first.stderr) for sign in _UNREACHABLE_OR_STUCK):
                        raise  # the fallback would ask the same host again
                    repo.git.fetch(source, "+refs/heads/*:refs/remotes/origin/*", **timed)
                repo.commit(anchor.commit)
            except (git.GitCommandError, ValueError, git.BadName) as exc:
                in_place = _local_holding(source, anchor.commit)
                if in_place is not None:
                    return in_place
                raise AnchorError(
                    "anchor.checkout-failed",
                    f"cannot get {anchor.commit[:12]} of {anchor.url} from "
                    f"{source}: {_git_reason(exc)}",
                ) from exc
        return repo

    def committed_at(self, anchor: Anchor) -> str:
        """The anchored commit's committer time, UTC ISO 8601 (`2023-03-11T16:23:08Z`):
        no file of the checkout can pin a release newer than it."""
        when = self._mirror(anchor).commit(anchor.commit).committed_datetime
        return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def scm_version(self, anchor: Anchor) -> ScmVersion:
        """The version setuptools-scm would give the anchored commit (`kinds.scm_version`),
        from `git describe --tags --long` (git data only; nothing of the repository runs).
        The repo map's local repository is asked first: the cache's own mirror holds the
        one commit fetched shallow, without tags. No tag reachable: the reason, recorded."""
        if not COMMIT_ID.fullmatch(anchor.commit):
            return ScmVersion(reason=NO_REPOSITORY, detail="the anchor is not a commit id")
        source = self.repo_map.get(anchor.url, anchor.url)
        repos = [r for r in (_local_holding(source, anchor.commit),) if r is not None]
        try:
            repos.append(self._mirror(anchor))
        except AnchorError as exc:
            if not repos:
                return ScmVersion(reason=NO_REPOSITORY, detail=str(exc)[:200])
        why = ""
        for repo in repos:
            try:
                out = repo.git.describe(
                    "--tags",
                    "--long",
                    "--match",
                    "*[0-9]*",
                    anchor.commit,
                    kill_after_timeout=60,
                    env=GIT_ENV,
                )
            except git.GitCommandError as exc:
                why = _git_reason(exc)
                continue
            return from_describe(out)
        return ScmVersion(reason=NO_TAG, detail=why)

    def text_files_at(self, anchor: Anchor, commit: str, paths: tuple[str, ...]) -> dict[str, str]:
        """The text of `paths` at another `commit` of the anchor's repository (fetched
        into the mirror as the anchor's own commit is); a path the commit lacks, or a
        commit no source gives, is left out: the caller says what it read instead."""
        if not COMMIT_ID.fullmatch(commit):  # a table's text, never a git option
            return {}
        other = Anchor(url=anchor.url, commit=commit, found_by=anchor.found_by)
        try:
            tree = self._mirror(other).commit(commit).tree
        except (AnchorError, ValueError, git.BadName, git.GitCommandError):
            return {}
        found: dict[str, str] = {}
        for path in paths:
            try:
                found[path] = (tree / path).data_stream.read().decode("utf-8")
            except (KeyError, ValueError, OSError, UnicodeDecodeError, git.GitCommandError):
                continue
        return found

    def binary_files_at(self, anchor: Anchor) -> dict[str, bytes]:
        """The commit's files that `files_at` leaves out: binary files (test data such as
        pydicom's `.dcm` files) and files over its per-file limit (moto's 1.6 MB
        `moto/iam/aws_managed_policies.py`, which every moto service imports). An
        instance's tests need them, so its task image carries them as the commit has
        them, though no replay ever reads them. The repository's total limit holds; a
        blob a partial mirror lacks is left out (the tests that need it then fail the
        oracle, which says so)."""
        commit = self._mirror(anchor).commit(anchor.commit)
        files: dict[str, bytes] = {}
        total = 0
        for item in commit.tree.traverse():
            if item.type != "blob" or item.mode == 0o120000:
                continue
            try:
                data = item.data_stream.read()
            except (ValueError, OSError, git.GitCommandError):
                continue  # absent from this mirror
            if item.size <= MAX_FILE_BYTES and b"\0" not in data[:8192]:
                try:
                    data.decode("utf-8")
                    continue  # text: `files_at` has it
                except UnicodeDecodeError:
                    pass
            total += len(data)
            if total > self.max_bytes:
                raise AnchorError(
                    "anchor.repo-too-large", f"{anchor.url} has over {self.max_bytes} bytes"
                )
            files[item.path] = data
        return files

    def files_at(self, anchor: Anchor) -> dict[str, str]:
        """Text files of the commit (binary, over-large and link entries left out)."""
        failed = self._failed.get((anchor.url, anchor.commit))
        if failed is not None:
            raise AnchorError(failed.reason, str(failed))
        try:
            commit = self._mirror(anchor).commit(anchor.commit)
        except AnchorError as exc:
            self._failed[(anchor.url, anchor.commit)] = exc
            raise
        files: dict[str, str] = {}
        total = 0
        for item in commit.tree.traverse():
            if item.type != "blob" or item.mode == 0o120000:
                continue
            if len(files) >= self.max_files or total > self.max_bytes:
                raise AnchorError(
                    "anchor.repo-too-large",
                    f"{anchor.url} has over {self.max_files} files or {self.max_bytes} bytes "
                    "(settings max_repo_files / max_repo_bytes, --max-repo-files/-bytes)",
                )
            try:
                if item.size > MAX_FILE_BYTES:
                    continue
                data = item.data_stream.read()
            except (ValueError, OSError, git.GitCommandError):
                continue  # absent from a partial mirror: a read of it is a mismatch
            if b"\0" in data[:8192]:
                continue
            try:
                files[item.path] = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            total += len(data)
        return files
