"""Harbor registry datasets (issue 30 point 1, Harbor's side): dataset.toml names each
task with the digest Harbor's own packager computes (checked by `harbor sync`, which
recomputes them), and Harbor's CLI runs the dataset from a local registry file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from repo2rlenv.bundle import write_bundle
from repo2rlenv.cli import main
from repo2rlenv.examples import example_bundle
from repo2rlenv.publish.harbor_registry import (
    RegistryError,
    build_dataset,
    dataset_toml,
    task_digest,
    write_dataset,
)

REPO = Path(__file__).resolve().parents[1]
TASK = "example-qa-config"


def harbor_bin() -> str:
    candidate = os.environ.get("HARBOR_BIN") or str(REPO / ".venv-harbor" / "bin" / "harbor")
    if not Path(candidate).exists():
        pytest.skip(f"Harbor's CLI is not at {candidate} (set HARBOR_BIN; `make harbor`)")
    return candidate


def tasks(root: Path, base: str = "base:1", names: tuple[str, ...] = (TASK,)) -> list[Path]:
    return [write_bundle(example_bundle(name, base), root).path for name in names]


def test_digest_follows_harbors_selection(tmp_path):
    (task,) = tasks(tmp_path)
    digest = task_digest(task)
    (task / "environment/__pycache__").mkdir()
    (task / "environment/__pycache__/x.cpython-311.pyc").write_bytes(b"\0")
    (task / "tests/notes.txt~").write_text("backup")
    (task / "unlisted.txt").write_text("not a task file Harbor packages")
    assert task_digest(task) == digest
    (task / "environment/workspace/.env.example").write_text("A=1\n")
    assert task_digest(task) != digest


@pytest.mark.parametrize("extra", [".gitignore", "tests/.harborignore", "environment/link"])
def test_what_would_change_harbors_selection_is_refused(tmp_path, extra):
    (task,) = tasks(tmp_path)
    if extra.endswith("link"):
        (task / extra).symlink_to("Dockerfile")
    else:
        (task / extra).write_text("*.py\n")
    with pytest.raises(RegistryError):
        task_digest(task)


def test_dataset_is_stable_and_names_refused(tmp_path):
    found = tasks(tmp_path, names=(TASK, "example-repair-median"))
    one = build_dataset("acme/mined", found)
    assert one == build_dataset("acme/mined", list(reversed(found)))
    data = tomllib.loads(dataset_toml(one))
    assert data["dataset"]["name"] == "acme/mined"
    assert [t["name"] for t in data["tasks"]] == sorted(
        f"rlenv-harvest/{n}" for n in (TASK, "example-repair-median")
    )
    assert len(one.version) == 12
    with pytest.raises(RegistryError, match="org/name"):
        build_dataset("mined", found)
    with pytest.raises(RegistryError, match="already"):
        build_dataset("acme/mined", [*found, *tasks(tmp_path / "again")])


@pytest.mark.harbor
@pytest.mark.timeout(300)
def test_harbor_sync_recomputes_the_same_digests(tmp_path):
    """`harbor sync DIR` recomputes every task digest with Harbor's packager and writes
    dataset.toml back: an unchanged file means Harbor agrees byte for byte."""
    harbor = harbor_bin()
    found = tasks(tmp_path, names=(TASK, "example-repair-median"))
    (found[0] / "environment/workspace/.hidden").write_text("dotfiles count\n")
    (found[0] / "tests/__pycache__").mkdir()
    (found[0] / "tests/__pycache__/c.pyc").write_bytes(b"\0")
    manifest, _ = write_dataset(build_dataset("acme/mined", found), tmp_path)
    written = manifest.read_bytes()

    def sync() -> str:
        done = subprocess.run(
            [harbor, "sync", str(tmp_path)], capture_output=True, text=True, timeout=240
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        return done.stdout

    assert "Updated 0 digest(s)" in sync()
    assert manifest.read_bytes() == written
    # And the check can fail: a task edited after the manifest was written.
    (found[1] / "instruction.md").write_text("changed\n")
    assert "Updated 1 digest(s)" in sync()
    assert manifest.read_bytes() != written


@pytest.mark.harbor
@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_harbor_runs_the_dataset_from_a_local_registry(tmp_path, base_image):
    """`repo2rlenv push --to harbor:...` then Harbor's CLI: `harbor run -d NAME@VERSION
    --registry-path registry.json`, oracle 1.0 and nop 0.0. As in the conformance test,
    the task says `network_mode = "public"`: Harbor's no-network sidecar image cannot be
    pulled on an air-gapped machine."""
    harbor = harbor_bin()
    if shutil.which("docker") is None:
        pytest.skip("no docker client on PATH")
    if subprocess.run(["docker", "image", "inspect", base_image], capture_output=True).returncode:
        pytest.skip(f"base image {base_image} is absent (repo2rlenv setup builds it)")
    (task,) = tasks(tmp_path / "tasks", base_image)
    config = task / "task.toml"
    config.write_text(config.read_text().replace('"no-network"', '"public"'))
    out = tmp_path / "published"
    args = ["push", str(tmp_path / "tasks"), "--to", "harbor:acme/mined", "--out", str(out)]
    assert main([*args, "--include-unverified", "--local-base", "keep"]) == 0
    registry = out / "registry.json"
    (spec,) = json.loads(registry.read_text())
    assert spec["name"] == "mined" and [t["path"] for t in spec["tasks"]] == [str(out / TASK)]

    def rewards(agent: str) -> dict[str, float]:
        jobs = tmp_path / agent
        done = subprocess.run(
            [
                harbor,
                "run",
                "-d",
                f"mined@{spec['version']}",
                "--registry-path",
                str(registry),
                "-a",
                agent,
                "-y",
                "-o",
                str(jobs),
            ],
            capture_output=True,
            text=True,
            timeout=400,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        found = {}
        for result in jobs.glob("*/*/result.json"):
            data = json.loads(result.read_text())
            assert data.get("exception_info") is None, data["exception_info"]
            assert data["source"] == "mined"
            found[data["task_name"]] = data["verifier_result"]["rewards"]["reward"]
        return found

    assert rewards("oracle") == {f"rlenv-harvest/{TASK}": 1.0}
    assert rewards("nop") == {f"rlenv-harvest/{TASK}": 0.0}


def _push(root: Path, out: Path, *extra: str) -> int:
    return main(["push", str(root), "--to", "harbor:acme/mined", "--out", str(out), *extra])


def _bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}  # fmt: skip


def test_harbor_push_holds_back_and_rewrites_only_the_published_copy(tmp_path, capsys):
    """The selection of a Hub push, on Harbor's side: unverified and offline-based tasks
    are held back with their reason codes; `--local-base rewrite` rewrites the copy in
    --out, which registry.json and the digests name, and never the mined folder."""
    from repo2rlenv.settings import OFFLINE_BASE_IMAGE

    root, out = tmp_path / "tasks", tmp_path / "published"
    (task,) = tasks(root, OFFLINE_BASE_IMAGE)
    mined = _bytes(root)
    assert _push(root, out) == 2
    assert "publish.not-verified: 1 task(s) held back" in capsys.readouterr().err
    assert _push(root, out, "--include-unverified") == 2
    assert "env.local-only-base: 1 task(s) held back" in capsys.readouterr().err
    assert not out.exists()
    assert _push(root, out, "--include-unverified", "--local-base", "rewrite") == 0
    assert _bytes(root) == mined  # publishing never modifies the mined folder
    copy = out / TASK
    assert OFFLINE_BASE_IMAGE not in (copy / "environment/Dockerfile").read_text()
    assert (copy / "solution/solve.sh").stat().st_mode & 0o111  # executable bits kept
    data = tomllib.loads((out / "dataset.toml").read_text())
    assert data["tasks"] == [{"name": f"rlenv-harvest/{TASK}", "digest": task_digest(copy)}]
    assert task_digest(copy) != task_digest(task)
    (spec,) = json.loads((out / "registry.json").read_text())
    assert [t["path"] for t in spec["tasks"]] == [str(copy.resolve())]
    # a rerun into the same folder writes the same bytes; a pinned version is kept
    first = _bytes(out)
    assert _push(root, out, "--include-unverified", "--local-base", "rewrite") == 0
    assert _bytes(out) == first
    args = ["push", str(root), "--to", "harbor:acme/mined@1.0", "--out", str(out)]
    assert main([*args, "--include-unverified", "--local-base", "rewrite"]) == 0
    assert tomllib.loads((out / "dataset.toml").read_text())["dataset"]["version"] == "1.0"
    # kept on the offline base: Harbor's compose build cannot make an absent one, and the
    # push says what can; a rewritten copy needs nothing of this machine
    capsys.readouterr()
    assert _push(root, tmp_path / "kept", "--include-unverified", "--local-base", "keep") == 0
    said = " ".join(capsys.readouterr().err.split())
    assert "1 task(s) start FROM a base only this machine builds" in said
    assert f"repo2rlenv setup --tasks {tmp_path / 'kept'}" in said
    assert _push(root, out, "--include-unverified", "--local-base", "rewrite") == 0
    assert "only this machine builds" not in capsys.readouterr().err


def test_harbor_push_holds_back_what_the_licence_does_not_allow(tmp_path, capsys):
    root, out = tmp_path / "tasks", tmp_path / "published"
    found = tasks(root, names=(TASK, "example-repair-median"))
    for task, licence in zip(found, ('"cc-by-nd-4.0"', '"my-own-terms"'), strict=True):
        config = task / "task.toml"
        config.write_text(config.read_text().replace('"Apache-2.0"', licence))
    assert _push(root, out, "--include-unverified") == 2
    said = " ".join(capsys.readouterr().err.split())  # a COLUMNS in the environment folds it
    assert "publish.licence-forbids: 1 task(s) held back, e.g. example-qa-config" in said, said
    assert "publish.licence-unknown: 1 task(s) held back, e.g. example-repair-median" in said
    assert _push(root, out, "--include-unverified", "--include-unknown-licence") == 0
    (spec,) = json.loads((out / "registry.json").read_text())
    assert [t["name"] for t in spec["tasks"]] == ["rlenv-harvest/example-repair-median"]


@pytest.mark.parametrize("where", ["inside", "same", "foreign"])
def test_harbor_push_refuses_an_out_folder_it_could_harm(tmp_path, capsys, where):
    root = tmp_path / "tasks"
    tasks(root)
    out = {"inside": root / "out", "same": root, "foreign": tmp_path / "mine"}[where]
    if where == "foreign":
        out.mkdir()
        (out / "notes.txt").write_text("not a push\n")
    before = _bytes(tmp_path)
    assert _push(root, out, "--include-unverified") == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert _bytes(tmp_path) == before
