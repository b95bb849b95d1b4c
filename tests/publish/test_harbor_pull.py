"""`pull harbor:ORG/NAME --registry PATH`: the Harbor registry dataset a `push --to
harbor:` wrote comes back as a task folder, byte for byte, every task checked against
the digest its dataset.toml lists; a tampered, foreign or mislabelled folder is one line
and exit 2, with nothing left at --out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo2rlenv.cli import main
from tests.test_harbor_registry import TASK, _bytes, tasks

pytestmark = pytest.mark.timeout(60)
OTHER = "example-repair-median"


@pytest.fixture
def published(tmp_path: Path) -> Path:
    root, out = tmp_path / "tasks", tmp_path / "published"
    tasks(root, names=(TASK, OTHER))
    args = ["push", str(root), "--to", "harbor:acme/mined@1.0", "--out", str(out)]
    assert main([*args, "--include-unverified"]) == 0
    return out


def _pull(source: str, registry: Path | None, out: Path) -> int:
    extra = ["--registry", str(registry)] if registry is not None else []
    return main(["pull", source, "--out", str(out), *extra])


@pytest.mark.parametrize("given", ["registry.json", "dataset.toml", "."])
def test_a_harbor_push_pulls_back_byte_for_byte(published, tmp_path, given) -> None:
    out = tmp_path / "pulled"
    assert _pull("harbor:acme/mined@1.0", published / given, out) == 0
    pushed, pulled = _bytes(published), _bytes(out)
    assert set(pulled) == set(pushed) - {"registry.json"}  # its paths name the push's folder
    assert all(pulled[name] == pushed[name] for name in pulled)
    mined = _bytes(tmp_path / "tasks")
    for task in (TASK, OTHER):
        assert {k: v for k, v in pulled.items() if k.startswith(f"{task}/")} == {
            k: v for k, v in mined.items() if k.startswith(f"{task}/")
        }
    assert (out / TASK / "solution/solve.sh").stat().st_mode & 0o111


def _refused(capsys, source: str, registry: Path | None, out: Path, code: str) -> None:
    assert _pull(source, registry, out) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and code in lines[0], lines
    assert not out.exists() and not list(out.parent.glob(f".{out.name}.*"))


def test_a_tampered_task_is_refused(published, tmp_path, capsys) -> None:
    (published / OTHER / "instruction.md").write_text("Do something else.\n")
    _refused(capsys, "harbor:acme/mined", published, tmp_path / "p", "publish.digest-mismatch")


def test_a_task_the_dataset_does_not_list_is_refused(published, tmp_path, capsys) -> None:
    toml = published / "dataset.toml"
    kept = [line for line in toml.read_text().split("\n\n") if OTHER not in line]
    toml.write_text("\n\n".join(kept))
    _refused(capsys, "harbor:acme/mined", published, tmp_path / "p", "publish.not-a-task-set")


def test_a_manifest_path_outside_the_folder_is_refused(published, tmp_path, capsys) -> None:
    manifest = published / "manifest.jsonl"
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    rows[0]["path"] = "../tasks/" + rows[0]["path"]
    manifest.write_text("".join(json.dumps(row) + "\n" for row in rows))
    _refused(capsys, "harbor:acme/mined", published, tmp_path / "p", "publish.unsafe-path")


def test_the_named_dataset_must_be_the_one_there(published, tmp_path, capsys) -> None:
    for source in ("harbor:acme/other", "harbor:acme/mined@2.0"):
        _refused(capsys, source, published, tmp_path / "p", "publish.wrong-dataset")


def test_a_folder_push_did_not_write_is_refused(tmp_path, capsys) -> None:
    (tmp_path / "foreign").mkdir()
    _refused(capsys, "harbor:acme/mined", tmp_path / "foreign", tmp_path / "p",
             "publish.not-a-task-set")  # fmt: skip
    _refused(capsys, "harbor:acme/mined", None, tmp_path / "p", "--registry")


def test_a_task_rewritten_to_the_portable_base_comes_back_as_published(tmp_path) -> None:
    from repo2rlenv.settings import OFFLINE_BASE_IMAGE

    root, published, out = tmp_path / "tasks", tmp_path / "published", tmp_path / "pulled"
    tasks(root, OFFLINE_BASE_IMAGE)
    args = ["push", str(root), "--to", "harbor:acme/mined", "--out", str(published)]
    assert main([*args, "--include-unverified", "--local-base", "rewrite"]) == 0
    assert _pull("harbor:acme/mined", published / "dataset.toml", out) == 0
    dockerfile = (out / TASK / "environment/Dockerfile").read_text()
    assert OFFLINE_BASE_IMAGE not in dockerfile
    assert dockerfile == (published / TASK / "environment/Dockerfile").read_text()
