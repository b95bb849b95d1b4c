"""`--dataset` is resolved once (issue 33): one `mine` run over a Hub dataset that holds
both sessions and notebooks asks the Hub what the dataset is exactly once, and both
miners read the files of the commit that answer pinned.

The real `huggingface_hub`/`datasets` code runs against HF_ENDPOINT pointed at a local
server that answers like the Hub (`tests.hub_double`: its API for the dataset, its
`resolve` URLs for the files) and counts what it is asked. Before, one run asked four
times: a check, `load_dataset`'s own look-up, a file listing for the notebook decision
and `snapshot_download`'s."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from repo2rlenv.examples.session_formats import SESSIONS_DIR
from repo2rlenv.hub import SourceUnavailable
from repo2rlenv.source import is_hub_id, resolve_source
from tests.hub_double import WritableHub, hub_double
from tests.mining.test_hub_errors import _mine
from tests.smoldata.helpers import code_cell, result, write_notebook

pytestmark = pytest.mark.timeout(180)

REPO_ID = "someone/mixed"
COMMIT = "d" * 40


def _files(tmp_path: Path) -> dict[str, bytes]:
    """A dataset as a user publishes it: sessions as table rows, and a notebook."""
    text = (SESSIONS_DIR / "pi" / "stock.jsonl").read_text()
    rows = [{"id": f"s{i}", "path": "stock.jsonl", "content": text} for i in range(2)]
    notebook = tmp_path / "cities.ipynb"
    write_notebook(notebook, [code_cell("1 + 1", [result("2")])])
    return {
        "data/train.jsonl": "".join(json.dumps(row) + "\n" for row in rows).encode(),
        "nb/cities.ipynb": notebook.read_bytes(),
    }


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[tuple[WritableHub, str]]:
    with hub_double() as double:
        double.seed(REPO_ID, _files(tmp_path), COMMIT)
        yield double, double.url


def test_one_mine_run_resolves_a_hub_dataset_once(hub, tmp_path: Path) -> None:
    double, url = hub
    done = _mine(REPO_ID, tmp_path, url, "--json", str(tmp_path / "report.json"))
    assert done.returncode in (0, 1), done.stderr
    # the one resolution: the dataset's commit and files, asked once for the whole run
    # (`/api/agent-harnesses`, the client's own once-a-day registry, is not about it)
    asked = {path: n for path, n in double.api.items() if path.startswith("/api/datasets/")}
    assert asked == {f"/api/datasets/{REPO_ID}": 1}, double.api
    # each file read once, at the pinned commit, by whichever miner needs it
    assert dict(double.downloads) == {name: 1 for name in double.files(REPO_ID)}
    report = json.loads((tmp_path / "report.json").read_text())
    read = {p["pipeline"]: p["records_read"] for p in report["pipelines"]}
    assert read["sessions"] == 2 and read["smoldataenvs"] == 1, report


def test_the_source_is_pinned_to_the_commit_the_hub_named(hub, monkeypatch) -> None:
    from huggingface_hub import constants

    double, url = hub
    monkeypatch.setattr(constants, "ENDPOINT", url)
    source = resolve_source(REPO_ID)
    assert (source.kind, source.revision, source.label) == ("hub", COMMIT, REPO_ID)
    assert source.has_notebooks and set(source.files) == set(double.files(REPO_ID))
    assert double.api[f"/api/datasets/{REPO_ID}"] == 1 and not double.downloads  # no fetch yet
    with pytest.raises(SourceUnavailable, match=r"^hub\.dataset-not-found: "):
        resolve_source("someone/no-such-set")


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("owner/name", True),
        ("squad", True),  # a legacy canonical dataset: the Hub still answers for it
        ("Foo-BAR_foo.bar123", True),
        ("a/b/c", False),
        ("no such/thing here", False),
        ("foo--bar", False),
        ("../up", False),
        ("name.git", False),
        ("", False),
    ],
)
def test_one_hub_id_grammar(text: str, valid: bool) -> None:
    assert is_hub_id(text) is valid


def test_a_local_folder_is_looked_at_once_and_named_never_by_its_path(tmp_path: Path) -> None:
    folder = tmp_path / "my-notebooks"
    write_notebook(folder / "deep" / "n.ipynb", [code_cell("1 + 1", [result("2")])])
    source = resolve_source(str(folder))
    assert (source.kind, source.label, source.path) == ("folder", "my-notebooks", folder)
    assert source.has_notebooks and str(tmp_path) not in source.label
    (folder / "deep" / "n.ipynb").unlink()
    (folder / "deep" / "s.jsonl").write_text("{}\n")
    assert not resolve_source(str(folder)).has_notebooks


def test_offline_a_resolved_and_read_dataset_is_the_caches(hub, tmp_path: Path, monkeypatch):
    """Files fetched at the pinned commit are found again offline (HF_HUB_OFFLINE): the
    cache maps the revision asked for to that commit, as `snapshot_download` does."""
    from huggingface_hub import constants

    double, url = hub
    monkeypatch.setattr(constants, "ENDPOINT", url)
    template = url + "/{repo_id}/resolve/{revision}/{filename}"  # set from HF_ENDPOINT
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    online = resolve_source(REPO_ID)
    assert (online.root / "nb" / "cities.ipynb").is_file()
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    offline = resolve_source(REPO_ID)
    assert (offline.kind, offline.revision, offline.root) == ("hub", COMMIT, online.root)
    assert offline.has_notebooks and set(offline.files) == set(double.files(REPO_ID))
    with pytest.raises(SourceUnavailable, match=r"^hub\.not-cached: "):
        resolve_source("someone/never-read")
    assert double.api[f"/api/datasets/{REPO_ID}"] == 1  # offline asked nothing
