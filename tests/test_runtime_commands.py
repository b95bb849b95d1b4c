"""Every command that runs trials resolves `--runtime` the same way (flag, else the
settings file's `runtime`, else docker) and refuses a bad one with the same one-line
exit-2 error: `validate`, `mine` (oracle check and notebook answer reproduction) and
`difficulty` (attempts). A fake runtime stands in for a backend: no engine needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from repo2rlenv.cli import main
from repo2rlenv.mining import session_miner
from repo2rlenv.mining.instances import InstanceError
from repo2rlenv.runtime import RuntimeUnavailableError, registry
from repo2rlenv.runtime.docker_runtime import DockerRuntime


class FakeRuntime:
    """Checks like a hosted provider: fails unless FAKE_TOKEN is set."""

    def __init__(self, option: str | None) -> None:
        self.name = f"fake:{option}" if option else "fake"

    def check(self) -> None:
        import os

        if not os.environ.get("FAKE_TOKEN"):
            raise RuntimeUnavailableError(f"{self.name}: requires FAKE_TOKEN to be set")


@pytest.fixture
def fake(monkeypatch, tmp_path):
    monkeypatch.setitem(registry.RUNTIMES, "fake", lambda option, _python: FakeRuntime(option))
    monkeypatch.setenv("REPO2RLENV_CONFIG", str(tmp_path / "settings.toml"))
    monkeypatch.delenv("REPO2RLENV_RUNTIME", raising=False)
    monkeypatch.delenv("FAKE_TOKEN", raising=False)
    monkeypatch.setenv("COLUMNS", "400")
    return tmp_path


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err, err
    return err


def _sessions(folder: Path) -> Path:
    (folder / "sessions").mkdir()
    (folder / "sessions" / "s.jsonl").write_text("{}\n")
    return folder / "sessions"


def test_mine_refuses_an_unknown_runtime_and_one_without_credentials(fake, capsys):
    source = _sessions(fake)
    args = ["mine", "--dataset", str(source), "--out", str(fake / "out"), "-q"]
    assert main([*args, "--runtime", "podman"]) == 2
    assert "unknown runtime 'podman'" in _one_line_error(capsys)
    assert main([*args, "--runtime", "fake:cloud"]) == 2
    err = _one_line_error(capsys)
    assert "fake:cloud: requires FAKE_TOKEN" in err and "--no-validate" in err
    # --no-validate runs no trial, so no runtime is resolved or checked
    assert main([*args, "--runtime", "fake:cloud", "--no-validate"]) == 0


def test_mine_checks_drafts_on_the_runtime_the_settings_file_names(fake, capsys, monkeypatch):
    (fake / "settings.toml").write_text('runtime = "fake:cloud"\n')
    monkeypatch.setenv("FAKE_TOKEN", "x")
    seen = []

    def pipeline(options, runtime, cache, *, source):
        seen.append(runtime)
        raise InstanceError("stop here")

    monkeypatch.setattr(session_miner, "SessionPipeline", pipeline)
    source = _sessions(fake)
    assert main(["mine", "--dataset", str(source), "--out", str(fake / "out"), "-q"]) == 2
    assert [r.name for r in seen] == ["fake:cloud"]
    # the flag wins over the settings file
    assert main(["mine", "--dataset", str(source), "--runtime", "fake:other", "-q"]) == 2
    assert seen[-1].name == "fake:other"


def test_mine_defaults_to_the_docker_runtime(fake, capsys, monkeypatch):
    seen = []

    def pipeline(options, runtime, cache, *, source):
        seen.append(runtime)
        raise InstanceError("stop here")

    monkeypatch.setattr(session_miner, "SessionPipeline", pipeline)
    monkeypatch.setattr(DockerRuntime, "check", lambda self: None)
    assert main(["mine", "--dataset", str(_sessions(fake)), "-q"]) == 2
    assert isinstance(seen[0], DockerRuntime)


def test_difficulty_resolves_the_runtime_like_validate(fake, capsys, examples_dir, monkeypatch):
    tasks = str(examples_dir)
    assert main(["difficulty", "--dry-run", "--runtime", "podman", tasks]) == 2
    assert "unknown runtime 'podman'" in _one_line_error(capsys)
    # the heuristic runs no trial: an unavailable runtime is not checked
    assert main(["difficulty", "--dry-run", "--runtime", "fake:cloud", tasks]) == 0
    capsys.readouterr()
    model = ["--model", "http://127.0.0.1:9/v1"]
    assert main(["difficulty", "--dry-run", *model, "--runtime", "fake:cloud", tasks]) == 2
    assert "requires FAKE_TOKEN" in _one_line_error(capsys)


def test_difficulty_attempts_refuse_a_runtime_rollouts_cannot_use(
    fake, capsys, examples_dir, monkeypatch
):
    pytest.importorskip("train.evaluate.solve_rates")
    monkeypatch.setenv("FAKE_TOKEN", "x")
    model = ["--model", "http://127.0.0.1:9/v1"]
    args = ["difficulty", "--dry-run", *model, "--runtime", "fake:cloud", str(examples_dir)]
    assert main(args) == 2
    err = _one_line_error(capsys)
    assert "difficulty.runtime-unsupported" in err and "fake:cloud" in err


def test_the_notebook_api_probe_says_it_needs_the_docker_runtime():
    """On another runtime the probe's bare container does not exist: a ProbeError (names
    go unchecked, the reference trial decides), never an AttributeError mid-mining."""
    from smoldataenvs.apisurface import ProbeError, image_surface

    with pytest.raises(ProbeError, match="needs the docker runtime, not fake:cloud"):
        image_surface(FakeRuntime("cloud"), "base:1")


def test_smoldataenvs_reproduces_on_the_resolved_runtime(fake, capsys, monkeypatch):
    from smoldataenvs.__main__ import main as smoldata_main
    from tests.smoldata.helpers import code_cell, result, write_notebook

    write_notebook(fake / "nb" / "n.ipynb", [code_cell("1 + 1", [result("2")])])
    args = ["--dataset", str(fake / "nb"), "--out", str(fake / "out"), "-q"]
    assert smoldata_main([*args, "--runtime", "podman"]) == 2
    assert "unknown runtime 'podman'" in _one_line_error(capsys)
    (fake / "settings.toml").write_text('runtime = "fake:cloud"\n')
    assert smoldata_main(args) == 2
    err = _one_line_error(capsys)
    assert "fake:cloud: requires FAKE_TOKEN" in err and "--no-validate" in err
