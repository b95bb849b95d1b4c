"""The Hub branch of `iter_records`, with the two loaders replaced by local stand-ins
(no network here), and which files of a local folder become records."""

from __future__ import annotations

import json
import shutil

import datasets
import huggingface_hub

from repo2rlenv.examples.session_formats import SESSIONS_DIR
from repo2rlenv.hub import HUB_TIMEOUT_S
from repo2rlenv.mining.sources import SourceSpec, iter_records


def test_hub_rows_are_unwrapped_and_limited(monkeypatch):
    text = (SESSIONS_DIR / "pi" / "stock.jsonl").read_text()
    rows = [{"id": f"s{i}", "path": "stock.jsonl", "content": text} for i in range(5)]
    seen = {}

    def fake_load(name, split, revision, streaming):
        seen.update(name=name, split=split, revision=revision, streaming=streaming)
        return iter(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    records = list(
        iter_records(
            SourceSpec(
                dataset="org/sessions", split="test", revision="abc", limit=3, streaming=True
            )
        )
    )
    assert seen == {"name": "org/sessions", "split": "test", "revision": "abc", "streaming": True}
    assert [r.record_id for r in records] == ["test#0:s0", "test#1:s1", "test#2:s2"]
    assert all(isinstance(r.payload, list) and r.revision == "abc" for r in records)


def test_hub_repo_of_session_files_falls_back_to_a_snapshot(monkeypatch, tmp_path):
    def not_a_table(*args, **kwargs):
        raise datasets.exceptions.DatasetGenerationError("mixed schemas")

    snapshot = tmp_path / "snapshot"
    shutil.copytree(SESSIONS_DIR, snapshot)
    monkeypatch.setattr(datasets, "load_dataset", not_a_table)
    timeouts = []

    def download(repo, repo_type, revision, etag_timeout):
        timeouts.append(etag_timeout)
        return str(snapshot)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", download)
    ids = [r.record_id for r in iter_records(SourceSpec(dataset="org/raw-sessions"))]
    assert timeouts == [HUB_TIMEOUT_S]  # the client's metadata calls are bounded
    assert "pi/stock.jsonl" in ids and "codex/orders.jsonl" in ids
    assert ids == sorted(ids)


def test_a_file_revision_is_hashed_when_first_read(tmp_path):
    import hashlib

    from repo2rlenv.mining.sources import FileRevision

    path = tmp_path / "rows.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n' * 2)
    records = list(iter_records(SourceSpec(dataset=str(path))))
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
    records = {r.record_id: r.payload for r in iter_records(SourceSpec(dataset=str(tmp_path)))}
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
