"""The version setuptools-scm would give an anchored commit, from its tags (issue #26).

matplotlib-24637's `test_svg_default_metadata` failed because the image's matplotlib
reported the spec's `3.6`, which occurs in SVG coordinates; SWE-bench's git checkout
reports `3.6.x.devN+g<hash>`. The version is derived on the host from `git describe`
of a real (synthetic) repository; without a tag the spec's version is kept, with a
stable reason.
"""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from repo2rlenv.anchors.find import Anchor
from repo2rlenv.anchors.repos import RepoCache
from repo2rlenv.kinds.scm_version import (
    NO_REPOSITORY,
    NO_TAG,
    UNPARSED,
    ScmVersion,
    from_describe,
    next_version,
    pretend_version,
)
from repo2rlenv.kinds.swe_recipe import recipe_lines
from repo2rlenv.kinds.swe_specs import SweSpec

URL = "https://github.com/example/plots"


def _commit(repo: git.Repo, root: Path, n: int) -> str:
    (root / "plots.py").write_text(f"VERSION_MARK = {n}\n")
    repo.index.add(["plots.py"])
    return repo.index.commit(f"change {n}").hexsha


@pytest.fixture
def tagged(tmp_path: Path) -> tuple[Path, list[str]]:
    """A repository: commit 0 tagged v3.6.2, commits 1-3 after it, an untagged root
    history in another repository for the no-tag case."""
    root = tmp_path / "plots"
    root.mkdir()
    repo = git.Repo.init(root)
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "t").set_value("user", "email", "t@example.com")
    commits = [_commit(repo, root, 0)]
    repo.create_tag("v3.6.2", ref=commits[0])
    repo.create_tag("nightly", ref=commits[0])  # no digit: never matched
    commits += [_commit(repo, root, n) for n in (1, 2, 3)]
    return root, commits


@pytest.mark.timeout(60)
def test_the_version_is_the_tags_as_setuptools_scm_forms_it(tagged, tmp_path):
    root, commits = tagged
    cache = RepoCache(tmp_path / "cache", {URL: str(root)})
    after = cache.scm_version(Anchor(URL, commits[3], "test"))
    assert after.version == f"3.6.3.dev3+g{commits[3][:7]}"
    assert after.describe == f"v3.6.2-3-g{commits[3][:7]}"
    on_tag = cache.scm_version(Anchor(URL, commits[0], "test"))
    assert on_tag.version == "3.6.2" and on_tag.reason == ""


@pytest.mark.timeout(60)
def test_a_bare_snapshot_without_a_config_file_is_read_in_place(tagged, tmp_path):
    """The shape `fetch` gives a mirror (HEAD, objects, refs, no `config`): GitPython
    took it for a work tree's `.git` and ran git in its parent, where git found no
    repository; mining a real SymPy run ended in a BrokenPipeError."""
    root, commits = tagged
    snapshot = tmp_path / "snapshot"
    git.Repo.clone_from(root, snapshot, bare=True)
    (snapshot / "config").unlink()
    cache = RepoCache(tmp_path / "cache", {URL: str(snapshot)})
    found = cache.scm_version(Anchor(URL, commits[2], "test"))
    assert found.version == f"3.6.3.dev2+g{commits[2][:7]}"
    absent = RepoCache(tmp_path / "c2", {URL: str(snapshot)})
    assert absent.scm_version(Anchor(URL, "b" * 40, "test")).reason == NO_REPOSITORY


@pytest.mark.timeout(60)
def test_without_a_tag_the_reason_is_recorded(tmp_path):
    root = tmp_path / "bare"
    root.mkdir()
    repo = git.Repo.init(root)
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "t").set_value("user", "email", "t@example.com")
    commit = _commit(repo, root, 0)
    found = RepoCache(tmp_path / "cache", {URL: str(root)}).scm_version(Anchor(URL, commit, "t"))
    assert found.version is None and found.reason == NO_TAG and found.detail
    missing = RepoCache(tmp_path / "c2", {URL: str(root)}).scm_version(Anchor(URL, "b" * 40, "t"))
    assert missing.reason == NO_REPOSITORY
    option = RepoCache(tmp_path / "c3", {URL: str(root)}).scm_version(Anchor(URL, "--all", "t"))
    assert option.reason == NO_REPOSITORY


@pytest.mark.parametrize(
    ("describe", "version"),
    [
        ("v3.6.2-417-gabc1234", "3.6.3.dev417+gabc1234"),
        ("v3.6.0rc1-5-gabc1234", "3.6.0rc2.dev5+gabc1234"),
        ("v3.7.0.dev0-12-gabc1234", "3.7.0.dev12+gabc1234"),
        ("matplotlib-3.0.3-0-gabc1234", "3.0.3"),
        ("3.0-2-g0123abcd", "3.1.dev2+g0123abcd"),
        ("nightly-3-gabc1234", None),
        ("v3.6.2; rm -rf /-1-gabc1234", None),
        ("garbage", None),
    ],
)
def test_a_describe_line_is_read_as_setuptools_scms_default_scheme(describe, version):
    found = from_describe(describe)
    assert found.version == version
    if version is None:
        assert found.reason == UNPARSED


def test_the_next_version_raises_the_last_number():
    assert next_version("3.6.2") == "3.6.3"
    assert next_version("1.0rc9") == "1.0rc10"
    assert next_version("2.0.dev3") == "2.0"


def _spec() -> SweSpec:
    return SweSpec(
        repo="matplotlib/matplotlib",
        version="3.6",
        source="swebench 4.1.0",
        install="python -m pip install -e .",
    )


def test_the_recipe_gives_setuptools_scm_the_tags_version_or_says_why_not():
    scm = from_describe("v3.6.2-417-gabc1234")
    recipe = recipe_lines(_spec(), {}, "2022-12-01T00:00:00Z", "3.11", scm=scm)
    script = recipe.files["setup.sh"].decode()
    assert 'SETUPTOOLS_SCM_PRETEND_VERSION:-3.6.3.dev417+gabc1234}"' in script
    assert "setuptools-scm version: 3.6.3.dev417+gabc1234 (git describe: v3.6.2-417-" in (
        recipe.provenance
    )
    none = ScmVersion(reason=NO_TAG, detail="fatal: No names found")
    fallback = recipe_lines(_spec(), {}, "2022-12-01T00:00:00Z", "3.11", scm=none)
    assert 'SETUPTOOLS_SCM_PRETEND_VERSION:-3.6}"' in fallback.files["setup.sh"].decode()
    assert "setuptools-scm version: 3.6 (the spec's; scm.no-tag: fatal: No names found)" in (
        fallback.provenance
    )


def test_the_pretend_version_is_always_a_version():
    assert pretend_version("x; rm", None)[0] == "0.0"
    assert pretend_version("3.6", ScmVersion(version="3.6.3.dev1+gabc"))[0] == "3.6.3.dev1+gabc"
