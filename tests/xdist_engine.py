"""pytest plugin: under pytest-xdist, the engine tests run one at a time per engine.

`make test` runs pytest in two workers (`-n 2`). Tests that start containers (marker
docker or harbor, or the `docker_ready` fixture) must stay one after another, as in a
single process: they share what no test owns alone (the engine's containers, labels and
networks, which the cleanup tests count; timeouts sized for one trial at a time). They
are the scope `engine`. The other engine tests (marker vllm or slow: a vLLM CPU server,
the guard's servers, no container) are the scope `servers`: one at a time too (two vLLM
CPU servers would fight over the same cores), but beside the container tests, in the
other worker, before that worker's unit tests. A module with one container test keeps
all its engine tests in `engine` (they share module fixtures: one server, not two).
Measured in docs/ci-time.md.

Why not `xdist_group` + `--dist loadgroup`: pytest-xdist 3.8 writes the group into
`item._nodeid`, which pytest 9.2 no longer reads (a node id derives from `item._id`), so
the group is lost and the engine tests go to both workers. Here the controller's own
scheduler decides instead: it only sees node ids, so worker gw0 writes each engine test's
scope to a file during its collection, and `LoadScopeScheduling` runs each scope in one
worker, in order. Scopes go out largest first (`--loadscope-reorder`, the default), so
the two engine scopes start at once, one per worker. Without xdist, or with `-n 0`,
nothing here runs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ENGINE_MARKERS = ("docker", "harbor", "vllm", "slow")
"""Markers of tests that need an engine; `make quick` skips exactly these (conftest)."""

ENGINE_FIXTURES = ("docker_ready",)
"""A test that asks for a running engine is an engine test even without its marker."""

CONTAINER_MARKERS = ("docker", "harbor")
"""Markers of tests that start containers: the scope `engine`."""

ENGINE_SCOPE = "engine"
SERVERS_SCOPE = "servers"

_LIST_KEY = "rlenv_engine_list"
_FIRST_WORKER = "gw0"


def is_engine_test(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(marker) for marker in ENGINE_MARKERS):
        return True
    return any(name in ENGINE_FIXTURES for name in getattr(item, "fixturenames", ()))


def starts_containers(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(marker) for marker in CONTAINER_MARKERS):
        return True
    return any(name in ENGINE_FIXTURES for name in getattr(item, "fixturenames", ()))


def engine_scopes(items: list[pytest.Item]) -> dict[str, str]:
    """Each engine test's scope: `engine` for a test in a module with a container test,
    `servers` for the others (module: the path part of the node id)."""
    engine = [item for item in items if is_engine_test(item)]
    with_containers = {item.nodeid.split("::")[0] for item in engine if starts_containers(item)}
    return {
        item.nodeid: ENGINE_SCOPE
        if item.nodeid.split("::")[0] in with_containers
        else SERVERS_SCOPE
        for item in engine
    }


def _list_path(config: pytest.Config) -> Path:
    """The controller's file for the engine test ids, made on first use (one per run)."""
    path = getattr(config, "_rlenv_engine_list", None)
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="rlenv-engine-tests-")) / "engine.json"
        config._rlenv_engine_list = path  # type: ignore[attr-defined]
    return path


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """Controller: tell each worker where the engine test ids go."""
    node.workerinput[_LIST_KEY] = str(_list_path(node.config))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Worker gw0: write each engine test's scope (every worker collects the same items)."""
    workerinput = getattr(config, "workerinput", None)
    if not workerinput or workerinput.get("workerid") != _FIRST_WORKER:
        return
    target = workerinput.get(_LIST_KEY)
    if not target:
        return
    partial = f"{target}.partial"
    Path(partial).write_text(json.dumps(engine_scopes(items)))
    os.replace(partial, target)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Controller: the engine tests are two scopes, every other test its own."""
    from xdist.scheduler import LoadScopeScheduling

    path = _list_path(config)

    class EngineScopeScheduling(LoadScopeScheduling):
        """Scopes are split when every worker has collected, so gw0's file is there."""

        _scopes: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._scopes is None:
                if not path.is_file():
                    raise RuntimeError(f"worker {_FIRST_WORKER} wrote no engine test list")
                self._scopes = json.loads(path.read_text())
            return self._scopes.get(nodeid, nodeid)

    return EngineScopeScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    path = getattr(config, "_rlenv_engine_list", None)
    if path is not None:
        shutil.rmtree(path.parent, ignore_errors=True)
