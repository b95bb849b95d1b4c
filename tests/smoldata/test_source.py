"""Notebooks reach `repo2rlenv mine` through the `rlenv_harvest.sources` entry point."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from repo2rlenv.cli_args import add_options, options_from
from repo2rlenv.commands.mine import Options, options_model
from repo2rlenv.emit import installed_sources
from repo2rlenv.source import resolve_source
from smoldataenvs.notebook_miner import NotebookPipeline
from smoldataenvs.source import NOTEBOOKS
from tests.mining.test_hub_errors import fake_hub  # noqa: F401 (fixture)
from tests.smoldata.helpers import code_cell, result, write_notebook


def _args(dataset: Path, *extra: str) -> Options:
    """`mine`'s options model with the source's own mixed in, parsed as `mine` does."""
    parser = argparse.ArgumentParser()
    add_options(parser, options_model())
    return options_from(
        parser.parse_args(["--dataset", str(dataset), "-j", "1", *extra]), options_model()
    )


def test_the_notebook_source_is_installed() -> None:
    assert [source.name for source in installed_sources()] == ["notebooks"]
    assert installed_sources()[0] is NOTEBOOKS


def _pipeline(args: argparse.Namespace, base_image: str = "img:1", runtime=None):
    """The plugin as `mine` calls it: with `--dataset` resolved once."""
    source = resolve_source(args.dataset, args.revision)
    return NOTEBOOKS.pipeline(args, source=source, base_image=base_image, runtime=runtime)


def test_a_folder_without_notebooks_gets_no_notebook_pipeline(tmp_path: Path) -> None:
    (tmp_path / "session.jsonl").write_text("{}\n")
    assert _pipeline(_args(tmp_path)) is None


def test_its_own_options_reach_the_pipeline(tmp_path: Path) -> None:
    write_notebook(tmp_path / "n.ipynb", [code_cell("1 + 1", [result("2")])])
    args = _args(tmp_path, "--max-per-dataset", "2", "--allow-boolean")
    pipeline = _pipeline(args)
    assert isinstance(pipeline, NotebookPipeline)
    assert pipeline.options.max_per_dataset == 2 and pipeline.options.allow_boolean
    assert pipeline.options.base_image == "img:1" and not pipeline.options.reproduce


def test_mines_runtime_reaches_the_answer_reproduction(tmp_path: Path) -> None:
    """`mine --runtime harbor:...` must reproduce answers on that runtime, not on a
    Docker runtime the source would make itself."""
    write_notebook(tmp_path / "n.ipynb", [code_cell("1 + 1", [result("2")])])
    runtime = object()
    pipeline = _pipeline(_args(tmp_path), runtime=runtime)
    assert isinstance(pipeline, NotebookPipeline) and pipeline.options.reproduce
    assert pipeline.reproducer is not None and pipeline.reproducer.runtime is runtime


def test_a_hub_dataset_on_an_unreachable_hub_is_one_line(tmp_path: Path) -> None:
    """Issue 28: `python -m smoldataenvs --dataset owner/name` printed the client's
    two-line complaint; it now asks as every source does (`repo2rlenv.hub`), with a
    timeout, and says it in one line, exit 2."""
    import os
    import subprocess
    import sys

    from tests.mining.test_hub_errors import REPO, _one_line, _refusing_port

    endpoint = f"http://127.0.0.1:{_refusing_port()}"
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "REPO2RLENV"))}
    environ.update(HF_ENDPOINT=endpoint, HF_HOME=str(tmp_path / "hf"), PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-m", "smoldataenvs", "--dataset", "someone/notebooks",
         "--out", str(tmp_path / "out"), "--no-validate", "-q"],
        cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Retrying" not in done.stderr
    line = _one_line(done.stderr)
    assert line.startswith("error: hub.unreachable:") and endpoint in line


def test_the_notebook_decision_of_a_hub_id_is_the_one_resolution(
    fake_hub: str,  # noqa: F811 (the fixture)
    monkeypatch,
) -> None:
    """`repo2rlenv mine` decides whether a Hub dataset holds notebooks from the file list
    of the one timed `dataset_info` call that resolved it (it used to ask again, with
    `list_repo_files`, no timeout, any failure read as "no notebooks"); a failure is
    the resolution's one line."""
    from huggingface_hub import constants

    from repo2rlenv.hub import SourceUnavailable
    from smoldataenvs.notebook_files import is_notebook_source
    from tests.mining.test_hub_errors import _refusing_port

    monkeypatch.setattr(constants, "ENDPOINT", fake_hub)
    assert is_notebook_source(resolve_source("someone/notebooks"))
    with pytest.raises(SourceUnavailable, match=r"^hub\.dataset-not-found: "):
        resolve_source("someone/no-such-set")
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{_refusing_port()}")
    with pytest.raises(SourceUnavailable, match=r"^hub\.unreachable: "):
        resolve_source("someone/notebooks")


def test_only_keeps_a_mine_run_to_the_source_it_names(tmp_path: Path, capsys) -> None:
    """`mine --only SOURCE` (issue 33.4: what `python -m smoldataenvs` is built on): the
    other sources' pipelines do not run; a name no source has is one line, exit 2."""
    from repo2rlenv.cli import main
    from smoldataenvs.__main__ import main as notebooks_main

    write_notebook(tmp_path / "nb" / "n.ipynb", [code_cell("6 * 7", [result("42")])])
    args = ["mine", "--dataset", str(tmp_path / "nb"), "--no-validate", "-q", "--json", "-"]
    assert main([*args, "--out", str(tmp_path / "s"), "--only", "sessions"]) == 0
    assert json.loads(capsys.readouterr().out)["pipeline"] == "sessions"
    assert not (tmp_path / "s" / "qa").exists()
    assert notebooks_main([*args[1:], "--out", str(tmp_path / "n"), "--only", "sessions"]) == 0
    report = json.loads(capsys.readouterr().out)  # the alias's own `--only` wins
    assert report["pipeline"] == "smoldataenvs" and report["records_read"] == 1
    assert main([*args, "--out", str(tmp_path / "x"), "--only", "nope"]) == 2
    assert "--only nope: no such source (one of: sessions, notebooks)" in capsys.readouterr().err
