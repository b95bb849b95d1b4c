"""Fetching an anchor's repository is bounded (issue 28): git never waits on a terminal
for credentials (`GIT_TERMINAL_PROMPT=0`), and a remote that accepts the connection and
never answers is given up after `FETCH_TIMEOUT_S`. Both end as one
`anchor.checkout-failed` line that carries git's own words. The remote is a local HTTP
server: one path answers as a private repository does (401, Basic), the other never
answers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from aiohttp import web

from repo2rlenv.anchors import repos
from repo2rlenv.anchors.find import Anchor
from repo2rlenv.anchors.repos import AnchorError, RepoCache
from tests.local_http import serving

COMMIT = "c" * 40


@pytest.fixture
def remote(monkeypatch) -> Iterator[str]:
    """`/private.git` wants credentials; `/stuck.git` holds every request open."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")  # no credential helper answers
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    release = asyncio.Event()

    async def answer(request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/private.git"):
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="git"'})
        await release.wait()
        return web.Response(status=500)

    with serving(answer, before_stop=release.set) as url:
        yield url


@pytest.mark.timeout(60)
def test_a_repository_that_wants_credentials_fails_without_a_prompt(remote, tmp_path):
    cache = RepoCache(tmp_path / "cache", {})
    with pytest.raises(AnchorError) as raised:
        cache.files_at(Anchor(f"{remote}/private.git", COMMIT, "test"))
    assert raised.value.reason == "anchor.checkout-failed"
    assert "terminal prompts disabled" in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.timeout(60)
def test_a_remote_that_never_answers_is_given_up(remote, tmp_path, monkeypatch):
    monkeypatch.setattr(repos, "FETCH_TIMEOUT_S", 1.0)
    cache = RepoCache(tmp_path / "cache", {})
    with pytest.raises(AnchorError) as raised:
        cache.files_at(Anchor(f"{remote}/stuck.git", COMMIT, "test"))
    assert raised.value.reason == "anchor.checkout-failed"
    assert "did not complete in 1 secs" in str(raised.value)
