"""Deciding without git that a repository cannot be fetched, and leaving every doubt to git."""

from __future__ import annotations

import os

import git
import pytest

from repo2rlenv.anchors import reach
from repo2rlenv.anchors.find import Anchor
from repo2rlenv.anchors.repos import AnchorError, RepoCache, _holds_no_objects

NOWHERE = "https://example.invalid/owner/name"  # RFC 2606: never resolves
COMMIT = "c" * 40


@pytest.fixture
def plain(monkeypatch, tmp_path):
    """No proxy variable and no git configuration beyond an empty home."""
    for name in list(os.environ):
        if name.lower() in reach._PROXY_VARIABLES or name.startswith(reach._GIT_VARIABLES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setattr(reach, "_config_files", _only_user_files(reach._config_files))
    return tmp_path


def _only_user_files(original):
    """The machine's /etc/gitconfig is not ours to control: judge only the files the
    test writes (home and mirror), still through the real reading code."""

    def files(mirror):
        return [p for p in original(mirror) if not str(p).startswith(("/etc", "/usr"))]

    return files


def test_unresolvable_host_is_known_without_git(plain):
    assert reach.unresolvable_host(NOWHERE, plain / "m.git") == (
        "Could not resolve host: example.invalid"
    )


@pytest.mark.parametrize("variable", ["https_proxy", "HTTPS_PROXY", "ALL_PROXY", "http_proxy"])
def test_a_proxy_leaves_it_to_git(plain, monkeypatch, variable):
    monkeypatch.setenv(variable, "http://127.0.0.1:9")
    assert reach.unresolvable_host(NOWHERE, plain / "m.git") is None


@pytest.mark.parametrize(
    "config",
    [
        '[url "https://mirror.example/"]\n\tinsteadOf = https://example.invalid/\n',
        "[http]\n\tproxy = http://127.0.0.1:9\n",
        "[include]\n\tpath = ~/elsewhere\n",
    ],
)
def test_routing_configuration_leaves_it_to_git(plain, config):
    home = plain / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(config)
    assert reach.unresolvable_host(NOWHERE, plain / "m.git") is None


def test_mirror_configuration_counts_too(plain):
    mirror = plain / "m.git"
    git.Repo.init(mirror, bare=True)
    assert reach.unresolvable_host(NOWHERE, mirror) is not None
    with git.Repo(mirror).config_writer() as config:
        config.set_value('url "https://mirror.example/"', "insteadOf", "https://example.invalid/")
    assert reach.unresolvable_host(NOWHERE, mirror) is None


@pytest.mark.parametrize("source", ["/srv/repos/calc", "file:///srv/repos/calc", "git@host:x/y"])
def test_sources_without_a_host_to_resolve_go_to_git(plain, source):
    assert reach.unresolvable_host(source, plain / "m.git") is None


def test_an_empty_mirror_cannot_hold_a_commit(tmp_path):
    mirror = tmp_path / "m.git"
    assert _holds_no_objects(mirror)
    repo = git.Repo.init(mirror, bare=True)
    assert _holds_no_objects(mirror)
    (tmp_path / "x.txt").write_text("x\n")
    blob = repo.git.hash_object("-w", str(tmp_path / "x.txt"))
    assert blob and not _holds_no_objects(mirror)


def test_checkout_of_an_unresolvable_host_starts_no_git(plain, monkeypatch):
    def no_git(*args, **kwargs):
        raise AssertionError("git was started")

    monkeypatch.setattr(git.Repo, "init", no_git)
    monkeypatch.setattr(git.Repo, "__init__", no_git)
    cache = RepoCache(plain / "cache")
    with pytest.raises(AnchorError) as raised:
        cache.files_at(Anchor(NOWHERE, COMMIT, "test"))
    assert raised.value.reason == "anchor.checkout-failed"
    assert "Could not resolve host: example.invalid" in str(raised.value)


def test_with_a_proxy_git_itself_decides(plain, monkeypatch):
    monkeypatch.setenv("https_proxy", "http://127.0.0.1:9")  # nothing listens there
    cache = RepoCache(plain / "cache")
    with pytest.raises(AnchorError) as raised:
        cache.files_at(Anchor(NOWHERE, COMMIT, "test"))
    assert raised.value.reason == "anchor.checkout-failed"
    assert "Could not resolve host" not in str(raised.value)  # git's own words instead
    assert any((plain / "cache" / "repos").glob("*.git"))  # git was asked, in a mirror
