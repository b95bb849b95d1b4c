import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repo2rlenv.bundle import (
    BundleConflictError,
    read_task_dir,
    render_bundle,
    replace_config,
    write_bundle,
)
from repo2rlenv.examples import example_bundle, example_bundles
from schemas import EvaluationLabel


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_model_twice_gives_identical_bytes_and_hash(tmp_path):
    bundle = example_bundle("example-repair-median", "base:1")
    first = write_bundle(bundle, tmp_path / "a")
    second = write_bundle(bundle, tmp_path / "b")
    assert first.content_hash == second.content_hash
    assert snapshot(first.path) == snapshot(second.path)


def test_hash_from_model_equals_hash_read_back(tmp_path):
    for bundle in example_bundles("base:1"):
        outcome = write_bundle(bundle, tmp_path)
        tree = read_task_dir(outcome.path)
        assert tree.content_hash == outcome.content_hash
        assert tree.config.metadata.repo2rlenv.content_hash == outcome.content_hash


def test_modes_are_fixed(tmp_path):
    path = write_bundle(example_bundle("example-build-wordfreq", "base:1"), tmp_path).path
    files = snapshot(path)
    assert files["tests/test.sh"][1] == 0o755
    assert files["solution/solve.sh"][1] == 0o755
    assert files["task.toml"][1] == 0o644 and files["tests/check.py"][1] == 0o644
    assert all((p.stat().st_mode & 0o777) == 0o755 for p in path.rglob("*") if p.is_dir())


@pytest.mark.parametrize("umask", [0o077, 0o022, 0o000])
def test_modes_are_fixed_whatever_the_umask(tmp_path, umask):
    previous = os.umask(umask)
    try:
        path = write_bundle(example_bundle("example-build-wordfreq", "base:1"), tmp_path).path
    finally:
        os.umask(previous)
    files = snapshot(path)
    assert files["tests/test.sh"][1] == 0o755 and files["task.toml"][1] == 0o644
    assert all((p.stat().st_mode & 0o777) == 0o755 for p in path.rglob("*") if p.is_dir())


def test_rendered_config_is_the_model_with_its_hash():
    """render_bundle builds task.toml from one dict; it must equal dumping the model
    with the content hash set, for every example (with and without a prior hash)."""
    from repo2rlenv.bundle import dump_config
    from repo2rlenv.bundle.writer import bundle_digest

    for bundle in example_bundles("base:1"):
        for prior in (None, "sha256:stale"):
            bundle.config.metadata.repo2rlenv.content_hash = prior
            digest, files = render_bundle(bundle)
            expected = bundle.config.model_copy(deep=True)
            expected.metadata.repo2rlenv.content_hash = digest
            assert files["task.toml"][0] == dump_config(expected).encode()
            assert bundle_digest(bundle) == digest
            assert bundle.config.metadata.repo2rlenv.content_hash == prior  # left as it was


def test_hash_changes_with_content_and_ignores_labels(tmp_path):
    base = example_bundle("example-qa-config", "base:1")
    other = example_bundle("example-qa-config", "base:2")
    assert render_bundle(base)[0] != render_bundle(other)[0]
    path = write_bundle(base, tmp_path).path
    tree = read_task_dir(path)
    labelled = tree.config.model_copy(deep=True)
    labelled.metadata.repo2rlenv.evaluation = EvaluationLabel(
        status="verified", checked_at="2026-01-01T00:00:00"
    )
    replace_config(path, labelled)
    again = read_task_dir(path)
    assert again.config.metadata.repo2rlenv.evaluation.status == "verified"
    assert again.content_hash == tree.content_hash


