"""A push of more than `SINGLE_COMMIT_FILES` files commits `manifest.jsonl` last, so an
interrupted push leaves a dataset `pull` refuses rather than a mix of two pushes, and
the same push run again skips what was committed and ends with the files of an
uninterrupted push (the Hub double refuses commits after the first: the interruption)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from repo2rlenv.manifest import write_manifest
from repo2rlenv.publish.hub_push import SINGLE_COMMIT_FILES, staged_files
from tests.hub_double import WritableHub, hub_double
from tests.publish.test_hub_push import _cli, _task, _tree

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def hub() -> Iterator[WritableHub]:
    with hub_double() as double:
        yield double


def _mined(root: Path, count: int) -> Path:
    for number in range(count):
        _task(root, f"task-{number}", licence="mit")
    write_manifest(root)
    return root


@pytest.mark.parametrize(
    "count",
    [4, 30],  # cut between the tasks and the manifest; cut inside the client's batches
)
def test_an_interrupted_large_push_resumes_to_the_same_dataset(hub, tmp_path, count) -> None:
    mined = _mined(tmp_path / "mined", count)
    assert staged_files(mined) > SINGLE_COMMIT_FILES  # the two-step push, not one commit
    hub.refuse_commits_after = 1  # the first commit goes in, the next is refused
    cut = _cli(hub.url, tmp_path, "push", str(mined), "--to", "someone/big")
    # one error line (the client's own warnings, "Retrying in smaller chunks", may precede it)
    errors = [line for line in cut.stderr.splitlines() if line.startswith("error: ")]
    assert cut.returncode == 2 and len(errors) == 1, cut.stderr
    assert "manifest.jsonl" not in hub.files("someone/big") and len(hub.committed) == 1
    half = _cli(hub.url, tmp_path, "pull", "someone/big", "--out", str(tmp_path / "half"))
    assert half.returncode == 2 and "publish.not-a-task-set" in half.stderr, half.stderr

    hub.refuse_commits_after = None
    resumed = _cli(hub.url, tmp_path, "push", str(mined), "--to", "someone/big")
    assert resumed.returncode == 0, resumed.stderr
    # the rerun commits only what the cut push had not: every file once, manifest last
    sent = [path for commit in hub.committed for path in commit]
    assert sorted(sent) == sorted(set(sent)) == sorted(hub.files("someone/big"))
    assert hub.committed[-1] == ["manifest.jsonl"]
    if count == 4:
        assert hub.committed[1:] == [["manifest.jsonl"]]  # every task file was skipped
    with hub_double() as other:  # the same push, never interrupted
        whole = _cli(other.url, tmp_path, "push", str(mined), "--to", "someone/big")
        assert whole.returncode == 0, whole.stderr
        assert hub.files("someone/big") == other.files("someone/big")
    out = tmp_path / "pulled"
    pulled = _cli(hub.url, tmp_path, "pull", "someone/big", "--out", str(out))
    assert pulled.returncode == 0, pulled.stderr
    for number in range(count):
        name = f"repair/task-{number}"
        assert _tree(out / name) == _tree(mined / name)  # bytes and executable bits


def test_a_later_push_deletes_what_it_no_longer_holds(hub, tmp_path) -> None:
    mined = _mined(tmp_path / "mined", 4)
    assert _cli(hub.url, tmp_path, "push", str(mined), "--to", "someone/big").returncode == 0
    smaller = _mined(tmp_path / "smaller", 3)
    assert _cli(hub.url, tmp_path, "push", str(smaller), "--to", "someone/big").returncode == 0
    tasks = {name.split("/")[1] for name in hub.files("someone/big") if name.startswith("repair/")}
    assert tasks == {"task-0", "task-1", "task-2"}
    # the tasks' commit took the old manifest away with the dropped task; the next one
    # put the new manifest back
    assert "manifest.jsonl" in hub.committed[-2] and "repair/task-3/task.toml" in hub.committed[-2]
    assert hub.committed[-1] == ["manifest.jsonl"]


def test_a_small_set_is_one_commit(hub, tmp_path) -> None:
    mined = _mined(tmp_path / "mined", 1)
    assert staged_files(mined) + 2 <= SINGLE_COMMIT_FILES  # + card and publish record
    assert _cli(hub.url, tmp_path, "push", str(mined), "--to", "someone/small").returncode == 0
    assert len(hub.committed) == 1 and "manifest.jsonl" in hub.committed[0]
