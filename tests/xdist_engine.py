"""pytest plugin: under pytest-xdist, every engine test runs in one worker, one at a time.

`make test` runs pytest in two workers (`-n 2`). The engine tests (Docker, Harbor, vLLM,
end-to-end) must stay one after another, as in a single process: they share what no test
owns alone (the engine's containers, labels and networks, which the cleanup tests count;
the machine's cores, which a vLLM CPU server's threads are pinned to; timeouts sized for
one trial at a time). The other worker runs the unit tests beside them. Measured in
docs/ci-time.md.

Why not `xdist_group` + `--dist loadgroup`: pytest-xdist 3.8 writes the group into
`item._nodeid`, which pytest 9.2 no longer reads (a node id derives from `item._id`), so
the group is lost and the engine tests go to both workers. Here the controller's own
scheduler decides instead: it only sees node ids, so worker gw0 writes the engine tests'
ids to a file during its collection, and `LoadScopeScheduling` treats them as one scope
(one scope runs in one worker, in order). Without xdist, or with `-n 0`, nothing here runs.
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

ENGINE_SCOPE = "engine"

_LIST_KEY = "rlenv_engine_list"
_FIRST_WORKER = "gw0"


def is_engine_test(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(marker) for marker in ENGINE_MARKERS):
        return True
    return any(name in ENGINE_FIXTURES for name in getattr(item, "fixturenames", ()))


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
    """Worker gw0: write the engine tests' ids (every worker collects the same items)."""
    workerinput = getattr(config, "workerinput", None)
    if not workerinput or workerinput.get("workerid") != _FIRST_WORKER:
        return
    target = workerinput.get(_LIST_KEY)
    if not target:
        return
    partial = f"{target}.partial"
    Path(partial).write_text(json.dumps([item.nodeid for item in items if is_engine_test(item)]))
    os.replace(partial, target)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Controller: engine tests are one scope, every other test its own."""
    from xdist.scheduler import LoadScopeScheduling

    path = _list_path(config)

    class EngineScopeScheduling(LoadScopeScheduling):
        """Scopes are split when every worker has collected, so gw0's file is there."""

        _engine: frozenset[str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._engine is None:
                if not path.is_file():
                    raise RuntimeError(f"worker {_FIRST_WORKER} wrote no engine test list")
                self._engine = frozenset(json.loads(path.read_text()))
            return ENGINE_SCOPE if nodeid in self._engine else nodeid

    return EngineScopeScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    path = getattr(config, "_rlenv_engine_list", None)
    if path is not None:
        shutil.rmtree(path.parent, ignore_errors=True)
