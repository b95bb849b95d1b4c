"""Sessions inside existing repositories, with real git repositories made in the test."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from repo2rlenv.anchors.dirty import local_state
from repo2rlenv.anchors.find import find_anchor, normalise_url
from repo2rlenv.anchors.repos import AnchorError, RepoCache
from repo2rlenv.emit import Draft, Skip
from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline
from tests.mining.factory import ROOT, SessionBuilder

URL = "https://github.com/example/calc"
CALC_BUGGY = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return add(x, x)\n"
TESTS = (
    "from calc import add, double\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_double():\n    assert double(4) == 8\n"
)


@pytest.fixture
def repo(tmp_path) -> tuple[Path, str]:
    path = tmp_path / "calc"
    repository = git.Repo.init(path)
    for rel, text in {
        "calc.py": CALC_BUGGY,
        "test_calc.py": TESTS,
        "README.md": "# calc\n",
        "docs/notes.txt": "never read\n",
    }.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    repository.index.add(["calc.py", "test_calc.py", "README.md", "docs/notes.txt"])
    actor = git.Actor("t", "t@example.com")
    first = repository.index.commit("start", author=actor, committer=actor)
    (path / "calc.py").write_text(CALC_BUGGY.replace("a - b", "a + b"))
    repository.index.add(["calc.py"])
    repository.index.commit("the fix, which must never leak", author=actor, committer=actor)
    return path, first.hexsha


def session(commit: str, *, read: str | None = None, status: str = "") -> SessionBuilder:
    builder = SessionBuilder()
    if status:
        builder.run("git status", status)
    if read is not None:
        builder.read(f"{ROOT}/calc.py", read)
    return (
        builder.user("the tests fail, fix add")
        .run("python -m pytest -q", "F.\n1 failed, 1 passed in 0.01s", 1)
        .edit(f"{ROOT}/calc.py", "return a - b", "return a + b")
        .run("python -m pytest -q", "..\n2 passed in 0.01s", 0)
    )


def pipeline(tmp_path: Path, repo_path: Path) -> SessionPipeline:
    mapping = tmp_path / "repos.json"
    mapping.write_text(json.dumps({URL + ".git": str(repo_path)}))
    options = MineOptions(
        dataset="anchored",
        validate_tasks=False,
        base_image="img:1",
        repo_map=mapping,
        repo_cache=tmp_path / "cache",
    )
    return SessionPipeline(options, runtime=None)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@github.com:example/calc.git", URL),
        ("https://github.com/example/calc/", URL),
        ("https://user:tok@github.com/example/calc.git", URL),
        ("example/calc", URL),
        ("ssh://git@github.com/example/calc", URL),
    ],
)
def test_urls_normalise(url, expected):
    assert normalise_url(url) == expected


def test_anchor_from_harness_record_and_from_printed_commands():
    sha = "a" * 40
    recorded = SessionBuilder().user("x").build(git={"repository_url": URL, "commit_hash": sha})
    assert find_anchor(recorded).found_by == "test.git"
    printed = (
        SessionBuilder()
        .user("x")
        .run("git rev-parse HEAD", sha + "\n")
        .run("git remote -v", "origin\tgit@github.com:example/calc.git (fetch)\n")
        .build()
    )
    anchor = find_anchor(printed)
    assert (anchor.url, anchor.commit) == (URL, sha)
    assert anchor.found_by == "command:git rev-parse HEAD + git remote -v"
    assert find_anchor(SessionBuilder().user("x").build()) is None


def test_repair_from_a_checkout_without_history(repo, tmp_path):
    path, commit = repo
    parsed = session(commit).build(git={"repository_url": URL, "commit_hash": commit})
    events = pipeline(tmp_path, path).session_events(parsed, "s1", None)
    drafts = [e for e in events if isinstance(e, Draft) and e.kind == "repair"]
    assert len(drafts) == 1
    files = {f.path: f.content.decode() for f in drafts[0].bundle.files}
    assert files["environment/workspace/calc.py"] == CALC_BUGGY  # edited but never read
    assert files["environment/workspace/docs/notes.txt"] == "never read\n"
    assert not any("/.git" in p or p.endswith(".git") for p in files)
    assert "a + b" in files["solution/solve.sh"]
    source = drafts[0].bundle.config.metadata.repo2rlenv.source
    assert (source.repository, source.commit, source.anchor_found_by) == (URL, commit, "test.git")


def test_wrong_anchor_is_detected_by_a_full_read(repo, tmp_path):
    path, commit = repo
    parsed = session(commit, read="def add(a, b):\n    return 0\n").build(
        git={"repository_url": URL, "commit_hash": commit}
    )
    (event,) = pipeline(tmp_path, path).session_events(parsed, "s2", None)
    assert isinstance(event, Skip) and event.reason == "anchor.read-mismatch"


def test_uncommitted_changes_and_unreachable_repos_are_skipped(repo, tmp_path):
    path, commit = repo
    dirty = session(commit, status="On branch main\n\tmodified:   calc.py\n").build(
        git={"repository_url": URL, "commit_hash": commit}
    )
    assert local_state(dirty).modified == {"calc.py"}
    (event,) = pipeline(tmp_path, path).session_events(dirty, "s3", None)
    assert event.reason == "anchor.uncommitted-changes"
    elsewhere = session(commit).build(
        git={"repository_url": "https://example.invalid/x/y", "commit_hash": commit}
    )
    (event,) = pipeline(tmp_path, path).session_events(elsewhere, "s4", None)
    assert event.reason == "anchor.checkout-failed"


def test_mirror_is_cached_and_shared(repo, tmp_path):
    path, commit = repo
    cache = RepoCache(tmp_path / "cache", {URL: str(path)})
    from repo2rlenv.anchors.find import Anchor

    anchor = Anchor(URL, commit, "test")
    assert cache.files_at(anchor)["calc.py"] == CALC_BUGGY
    mirrors = list((tmp_path / "cache" / "repos").glob("*.git"))
    assert len(mirrors) == 1
    git.rmtree(path)  # the source is gone; the cached mirror still answers
    assert RepoCache(tmp_path / "cache", {URL: str(path)}).files_at(anchor)["test_calc.py"] == TESTS
    with pytest.raises(AnchorError):
        RepoCache(tmp_path / "cache", {}).files_at(Anchor(URL, "b" * 40, "test"))


@pytest.mark.docker
def test_anchored_repair_is_verified_in_docker(repo, tmp_path, docker_ready):
    from repo2rlenv.bundle import write_bundle
    from repo2rlenv.runtime import DockerRuntime
    from repo2rlenv.validate import ValidateOptions, validate_one
    from repo2rlenv.validate.runner import SilentProgress

    path, commit = repo
    parsed = session(commit).build(git={"repository_url": URL, "commit_hash": commit})
    pipe = pipeline(tmp_path, path)
    pipe.options.base_image = docker_ready
    (draft,) = [
        e
        for e in pipe.session_events(parsed, "s5", None)
        if isinstance(e, Draft) and e.kind == "repair"
    ]
    task = write_bundle(draft.bundle, tmp_path / "out").path
    report = validate_one(task, ValidateOptions(reruns=0), DockerRuntime(), None, SilentProgress())
    assert report.valid, [f.rule_id for f in report.findings]
    assert report.label.status == "verified"


def test_mine_cli_with_repo_map_on_a_claude_session(repo, tmp_path, capsys):
    from repo2rlenv.cli import main
    from repo2rlenv.examples.renderers.claude_code import claude_code

    path, commit = repo
    story = [
        ("user", "The tests fail. Please fix add() in calc.py."),
        ("run", "git rev-parse HEAD", commit + "\n", 0),
        (
            "run",
            "git remote -v",
            "origin\tgit@github.com:example/calc.git (fetch)\n"
            "origin\tgit@github.com:example/calc.git (push)\n",
            0,
        ),
        ("run", "python -m pytest -q", "F.\n1 failed, 1 passed in 0.01s\n", 1),
        ("edit", "calc.py", "return a - b", "return a + b"),
        ("run", "python -m pytest -q", "..\n2 passed in 0.01s\n", 0),
        ("say", "Fixed: add() subtracted."),
    ]
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "calc.jsonl").write_text(claude_code("calc", story))
    mapping = tmp_path / "repos.toml"
    mapping.write_text(f'"{URL}" = "{path}"\n')
    report = tmp_path / "yield.json"
    assert (
        main(
            [
                "mine",
                "-q",
                "--no-validate",
                "--dataset",
                str(sessions),
                "--out",
                str(tmp_path / "out"),
                "--repo-map",
                str(mapping),
                "--repo-cache",
                str(tmp_path / "cache"),
                "--json",
                str(report),
            ]
        )
        == 0
    )
    assert json.loads(report.read_text())["emitted_by_kind"] == {"repair": 1}
    (task,) = (tmp_path / "out" / "repair").iterdir()
    assert (task / "environment/workspace/docs/notes.txt").read_text() == "never read\n"
    toml = (task / "task.toml").read_text()
    assert 'anchor_found_by = "command:git rev-parse HEAD + git remote -v"' in toml


def test_licence_is_recorded_and_anchoring_counted(repo, tmp_path):
    from repo2rlenv.anchors.repos import detect_licence
    from repo2rlenv.emit import YieldReport

    assert (
        detect_licence(
            {
                "LICENSE": "MIT License\n\nPermission is hereby granted, free of "
                "charge, to any person"
            }
        )
        == "MIT"
    )
    assert detect_licence({"src/LICENSE": "x", "a.py": ""}) == "none-found"
    path, commit = repo
    parsed = session(commit).build(git={"repository_url": URL, "commit_hash": commit})
    report = YieldReport("sessions")
    for event in pipeline(tmp_path, path).session_events(parsed, "s6", None):
        report.count(event)
    data = report.to_dict()
    assert data["anchored"]["emitted_by_anchor_source"] == {"test.git": 1}
    assert data["anchored"]["emitted_by_kind"] == {"repair": 1}
    assert data["not_anchored_emitted_by_kind"] == {}
    draft = next(
        e
        for e in pipeline(tmp_path, path).session_events(parsed, "s6", None)
        if isinstance(e, Draft)
    )
    assert draft.bundle.config.metadata.repo2rlenv.source.license == "none-found"


def test_language_other_than_python_or_node_is_skipped(tmp_path):
    path = tmp_path / "web"
    repository = git.Repo.init(path)
    (path / "main.go").write_text("package main\n")
    repository.index.add(["main.go"])
    actor = git.Actor("t", "t@example.com")
    commit = repository.index.commit("js", author=actor, committer=actor).hexsha
    parsed = session(commit).build(git={"repository_url": URL, "commit_hash": commit})
    (event,) = pipeline(tmp_path, path).session_events(parsed, "d4", None)
    assert event.reason == "anchor.language-unsupported"


def test_repository_size_limit_is_a_setting(repo, tmp_path, monkeypatch):
    """The checkout limit comes from the settings file, an option overrides it, and the
    default admits a Django-sized repository (about 6,500 files)."""
    from repo2rlenv.anchors.find import Anchor
    from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline
    from repo2rlenv.settings import load_settings

    path, commit = repo
    anchor = Anchor(URL, commit, "test")
    with pytest.raises(AnchorError) as raised:
        RepoCache(tmp_path / "cache", {URL: str(path)}, max_files=1).files_at(anchor)
    assert raised.value.reason == "anchor.repo-too-large"
    assert RepoCache(tmp_path / "cache", {URL: str(path)}, max_bytes=10**6).files_at(anchor)

    config = tmp_path / "settings.toml"
    config.write_text("max_repo_files = 2\n")
    monkeypatch.setenv("REPO2RLENV_CONFIG", str(config))
    monkeypatch.delenv("REPO2RLENV_BASE_IMAGE", raising=False)
    options = {"dataset": "runs", "base_image": "img:1", "repo_cache": tmp_path / "cache"}
    assert SessionPipeline(MineOptions(**options), runtime=None).repos.max_files == 2
    overridden = MineOptions(**options, max_repo_files=9000)
    assert SessionPipeline(overridden, runtime=None).repos.max_files == 9000
    config.unlink()
    assert load_settings().max_repo_files >= 10_000 and load_settings().max_repo_bytes >= 10**8


@pytest.mark.timeout(60)
def test_text_files_at_another_commit(repo, tmp_path):
    """A spec's environment file is read at the instance's `environment_setup_commit`,
    a commit other than the anchor's, fetched into the mirror as the anchor's is."""
    from repo2rlenv.anchors.find import Anchor

    path, commit = repo
    work = git.Repo(path)
    (path / "environment.yml").write_text("dependencies: [numpy]\n")
    work.index.add(["environment.yml"])
    later = work.index.commit("env").hexsha
    cache = RepoCache(tmp_path / "cache", {URL: str(path)})
    anchor = Anchor(URL, commit, "test")
    assert "environment.yml" not in cache.files_at(anchor)
    wanted = ("environment.yml", "absent.yml")
    assert cache.text_files_at(anchor, later, wanted) == {
        "environment.yml": "dependencies: [numpy]\n"
    }
    assert cache.text_files_at(anchor, "--upload-pack=x", wanted) == {}
    assert cache.text_files_at(anchor, "c" * 40, wanted) == {}
