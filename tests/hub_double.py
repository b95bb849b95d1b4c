"""The Hub double of the tests: the real `huggingface_hub`/`datasets` clients, pointed
at it with HF_ENDPOINT, read a dataset (its API answer with the commit and files, its
`resolve` URLs), create one, commit small files inline (the NDJSON commit, no
large-file storage), list and download them at a revision. Its preupload answer names
the git blob id of a file it already holds (`oid`), as the Hub does, so the client skips
unchanged files (how a rerun resumes an interrupted upload). It counts what it is asked
(`api` by path, `downloads` by file, `committed`: the files each commit changed) and can
refuse commits after a number of them (`refuse_commits_after`: an interrupted push).
Served by `tests.local_http.serving` on the loopback address.

Tokens: none is a 401, `read-only` a 403 on writes, anything else may write."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from aiohttp import web

from tests.local_http import serving

READ_ONLY = "read-only"


class WritableHub:
    def __init__(self) -> None:
        self.repos: dict[str, list[tuple[str, dict[str, bytes]]]] = {}
        """Dataset id -> its commits, oldest first: (sha, every file at that commit)."""
        self.validated: list[str] = []
        self.api = Counter[str]()
        self.downloads = Counter[str]()
        self.committed: list[list[str]] = []
        """Per commit accepted, the paths it added or deleted, in order."""
        self.refuse_commits_after: int | None = None
        """Commits beyond this many (counted in `committed`) are answered 422."""
        self._lock = threading.Lock()
        self.url = ""

    def seed(self, repo_id: str, files: dict[str, bytes], sha: str) -> None:
        """A dataset already on the Hub: one commit `sha` holding `files`."""
        self.repos[repo_id] = [(sha, dict(files))]

    def files(self, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        return self._at(repo_id, revision)[1]

    def _at(self, repo_id: str, revision: str) -> tuple[str, dict[str, bytes]]:
        commits = self.repos.get(repo_id)
        if commits is None:
            raise KeyError(repo_id)
        if revision == "main":
            return commits[-1]
        for sha, files in commits:
            if sha == revision:
                return sha, files
        raise LookupError(revision)

    async def answer(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path.startswith("/api/"):
            with self._lock:
                self.api[path] += 1
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        writing = request.method == "POST" and path != "/api/validate-yaml"
        if writing and not token:
            return _error(401, "Unauthorized")
        if writing and token == READ_ONLY:
            return _error(403, "Forbidden")
        try:
            if path == "/api/repos/create":
                return await self._create(request)
            if path == "/api/validate-yaml":
                return await self._validate(request)
            if path.startswith("/api/datasets/"):
                return await self._api(request, path.removeprefix("/api/datasets/"))
            if path.startswith("/datasets/"):
                return self._resolve(request, path.removeprefix("/datasets/"))
        except KeyError:
            return _error(404, "RepoNotFound")
        except LookupError:
            return _error(404, "RevisionNotFound")
        return _error(404, "EntryNotFound")

    async def _create(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        repo_id = f"{body['organization']}/{body['name']}"
        url = f"{self.url}/datasets/{repo_id}"
        with self._lock:
            if repo_id in self.repos:  # the Hub names the existing repository
                return web.json_response({"error": "exists", "url": url}, status=409)
            self.repos[repo_id] = [(_sha({}), {})]
        return web.json_response({"url": url})

    async def _validate(self, request: web.Request) -> web.StreamResponse:
        """What the Hub checks of README.md's metadata: it parses as a dataset card."""
        from huggingface_hub import DatasetCard

        content = (await request.json())["content"]
        self.validated.append(content)
        DatasetCard(content)  # raises on YAML that is not a mapping
        return web.json_response({"errors": [], "warnings": []})

    async def _api(self, request: web.Request, rest: str) -> web.StreamResponse:
        owner, name, *tail = rest.split("/")
        repo_id = f"{owner}/{name}"
        if not tail or tail[0] == "revision":
            sha, files = self._at(repo_id, "/".join(tail[1:]) or "main")
            siblings = [{"rfilename": f} for f in sorted(files)]
            return web.json_response({"id": repo_id, "sha": sha, "siblings": siblings})
        action, revision = tail[0], "/".join(tail[1:])
        if action == "preupload":
            body = await request.json()
            _, files = self._at(repo_id, revision)
            modes = [
                {
                    "path": f["path"],
                    "uploadMode": "regular",
                    "shouldIgnore": False,
                    "oid": _blob(files[f["path"]]) if f["path"] in files else None,
                }
                for f in body["files"]
            ]
            return web.json_response({"files": modes})
        if action == "tree":
            _, files = self._at(repo_id, revision.split("/")[0])
            entries = [
                {"type": "file", "path": f, "size": len(c), "oid": _blob(c)}
                for f, c in sorted(files.items())
            ]
            return web.json_response(entries)
        if action == "commit":
            return await self._commit(request, repo_id, revision)
        return _error(404, "EntryNotFound")

    async def _commit(
        self, request: web.Request, repo_id: str, revision: str
    ) -> web.StreamResponse:
        lines = [json.loads(line) for line in (await request.read()).splitlines() if line]
        with self._lock:
            refused = self.refuse_commits_after
            if refused is not None and len(self.committed) >= refused:
                return _error(422, "CommitRefused")
            _, files = self._at(repo_id, revision)
            files = dict(files)
            changed = []
            for line in lines:
                value = line["value"]
                if line["key"] != "header":
                    changed.append(value["path"])
                if line["key"] == "file":
                    files[value["path"]] = base64.b64decode(value["content"])
                elif line["key"] in ("deletedFile", "deletedFolder"):
                    gone = value["path"].rstrip("/")
                    files = {
                        f: c for f, c in files.items() if f != gone and not f.startswith(gone + "/")
                    }
                elif line["key"] != "header":
                    return _error(400, f"unsupported commit line {line['key']}")
            sha = _sha(files)
            self.repos[repo_id].append((sha, files))
            self.committed.append(changed)
        url = f"{self.url}/datasets/{repo_id}/commit/{sha}"
        return web.json_response({"commitUrl": url, "commitOid": sha, "pullRequestUrl": None})

    def _resolve(self, request: web.Request, rest: str) -> web.StreamResponse:
        owner, name, resolve, revision, *parts = rest.split("/")
        if resolve != "resolve":
            return _error(404, "EntryNotFound")
        sha, files = self._at(f"{owner}/{name}", revision)
        body = files.get("/".join(parts))
        if body is None:
            return _error(404, "EntryNotFound")
        headers = {
            "X-Repo-Commit": sha,
            "ETag": f'"{_blob(body)}"',
            "Content-Length": str(len(body)),
        }
        if request.method == "HEAD":
            return web.Response(headers=headers)
        with self._lock:
            self.downloads["/".join(parts)] += 1
        return web.Response(body=body, headers=headers)


def _blob(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def _sha(files: dict[str, bytes]) -> str:
    digest = hashlib.sha1()
    for name, content in sorted(files.items()):
        digest.update(f"{name}\0{_blob(content)}\0".encode())
    return digest.hexdigest()


def _error(status: int, code: str) -> web.Response:
    return web.json_response({"error": code}, status=status, headers={"X-Error-Code": code})


@contextmanager
def hub_double() -> Iterator[WritableHub]:
    double = WritableHub()
    with serving(double.answer) as url:
        double.url = url
        yield double
