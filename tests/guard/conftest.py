"""Fixtures of the guard tests: a recorded upstream and a guard in front of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.guard.hostile import HostileUpstream
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


@pytest.fixture
def guard_server(replay: ReplayUpstream, tmp_path: Path) -> Iterator[GuardServer]:
    server = GuardServer(
        GuardOptions(upstream=replay.base_url, port=0, log_dir=tmp_path / "guard-logs")
    )
    server.start_background()
    yield server
    server.stop_background()
