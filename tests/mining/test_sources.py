"""The Hub branch of `iter_records`, with the two loaders replaced by local stand-ins
(no network here), and which files of a local folder become records."""

from __future__ import annotations

import json
import shutil

import datasets
import huggingface_hub

from repo2rlenv.examples.session_formats import SESSIONS_DIR
from repo2rlenv.formats.base import FormatError
from repo2rlenv.hub import HUB_TIMEOUT_S
from repo2rlenv.mining.sources import SourceSpec, iter_records
from repo2rlenv.source import Source, resolve_source

COMMIT = "c" * 40


def _hub(name: str, files: tuple[str, ...] = ()) -> Source:
    """A Hub dataset as `resolve_source` gives it: pinned to a commit, files listed."""
    return Source(spec=name, kind="hub", label=name, revision=COMMIT, files=files)


def test_streamed_hub_rows_are_unwrapped_and_limited(monkeypatch):
    text = (SESSIONS_DIR / "pi" / "stock.jsonl").read_text()
    rows = [{"id": f"s{i}", "path": "stock.jsonl", "content": text} for i in range(5)]
    seen = {}

    def fake_load(name, split, revision, streaming):
        seen.update(name=name, split=split, revision=revision, streaming=streaming)
        return iter(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    spec = SourceSpec(_hub("org/sessions"), split="test", limit=3, streaming=True)
    records = list(iter_records(spec))
    # streamed from the Hub, at the commit the one resolution pinned
    assert seen == {"name": "org/sessions", "split": "test", "revision": COMMIT, "streaming": True}
    assert [r.record_id for r in records] == ["test#0:s0", "test#1:s1", "test#2:s2"]
    assert all(isinstance(r.payload, list) and r.revision == COMMIT for r in records)


def _fake_hub_download(monkeypatch, tmp_path, calls: list):
    """`hf_hub_download` as the Hub cache answers it: the file linked from the commit's
    snapshot folder to a blob beside it."""
    snapshot = tmp_path / "datasets--org--raw" / "snapshots" / COMMIT
    blobs = tmp_path / "datasets--org--raw" / "blobs"

    def download(repo, name, repo_type, revision, etag_timeout):
        calls.append((repo, name, revision, etag_timeout))
        blob = blobs / name.replace("/", "_")
        blob.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SESSIONS_DIR / name, blob)
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).symlink_to(blob)
        return str(snapshot / name)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)


def test_hub_repo_of_session_files_is_read_from_the_pinned_files(monkeypatch, tmp_path):
    def not_a_table(*args, **kwargs):
        raise datasets.exceptions.DatasetGenerationError("mixed schemas")

    monkeypatch.setattr(datasets, "load_dataset", not_a_table)
    calls: list = []
    _fake_hub_download(monkeypatch, tmp_path, calls)
    files = ("pi/stock.jsonl", "codex/orders.jsonl")
    records = list(iter_records(SourceSpec(_hub("org/raw", files))))
    # each file once, at the pinned commit, with the bounded metadata timeout
    assert sorted(calls) == sorted(("org/raw", f, COMMIT, HUB_TIMEOUT_S) for f in files)
    ids = [r.record_id for r in records]
    assert any(i.startswith("pi/stock.jsonl") for i in ids)
    assert any(i.startswith("codex/orders.jsonl") for i in ids)
    assert ids == sorted(ids)
    # the cache's own links are read; they are not a user's links
    assert not any(
        isinstance(r.payload, FormatError) and r.payload.reason == "format.unsupported-file"
        for r in records
    )


def test_a_file_revision_is_hashed_when_first_read(tmp_path):
    import hashlib

    from repo2rlenv.mining.sources import FileRevision

    path = tmp_path / "rows.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n' * 2)
    records = list(iter_records(SourceSpec(resolve_source(str(path)))))
    assert len(records) == 2 and records[0].revision is records[1].revision
    revision = records[0].revision
    assert isinstance(revision, FileRevision) and revision._value is None
    expected = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    assert str(revision) == expected and revision._value == expected


def test_every_file_of_a_folder_is_read_or_refused_with_a_reason(tmp_path):
    """A .traj run is read; a README, a YAML file and a link each get a reason code;
    nothing is passed over but hidden tooling folders."""
    from repo2rlenv.formats import FormatError

    run = {"history": [{"role": "user", "content": "Fix it", "agent": "main"}], "info": {}}
    (tmp_path / "exp" / "django__django-1").mkdir(parents=True)
    (tmp_path / "exp" / "django__django-1" / "django__django-1.traj").write_text(json.dumps(run))
    (tmp_path / "exp" / "README.md").write_text("# runs\n")
    (tmp_path / "exp" / "exit_statuses.yaml").write_text("a: 1\n")
    (tmp_path / "exp" / "link.json").symlink_to(tmp_path / "exp" / "README.md")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.json").write_text("{}")
    records = {
        r.record_id: r.payload for r in iter_records(SourceSpec(resolve_source(str(tmp_path))))
    }
    assert set(records) == {
        "exp/django__django-1/django__django-1.traj",
        "exp/README.md",
        "exp/exit_statuses.yaml",
        "exp/link.json",
    }
    assert not isinstance(records["exp/django__django-1/django__django-1.traj"], FormatError)
    for name in ("exp/README.md", "exp/exit_statuses.yaml", "exp/link.json"):
        assert isinstance(records[name], FormatError)
        assert records[name].reason == "format.unsupported-file"
