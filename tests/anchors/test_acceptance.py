"""Acceptance for issue 9: sessions in three formats that worked inside real git
repositories made here give repair and extend tasks that our validator and Harbor's own
oracle/nop agents prove, and whose images hold no history past the start commit.

The mining itself needs no Docker and runs in the quick suite; the proofs are `slow`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import git
import pytest

from repo2rlenv.cli import main
from tests.anchors.fixtures import (
    LEAK_MARKER,
    MIT,
    README_DIFF,
    Repo,
    make_repos,
    write_repo_map,
    write_sessions,
)
from tests.test_harbor_conformance import assert_oracle_1_nop_0, harbor  # noqa: F401

PTH = "rlenv-workspace.pth"
# Runs inside the task's own image: what a policy could find there about the future.
PROBE = r"""
import hashlib, json, os, subprocess
root = "/workspace"
blobs, gits, hits = {}, [], []
for top in ("/workspace", "/root", "/tmp", "/home", "/opt", "/srv"):
    for folder, dirs, files in os.walk(top):
        gits += [os.path.join(folder, d) for d in dirs if d == ".git"]
        for name in files:
            path = os.path.join(folder, name)
            data = open(path, "rb").read()
            if MARKER.encode() in data or FIX.encode() in data:
                hits.append(path)
            if folder.startswith(root):
                blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                blobs[os.path.relpath(path, root)] = blob
log = subprocess.run(["git", "-C", root, "log", "--all", "--oneline"], capture_output=True)
obj = subprocess.run(["git", "-C", root, "cat-file", "-e", FIX], capture_output=True)
imports = subprocess.run(["python3", "-I", "-c", "import inventory.stock"], cwd="/",
                         capture_output=True)
print(json.dumps({"blobs": blobs, "git_dirs": gits, "hits": hits, "log_rc": log.returncode,
                  "object_rc": obj.returncode, "imports_inventory": imports.returncode == 0}))
