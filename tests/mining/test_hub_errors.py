"""`repo2rlenv mine` on a source it cannot read (issue 22): one line, exit 2, no retry
loop, no traceback unless asked for. The real `huggingface_hub`/`datasets` code runs
against HF_ENDPOINT pointed at a loopback port that refuses, and at a local server that
answers the way the Hub does for a private, missing or wrong-revision dataset (and
counts what it was asked: a refusal is not retried). A run that hangs or backs off
fails on the subprocess's time limit, a guard rather than a measurement."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.local_http import serving

REPO = Path(__file__).resolve().parents[2]
HANG_S = 60
MAX_ASKS = 3
"""How often one refused URL may be asked in one run: huggingface_hub's own look-ups
ask some twice; a retry loop asks many times."""


def _mine(dataset: str, tmp_path: Path, endpoint: str, *extra: str, env: dict | None = None):
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "REPO2RLENV"))}
    environ.update(
        HF_ENDPOINT=endpoint, HF_HOME=str(tmp_path / "hf"), PYTHONPATH=str(REPO), **(env or {})
    )
    return subprocess.run(
        [sys.executable, "-m", "repo2rlenv", "mine", "--dataset", dataset,
         "--out", str(tmp_path / "out"), "--no-validate", "-q", *extra],
        cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=HANG_S, check=False,
    )  # fmt: skip


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def _refusing_port() -> int:
    with socket.socket() as sock:  # bound, then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


REPLIES = {
    # (status, X-Error-Code) as the Hub answers /api/datasets/<id>[/revision/<rev>]
    "/api/datasets/someone/private-set": (401, "RepoNotFound"),
    "/api/datasets/someone/no-such-set": (404, "RepoNotFound"),
    "/api/datasets/someone/public-set/revision/no-such-branch": (404, "RevisionNotFound"),
}


LISTINGS = {
    # a public dataset as /api/datasets/<id> describes it: its files are its `siblings`
    "/api/datasets/someone/notebooks": {
        "id": "someone/notebooks",
        "sha": "a" * 40,
        "siblings": [{"rfilename": "README.md"}, {"rfilename": "nb/cities.ipynb"}],
    },
}


ASKED: Counter[str] = Counter()
"""The paths the fake Hub was asked for, across the module's tests."""


@pytest.fixture(scope="module")
def fake_hub() -> Iterator[str]:
    """A local server answering like the Hub: 401 for a private (or missing) repo without
    a token, 404 for a missing repo or revision, with the Hub's X-Error-Code header."""

    async def answer(request: web.Request) -> web.Response:
        ASKED[request.path] += 1
        if request.path in LISTINGS:
            return web.json_response(LISTINGS[request.path])
        status, code = REPLIES.get(request.path, (404, "EntryNotFound"))
        message = "Repository not found" if code == "RepoNotFound" else code
        return web.json_response(
            {"error": message}, status=status,
            headers={"X-Error-Code": code, "X-Error-Message": message},
        )  # fmt: skip

    with serving(answer) as url:
        yield url


def test_hub_unreachable_is_one_line_with_the_offline_way(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{_refusing_port()}"
    done = _mine("nebius/SWE-agent-trajectories", tmp_path, endpoint)
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr)
    assert line.startswith("error: hub.unreachable:") and endpoint in line
    assert "local path" in line and "HF_HUB_OFFLINE=1" in line


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{_refusing_port()}"
    done = _mine("nebius/SWE-agent-trajectories", tmp_path, endpoint, "--debug")
    assert done.returncode == 2 and "Traceback" in done.stderr
    done = _mine("nebius/x", tmp_path, endpoint, env={"REPO2RLENV_DEBUG": "1"})
    assert done.returncode == 2 and "Traceback" in done.stderr


@pytest.mark.parametrize("dataset", ["someone/private-set", "someone/no-such-set"])
def test_unknown_or_private_dataset_says_where_the_token_comes_from(
    dataset: str, fake_hub: str, tmp_path: Path
) -> None:
    done = _mine(dataset, tmp_path, fake_hub)
    assert done.returncode == 2, done.stderr
    assert 1 <= ASKED[f"/api/datasets/{dataset}"] <= MAX_ASKS, ASKED
    line = _one_line(done.stderr)
    assert line.startswith("error: hub.dataset-not-found:") and dataset in line
    assert "private" in line and "HF_TOKEN" in line and "hf auth login" in line


def test_a_revision_that_does_not_exist(fake_hub: str, tmp_path: Path) -> None:
    done = _mine("someone/public-set", tmp_path, fake_hub, "--revision", "no-such-branch")
    assert done.returncode == 2, done.stderr
    asked = ASKED["/api/datasets/someone/public-set/revision/no-such-branch"]
    assert 1 <= asked <= MAX_ASKS, ASKED
    line = _one_line(done.stderr)
    assert line.startswith("error: hub.revision-not-found:") and "no-such-branch" in line


def test_offline_mode_without_the_dataset_in_the_cache(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{_refusing_port()}"
    done = _mine("someone/public-set", tmp_path, endpoint, env={"HF_HUB_OFFLINE": "1"})
    assert done.returncode == 2, done.stderr
    assert _one_line(done.stderr).startswith("error: hub.not-cached:")


def test_a_folder_with_nothing_readable(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "README.txt").write_text("no sessions here\n")
    done = _mine("notes", tmp_path, "http://127.0.0.1:9")  # relative, from its cwd
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr)
    assert line.startswith("error: source.empty:") and "notes" in line


def test_a_saved_dataset_without_the_split(tmp_path: Path) -> None:
    import datasets

    folder = tmp_path / "saved"
    rows = datasets.Dataset.from_list([{"id": "r1", "messages": "[]"}])
    datasets.DatasetDict({"train": rows}).save_to_disk(str(folder))
    done = _mine(str(folder), tmp_path, "http://127.0.0.1:9", "--split", "test")
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr)
    assert line.startswith("error: source.split-not-found:") and "'train'" in line


def test_neither_a_path_nor_a_hub_id(tmp_path: Path) -> None:
    done = _mine("no such/thing here", tmp_path, "http://127.0.0.1:9")
    assert done.returncode == 2
    assert _one_line(done.stderr).startswith("error: source.not-found:")


@pytest.mark.parametrize("option", ["--instances", "--exclude-instances"])
def test_an_instance_table_on_an_unreachable_hub_is_one_line(option: str, tmp_path: Path) -> None:
    """Issue 28: the tables were loaded by `datasets` alone, which retried a HEAD five
    times (six "Retrying" lines, 24 s) and then failed in several lines. They now go
    through the same check as `--dataset`."""
    session = REPO / "tests/data/swe/mini-swe-agent/marshmallow-code__marshmallow-1359.traj.json"
    endpoint = f"http://127.0.0.1:{_refusing_port()}"
    done = _mine(str(session), tmp_path, endpoint, option, "foo/bar")
    assert done.returncode == 2, done.stderr
    assert "Retrying" not in done.stderr
    line = _one_line(done.stderr)
    assert line.startswith("error: hub.unreachable: instance table foo/bar:") and endpoint in line
