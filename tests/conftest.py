"""Shared fixtures. Docker-backed tests need a running engine and the configured base
image; `make test` provides both (`repo2rlenv setup`) before pytest starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repo2rlenv.bundle import write_bundle
from repo2rlenv.examples import example_bundles
from repo2rlenv.settings import load_settings

pytest_plugins = ["tests.xdist_engine"]
"""Under `make test`'s two workers, the engine tests run one at a time in one of them."""

SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "samples" / "real"
"""Real published files beside the repository (`../shared`); not part of a clone, and not
ours to copy (see its SOURCES.md), so every test that reads them is marked `needs_samples`."""

needs_samples = pytest.mark.skipif(
    not SAMPLES.is_dir(),
    reason=f"real samples not found at {SAMPLES} (the unlicensed ../shared beside the repository)",
)


DEMO_OUT = os.environ.get("RLENV_DEMO_OUT")
"""Set by CI after it ran `make demo`, `make train-demo` and `make eval-demo` as the README
writes them: the end-to-end tests that would repeat the demo's work (mine the examples
with the oracle on, validate them, train the tiny model) check that real run's output and
reports instead."""

QUICK = os.environ.get("RLENV_QUICK") == "1"
"""Set by `make quick`: only the project venv is assumed, so tests that need more are
skipped with the reason (listed by `-ra`) instead of failing or silently deselected."""

EXTENDED = os.environ.get("RLENV_EXTENDED") == "1"
"""Set by `make test-all`: also run the `extended` tests. CI runs one small real case per
path (Harbor, vLLM, Docker); an `extended` test is a further, longer real case of a path
that a CI test already covers (every example task under Harbor instead of one per kind, a
second way to interrupt a run), skipped with its reason otherwise so it is never lost
silently."""

_QUICK_SKIPS = {
    "docker": "needs a Docker engine and the base image",
    "harbor": "needs Harbor's CLI (.venv-harbor)",
    "vllm": "needs vLLM's CPU build (.venv-vllm)",
    "slow": "end-to-end",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not EXTENDED and item.get_closest_marker("extended"):
            item.add_marker(pytest.mark.skip(reason="extended: make test-all runs it"))
            continue
        if not QUICK:
            continue
        for marker, why in _QUICK_SKIPS.items():
            if item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=f"make quick: {why}; make test runs it"))
                break


HARNESS_DIR = load_settings().harness_bundles
"""The harness bundles `make test` installed (`make harnesses`), read before any test
isolates the cache: bundles are immutable and named after what they hold, so sharing them
isolates nothing away, while one copy per test cost ~700 MB of disk each (pi + opencode)
and filled a CI machine's disk."""


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """No test reads or fills the user's validation cache; harness bundles are shared."""
    monkeypatch.setenv("REPO2RLENV_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("REPO2RLENV_HARNESS_DIR", str(HARNESS_DIR))
    # a test never pulls an instance's published image (GBs): present locally or not used
    monkeypatch.setenv("REPO2RLENV_INSTANCE_IMAGES", "local")


@pytest.fixture(scope="session")
def base_image() -> str:
    return os.environ.get("REPO2RLENV_BASE_IMAGE") or load_settings().base_image


@pytest.fixture(scope="session")
def docker_ready(base_image: str) -> str:
    """Fails (not skips) without an engine: these tests are the proof of the runtime."""
    import docker

    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as exc:
        pytest.fail(f"no Docker engine answers ({exc}); run `make setup` or `repo2rlenv setup`")
    try:
        client.images.get(base_image)
    except Exception:
        pytest.fail(f"base image {base_image} is absent; run `repo2rlenv setup`")
    return base_image


@pytest.fixture
def examples_dir(tmp_path: Path, base_image: str) -> Path:
    out = tmp_path / "examples"
    for bundle in example_bundles(base_image):
        write_bundle(bundle, out)
    return out


SCRIPTED_ADAPTER = "pi-policy-v7"
"""The identity adapter (LoRA B = 0) the scripted server serves by name: it answers
exactly as the scripted base does, as a harness asking for its policy's adapter needs."""


@pytest.fixture(scope="session")
def scripted_server(tmp_path_factory: pytest.TempPathFactory):
    """One vLLM CPU server of the scripted tiny model (`tests.guard.upstream`: whatever the
    prompt, one `bash` call of `curl -s https://example.org/data.csv`), shared by the
    guard's tests against a real upstream and pi's tool-call test (a start costs about a
    minute of both cores here: docs/ci-time.md). Its base model is served as `tiny`, and
    `SCRIPTED_ADAPTER` by name; 16K context (pi's prompt is about 4K tokens)."""
    from tests.guard.upstream import build_scripted_model
    from tests.tiny import build_adapter
    from train.serving.install import is_installed
    from train.serving.server import ServerOptions, VllmServer

    if not is_installed():
        pytest.fail("the vLLM virtualenv is missing: run `python -m train.serving.install`")
    root = tmp_path_factory.mktemp("scripted-vllm")
    model = build_scripted_model(root / "model")
    adapter = build_adapter(model, root / "adapter", random=False)
    options = ServerOptions(
        model=model,
        max_model_len=16384,
        extra_args=[
            *("--enable-lora", "--max-lora-rank", "8", "--max-loras", "1"),
            *("--lora-modules", f"{SCRIPTED_ADAPTER}={adapter}"),
        ],
        log_path=root / "vllm.log",
    )
    with VllmServer(options) as server:  # bound to 127.0.0.1: out of the containers' reach
        yield server