"""


@pytest.fixture(scope="module")
def mined(tmp_path_factory, base_image) -> dict:
    where = tmp_path_factory.mktemp("anchored")
    repos = make_repos(where / "repos")
    write_sessions(repos, where / "sessions")
    out = where / "out"
    args = ["mine", "-q", "--no-validate", "--dataset", str(where / "sessions"), "--out"]
    args += [str(out), "--base-image", base_image, "--json", str(where / "yield.json")]
    args += ["--repo-map", str(write_repo_map(repos, where / "repos.json"))]
    args += ["--repo-cache", str(where / "cache")]
    assert main(args) == 0
    tasks = {p.parent.name: p.parent for p in sorted(out.glob("*/*/task.toml"))}
    return {
        "repos": repos,
        "out": out,
        "tasks": tasks,
        "where": where,
        "yield": json.loads((where / "yield.json").read_text()),
    }


def _source(task: Path) -> dict:
    import tomllib

    return tomllib.loads((task / "task.toml").read_text())["metadata"]["repo2rlenv"]["source"]


def _tree(repo: Repo) -> dict[str, str]:
    listing = git.Repo(repo.path).git.ls_tree("-r", repo.start)
    return {line.split("\t")[1]: line.split()[2] for line in listing.splitlines()}


def _blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _workspace(task: Path) -> dict[str, bytes]:
    root = task / "environment" / "workspace"
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_three_formats_give_anchored_repair_and_extend_tasks(mined):
    report = mined["yield"]
    assert report["emitted_by_kind"] == {"repair": 2, "extend": 2}
    assert report["anchored"]["emitted_by_kind"] == {"repair": 2, "extend": 2}
    assert report["emitted_by_format"] == {"codex": 2, "atif-v1.6": 1, "claude-code": 1}
    assert report["anchored"]["emitted_by_anchor_source"] == {
        "codex.git": 2,
        "trajectory.extra": 1,
        "command:git rev-parse HEAD + git remote -v + uncommitted: git diff": 1,
    }
    repos = mined["repos"]
    by_record = {}
    for task in mined["tasks"].values():
        source = _source(task)
        by_record.setdefault(source["record_id"], []).append(task.parent.name)
        repo = repos["calc" if "calc" in source["record_id"] else "inventory"]
        assert (source["repository"], source["commit"]) == (repo.url, repo.start)
        assert source["license"] == ("MIT" if repo is repos["calc"] else "none-found")
        every_file = [p for p in task.rglob("*") if p.is_file()]
        assert not any(".git" in p.relative_to(task).parts for p in every_file)
        assert not any(LEAK_MARKER.encode() in p.read_bytes() for p in every_file)
        assert not any(repo.fix.encode() in p.read_bytes() for p in every_file)
        dockerfile = (task / "environment" / "Dockerfile").read_text()
        assert (PTH in dockerfile) == (repo is repos["inventory"])  # pip install -e . seen
    assert sorted(map(sorted, by_record.values())) == [["extend"], ["extend", "repair"], ["repair"]]


def test_repair_start_states_are_the_commit_plus_the_printed_diff(mined):
    repos = mined["repos"]
    for name, task in mined["tasks"].items():
        if not name.startswith("repair-"):
            continue
        files = _workspace(task)
        repo = repos["calc" if "calc" in name else "inventory"]
        expected = _tree(repo)
        if repo is repos["inventory"]:  # the session showed an uncommitted README edit
            assert files["README.md"].decode() == "# inventory\n\nTrack stock levels per item.\n"
            assert "Track stock levels" in README_DIFF
            expected["README.md"] = _blob(files["README.md"])
        else:
            assert files["LICENSE"].decode() == MIT
        assert {p: _blob(d) for p, d in files.items()} == expected


def _validate_anchored(tasks: list[Path], reruns: int, tmp_path: Path) -> None:
    """`repo2rlenv validate` on these task folders: each verified, its reference 1.0 and
    its untouched start 0.0 on every rerun."""
    report = tmp_path / "validate.json"
    args = ["validate", *map(str, tasks), "--reruns", str(reruns), "-j", "2"]
    assert main([*args, "--json", str(report)]) == 0
    data = json.loads(report.read_text())
    assert {t["task_id"] for t in data["tasks"]} == {task.name for task in tasks}
    labels = [f"-rerun-{i}" for i in range(1, reruns + 1)]
    for task in data["tasks"]:
        assert task["label"]["status"] == "verified", task["findings"]
        rewards = {t["label"]: t["reward"] for t in task["trials"]}
        assert [rewards[f"reference{s}"] for s in ("", *labels)] == [1.0] * (reruns + 1)
        assert [rewards[f"noop{s}"] for s in ("", *labels)] == [0.0] * (reruns + 1)


@pytest.mark.slow
@pytest.mark.docker
def test_validate_proves_an_anchored_task_of_each_kind(mined, docker_ready, tmp_path):
    """One repair (the calc repository) and one extend (inventory, installed with `pip
    install -e .`), one rerun each: every task and two reruns in the extended test."""
    tasks = mined["tasks"]
    repair = next(tasks[n] for n in sorted(tasks) if n.startswith("repair-") and "calc" in n)
    extend = next(tasks[n] for n in sorted(tasks) if n.startswith("extend-") and "calc" not in n)
    _validate_anchored([repair, extend], 1, tmp_path)


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.extended
def test_validate_proves_every_anchored_task(mined, docker_ready, tmp_path):
    assert len(mined["tasks"]) == 4
    _validate_anchored(list(mined["tasks"].values()), 2, tmp_path)


@pytest.mark.slow
@pytest.mark.docker
def test_task_images_hold_no_history_past_the_start(mined, docker_ready):
    import docker

    client = docker.from_env(timeout=300)
    repos = mined["repos"]
    for name, task in mined["tasks"].items():
        repo = repos["calc" if "calc" in name else "inventory"]
        tag = f"rlenv-test-history:{hashlib.sha256(name.encode()).hexdigest()[:12]}"
        script = f"MARKER = {LEAK_MARKER!r}\nFIX = {repo.fix!r}\n" + PROBE
        client.images.build(path=str(task / "environment"), tag=tag, rm=True, forcerm=True)
        try:
            output = client.containers.run(
                tag, ["python3", "-c", script], remove=True, network_disabled=True
            )
        finally:
            client.images.remove(tag, force=True)
        seen = json.loads(output.decode().strip().splitlines()[-1])
        assert seen["git_dirs"] == [] and seen["hits"] == []
        assert seen["log_rc"] != 0 and seen["object_rc"] != 0  # no repository at all
        assert seen["blobs"] == {p: _blob(d) for p, d in _workspace(task).items()}
        assert seen["imports_inventory"] == (repo is repos["inventory"])
        if name.startswith("repair-codex"):  # a clean checkout: exactly the start tree
            assert seen["blobs"] == _tree(repo)


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.harbor
@pytest.mark.extended  # the same writer's output is Harbor-checked in test_harbor_conformance
def test_harbor_lints_and_scores_the_anchored_tasks(mined, harbor, docker_ready, tmp_path):  # noqa: F811
    tasks = [str(p) for p in mined["tasks"].values()]
    lint = subprocess.run(
        [harbor, "lint", "--json", *tasks], capture_output=True, text=True, timeout=300
    )
    assert lint.returncode == 0 and json.loads(lint.stdout) == [], lint.stdout + lint.stderr
    runnable = tmp_path / "runnable"
    for name, task in mined["tasks"].items():
        shutil.copytree(task, runnable / name)
        config = runnable / name / "task.toml"
        text = config.read_text()
        assert 'network_mode = "no-network"' in text
        config.write_text(text.replace('network_mode = "no-network"', 'network_mode = "public"'))
    names = set(mined["tasks"])
    assert_oracle_1_nop_0(harbor, runnable, names, tmp_path / "jobs")
