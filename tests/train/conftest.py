"""Fixtures of the train tests: the demo's tasks, one tiny-cpu training run on them (shared
by the training and evaluation end-to-end tests), one vLLM CPU server of the tiny model
shared by the tests that only need a server to talk to, and a skewed synthetic set."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import DEMO_OUT
from tests.tiny import build_tiny_model
from tests.train.synthetic import Spec, skewed_specs, write_specs

REPO = Path(__file__).resolve().parents[2]
SHARED_CONTEXT = 65536
"""The shared server's context: the harnesses' system prompts (opencode's alone is tens of
thousands of tokens) fit; the tiny model's own limit is raised to twice it."""
SHARED_SLOTS = 6
"""LoRA slots of the shared server: the device check's two trainers with their staleness
window, or three harnesses' adapters, loaded at once."""


@pytest.fixture(scope="session")
def demo_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `repo2rlenv examples DIR` (the demo's first step) writes."""
    out = tmp_path_factory.mktemp("demo") / "tasks"
    command = [str(Path(sys.executable).parent / "repo2rlenv"), "examples", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def mined_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `make demo` mines (the bundled sessions and notebooks), without validation:
    enough tasks that the split holds one out."""
    if DEMO_OUT:
        return Path(DEMO_OUT).resolve()
    out = tmp_path_factory.mktemp("mined-demo") / "tasks_out"
    cli = str(Path(sys.executable).parent / "repo2rlenv")
    for dataset in ("repo2rlenv/examples/sessions", "smoldataenvs/examples"):
        command = [cli, "mine", "--dataset", str(REPO / dataset), "--out", str(out),
                   "--no-validate"]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def tiny_cpu_run(
    mined_demo: Path, docker_ready: str, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """`python -m train --tasks <demo> --preset tiny-cpu`: a real vLLM CPU server, the pi
    harness in task containers through the guard, the verifier and TRL for two steps.
    Runs once; its output folder is what the assertions read."""
    from train.cli import main

    if DEMO_OUT:
        out = Path(DEMO_OUT).resolve() / "train"
        assert (out / "pi" / "adapters").is_dir(), f"{out}: run `make train-demo` first"
        return out
    out = tmp_path_factory.mktemp("tiny-cpu") / "run"
    assert main(["--tasks", str(mined_demo), "--preset", "tiny-cpu", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def skewed() -> list[Spec]:
    return skewed_specs()


@pytest.fixture(scope="session")
def skewed_root(tmp_path_factory: pytest.TempPathFactory, skewed: list[Spec]) -> Path:
    return write_specs(tmp_path_factory.mktemp("skewed"), skewed)


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """One vLLM CPU server of the tiny model, LoRA on with runtime loading, started once
    for the tests that need a server but do not test its start (a start costs 35-60 s of
    both cores here: docs/ci-time.md). Yields its base URL and the model folder (for
    adapters and trainers on the same weights). Tests reach it through `lora_server`,
    which leaves it as it found it."""
    from train.serving.server import ServerOptions, VllmServer

    root = tmp_path_factory.mktemp("shared-vllm")
    model = build_tiny_model(root / "tiny")
    config = json.loads((model / "config.json").read_text())
    config["max_position_embeddings"] = 2 * SHARED_CONTEXT
    (model / "config.json").write_text(json.dumps(config, indent=2))
    options = ServerOptions(
        model=model,
        max_model_len=SHARED_CONTEXT,
        extra_args=["--enable-lora", "--max-lora-rank", "32", "--max-loras", str(SHARED_SLOTS)],
        extra_env={"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "1", "VLLM_SERVER_DEV_MODE": "1"},
        log_path=root / "vllm.log",
    )
    with VllmServer(options) as server:  # bound to 127.0.0.1: out of the containers' reach
        yield server.base_url, model


@pytest.fixture
def lora_server(shared_server: tuple[str, Path]) -> Iterator[tuple[str, Path]]:
    """The shared server with no adapter loaded; whatever the test loads is unloaded after
    it, so each test sees the server as if it were its own."""
    with adapters_unloaded(shared_server[0]):
        yield shared_server


@pytest.fixture(scope="module")
def module_lora_server(shared_server: tuple[str, Path]) -> Iterator[tuple[str, Path]]:
    """`lora_server` for a module whose tests share what they load."""
    with adapters_unloaded(shared_server[0]):
        yield shared_server


@contextmanager
def adapters_unloaded(url: str) -> Iterator[None]:
    """Checks that no adapter is loaded on entry; unloads every one on exit."""
    from train.serving.adapters import AdapterClient

    client = AdapterClient(url)
    assert client.loaded() == [], "an earlier test left adapters on the shared server"
    try:
        yield
    finally:
        for name in client.loaded():
            client.unload(name)
