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
    """`repo2rlenv registry` then Harbor's CLI: `harbor run -d NAME@VERSION
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
    args = ["registry", str(tmp_path / "tasks"), "--name", "acme/mined", "--unverified"]
    assert main([*args, "--local-base", "keep"]) == 0
    registry = tmp_path / "tasks" / "registry.json"
    (spec,) = json.loads(registry.read_text())
    assert spec["name"] == "mined" and [t["path"] for t in spec["tasks"]] == [str(task)]

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


def test_registry_command_holds_back_and_rewrites(tmp_path, capsys):
    from repo2rlenv.settings import OFFLINE_BASE_IMAGE

    root = tmp_path / "tasks"
    (task,) = tasks(root, OFFLINE_BASE_IMAGE)
    args = ["registry", str(root), "--name", "acme/mined"]
    assert main(args) == 2
    assert "held back 1 task(s): label.unverified" in capsys.readouterr().err
    assert main([*args, "--unverified"]) == 2
    assert "held back 1 task(s): env.local-only-base" in capsys.readouterr().err
    assert not (root / "dataset.toml").exists()
    assert main([*args, "--unverified", "--local-base", "rewrite", "--version", "1.0"]) == 0
    assert OFFLINE_BASE_IMAGE not in (task / "environment/Dockerfile").read_text()
    data = tomllib.loads((root / "dataset.toml").read_text())
    assert data["dataset"]["version"] == "1.0"
    assert data["tasks"] == [{"name": f"rlenv-harvest/{TASK}", "digest": task_digest(task)}]
