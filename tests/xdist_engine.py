"""pytest plugin: under pytest-xdist, the engine tests run in two lanes, each in one worker.

`make test` runs pytest in two workers (`-n 2`). The engine tests (Docker, Harbor, vLLM,
end-to-end) run one after another within their lane, as in a single process:

- the **vLLM lane** (tests marked `vllm`): every vLLM CPU server the suite starts, so only
  one runs at a time (its threads are pinned to the machine's cores, and its tests'
  timeouts are sized for one server);
- the **Docker lane** (every other engine test): Docker builds and trials, Harbor runs.

The two lanes run side by side, and the unit tests fill whichever worker is free. This is
safe because every cleanup test counts only what its own process or run started (labels
carrying the pid, the run id or the session prefix), never the engine's whole state;
measured in docs/ci-time.md (the Docker lane alone left 40% of the cores idle).

Why not `xdist_group` + `--dist loadgroup`: pytest-xdist 3.8 writes the group into
`item._nodeid`, which pytest 9.2 no longer reads (a node id derives from `item._id`), so
the group is lost and the engine tests go to both workers. Here the controller's own
scheduler decides instead: it only sees node ids, so worker gw0 writes the engine tests'
ids and lanes to a file during its collection, and `LoadScopeScheduling` treats each lane
as one scope (one scope runs in one worker, in order; the largest scopes are handed out
first, so with two workers each lane starts in its own).
Without xdist, or with `-n 0`, nothing here runs.
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
VLLM_SCOPE = "engine-vllm"

_LIST_KEY = "rlenv_engine_list"
_FIRST_WORKER = "gw0"


def is_engine_test(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(marker) for marker in ENGINE_MARKERS):
        return True
    return any(name in ENGINE_FIXTURES for name in getattr(item, "fixturenames", ()))


def engine_scope(item: pytest.Item) -> str | None:
    """The lane of an engine test (None for a unit test)."""
    if not is_engine_test(item):
        return None
    return VLLM_SCOPE if item.get_closest_marker("vllm") else ENGINE_SCOPE


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
    """Worker gw0: write the engine tests' ids and lanes (every worker collects the same
    items)."""
    workerinput = getattr(config, "workerinput", None)
    if not workerinput or workerinput.get("workerid") != _FIRST_WORKER:
        return
    target = workerinput.get(_LIST_KEY)
    if not target:
        return
    partial = f"{target}.partial"
    lanes = {item.nodeid: engine_scope(item) for item in items}
    Path(partial).write_text(json.dumps({k: v for k, v in lanes.items() if v is not None}))
    os.replace(partial, target)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Controller: each lane of engine tests is one scope, every other test its own."""
    from xdist.scheduler import LoadScopeScheduling

    path = _list_path(config)

    class EngineScopeScheduling(LoadScopeScheduling):
        """Scopes are split when every worker has collected, so gw0's file is there."""

        _engine: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._engine is None:
                if not path.is_file():
                    raise RuntimeError(f"worker {_FIRST_WORKER} wrote no engine test list")
                self._engine = json.loads(path.read_text())
            return self._engine.get(nodeid, nodeid)

    return EngineScopeScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    path = getattr(config, "_rlenv_engine_list", None)
    if path is not None:
        shutil.rmtree(path.parent, ignore_errors=True)
