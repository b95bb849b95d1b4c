"""Fixtures of the guard tests: a recorded upstream and a guard in front of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.guard.hostile import GuardProcess, HostileUpstream
from tests.guard.replay import ReplayUpstream
from train.guard import GuardOptions, GuardServer


@pytest.fixture(scope="session")
def replay() -> Iterator[ReplayUpstream]:
    upstream = ReplayUpstream()
    upstream.start()
    yield upstream
    upstream.stop()


@pytest.fixture(scope="module")
def upstream() -> Iterator[HostileUpstream]:
    """A hostile upstream on 127.0.0.1 (where vLLM runs), shared by a module's tests of
    the real `python -m train.guard` process."""
    server = HostileUpstream()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def guard(
    upstream: HostileUpstream,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[GuardProcess]:
    """The real `python -m train.guard` process in front of the module's hostile upstream,
    one per test module, started with the module's `GUARD_ARGS` (extra flags). A module
    that needs a fresh process per test defines its own `guard`."""
    extra = getattr(request.module, "GUARD_ARGS", ())
    process = GuardProcess(upstream.base_url, tmp_path_factory.mktemp("guard"), *extra)
    yield process
    process.stop()


@pytest.fixture
def guard_server(replay: ReplayUpstream, tmp_path: Path) -> Iterator[GuardServer]:
    server = GuardServer(
        GuardOptions(upstream=replay.base_url, port=0, log_dir=tmp_path / "guard-logs")
    )
    server.start_background()
    yield server
    server.stop_background()