def test_rewrite_keeps_labels_and_refuses_different_task(tmp_path):
    bundle = example_bundle("example-extend-inventory", "base:1")
    path = write_bundle(bundle, tmp_path).path
    tree = read_task_dir(path)
    tree.config.metadata.repo2rlenv.evaluation = EvaluationLabel(status="verified")
    replace_config(path, tree.config)
    assert write_bundle(bundle, tmp_path).status == "unchanged"
    assert read_task_dir(path).config.metadata.repo2rlenv.evaluation.status == "verified"

    changed = example_bundle("example-extend-inventory", "base:other")
    with pytest.raises(BundleConflictError):
        write_bundle(changed, tmp_path)
    assert read_task_dir(path).content_hash == tree.content_hash
    outcome = write_bundle(changed, tmp_path, overwrite=True)
    assert outcome.status == "replaced"
    assert read_task_dir(path).content_hash == outcome.content_hash
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_interrupted_write_leaves_nothing_and_rerun_matches(tmp_path, monkeypatch):
    import repo2rlenv.bundle.writer as writer

    bundle = example_bundle("example-repair-median", "base:1")
    calls = {"n": 0}
    real_write = os.write

    def failing_write(fd, data):
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError("disk vanished")
        return real_write(fd, data)

    monkeypatch.setattr(writer.os, "write", failing_write)
    with pytest.raises(OSError):
        write_bundle(bundle, tmp_path / "out")
    monkeypatch.undo()
    assert list((tmp_path / "out").iterdir()) == []
    outcome = write_bundle(bundle, tmp_path / "out")
    clean = write_bundle(bundle, tmp_path / "clean")
    assert snapshot(outcome.path) == snapshot(clean.path)


KILLER = textwrap.dedent("""
    import os, signal, sys
    import repo2rlenv.bundle.writer as writer
    from repo2rlenv.examples import example_bundle
    count = {"n": 0}
    real = os.write
    def write_then_die(fd, data):
        written = real(fd, data)
        count["n"] += 1
        if count["n"] == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)
        return written
    writer.os.write = write_then_die
    writer.write_bundle(example_bundle("example-qa-config", "base:1"), sys.argv[1])
""")


@pytest.mark.parametrize("kill_after", [1, 3, 6])
def test_sigkill_midway_leaves_no_partial_task(tmp_path, kill_after):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", KILLER, str(out), str(kill_after)])
    assert done.returncode == -signal.SIGKILL
    assert not (out / "example-qa-config").exists()
    outcome = write_bundle(example_bundle("example-qa-config", "base:1"), out)
    assert outcome.status == "written"
    assert [p.name for p in out.iterdir()] == ["example-qa-config"]
    assert snapshot(outcome.path) == snapshot(
        write_bundle(example_bundle("example-qa-config", "base:1"), tmp_path / "ref").path
    )


def test_reader_reports_links_and_never_follows_them(tmp_path):
    path = write_bundle(example_bundle("example-qa-config", "base:1"), tmp_path).path
    secret = tmp_path / "outside.txt"
    secret.write_text("host secret")
    (path / "environment" / "leak").symlink_to(secret)
    (path / "environment" / "dirlink").symlink_to(tmp_path)
    tree = read_task_dir(path)
    assert tree.symlinks == {"environment/leak": str(secret), "environment/dirlink": str(tmp_path)}
    assert all(b"host secret" not in content for content, _ in tree.files.values())


def test_reader_survives_garbage_config(tmp_path):
    (tmp_path / "task.toml").write_text("[[[ not toml")
    tree = read_task_dir(tmp_path)
    assert tree.config is None and tree.config_error_kind == "toml"
    (tmp_path / "task.toml").write_text('[environment]\ncpus = "many"\n')
    tree = read_task_dir(tmp_path)
    assert tree.config_error_kind == "schema" and "environment.cpus" in tree.config_error


def test_refuses_to_write_through_a_symlinked_destination(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "example-qa-config").symlink_to(elsewhere)
    with pytest.raises(BundleConflictError):
        write_bundle(example_bundle("example-qa-config", "base:1"), out)
    assert list(elsewhere.iterdir()) == []
