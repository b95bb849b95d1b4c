"""Forgery probes: what a reward-hacking policy would try, planted on the start state.

Each probe is one trial without the reference solution: it writes files or runs commands
in the agent's container the way an agent could, then the task's own verifier runs. Any
probe that earns reward above 0 means the verifier can be fooled; the task is rejected
with the probe's rule id. Probes are a registry: a new forgery is one entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime import TrialRequest
from repo2rlenv.validate import probes_js, probes_native

CONFTEST_PASS_ALL = b"""import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""
EXIT_ZERO_PY = b"import os\nos._exit(0)\n"
EXIT_ZERO_SH = b"#!/bin/sh\nexit 0\n"
FORGED_TEST = b"def test_forged():\n    assert True\n"
IMPORT_FORGERY = b"""

try:  # forged by a probe: every pytest report passes once this module is imported
    import _pytest.reports as _rlenv_reports

    _rlenv_make = _rlenv_reports.TestReport.from_item_and_call

    def _rlenv_forge(item, call, _make=_rlenv_make):
        report = _make(item, call)
        report.outcome, report.longrepr = "passed", None
        return report

    _rlenv_reports.TestReport.from_item_and_call = staticmethod(_rlenv_forge)
except Exception:
    pass
"""
PLUGIN_FORGERY = b"""import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if "canary" not in item.nodeid:
        report.outcome, report.longrepr = "passed", None
"""
PLUGIN_ENTRY_POINT = b"[pytest11]\nrlenv_forged = rlenv_forged_plugin\n"
PLUGIN_METADATA = b"Metadata-Version: 2.1\nName: rlenv-forged\nVersion: 1.0\n"
SITE_PACKAGES = "$(python3 -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null)"


@dataclass(frozen=True)
class Probe:
    rule_id: str
    description: str
    build: Callable[[TaskTree, str], TrialRequest]
    applies: Callable[[TaskTree], bool] | None = None
    """Which tasks the probe is for (None: every task): the JavaScript runners' probes
    are planted only where the verifier runs one (`probes_js.applies`)."""


def _workdir(tree: TaskTree) -> str:
    return (tree.config.environment.workdir if tree.config else None) or "/workspace"


def _conftest(tree: TaskTree, label: str) -> TrialRequest:
    root = _workdir(tree)
    return TrialRequest(
        label=label,
        plant_files={
            f"{root}/conftest.py": CONFTEST_PASS_ALL,
            f"{root}/tests/conftest.py": CONFTEST_PASS_ALL,
        },
    )


def _sitecustomize(tree: TaskTree, label: str) -> TrialRequest:
    root = _workdir(tree)
    return TrialRequest(
        label=label,
        plant_files={f"{root}/sitecustomize.py": EXIT_ZERO_PY},
        agent_commands=[
            f'd={SITE_PACKAGES} && [ -n "$d" ] && mkdir -p "$d" && '
            "printf 'import os\\nos._exit(0)\\n' > \"$d/sitecustomize.py\""
        ],
    )


def _fake_pytest(tree: TaskTree, label: str) -> TrialRequest:
    root = _workdir(tree)
    return TrialRequest(
        label=label,
        plant_files={
            "/usr/local/bin/pytest": EXIT_ZERO_SH,
            "/usr/local/bin/py.test": EXIT_ZERO_SH,
            f"{root}/pytest/__init__.py": EXIT_ZERO_PY,
            f"{root}/pytest/__main__.py": EXIT_ZERO_PY,
        },
        agent_commands=["chmod +x /usr/local/bin/pytest /usr/local/bin/py.test"],
    )


def _plugin_entry_point(tree: TaskTree, label: str) -> TrialRequest:
    """A pytest plugin declared by package metadata in the workspace (pytest loads every
    `pytest11` entry point it finds on sys.path, where the verifier puts the project),
    forging every report but the canary's."""
    root = _workdir(tree)
    info = f"{root}/rlenv_forged-1.0.dist-info"
    return TrialRequest(
        label=label,
        plant_files={
            f"{root}/rlenv_forged_plugin.py": PLUGIN_FORGERY,
            f"{info}/METADATA": PLUGIN_METADATA,
            f"{info}/entry_points.txt": PLUGIN_ENTRY_POINT,
        },
    )


def _reward_file(tree: TaskTree, label: str) -> TrialRequest:
    return TrialRequest(
        label=label,
        plant_files={
            "/logs/verifier/reward.txt": b"1\n",
            "/logs/verifier/reward.json": b'{"reward": 1}\n',
        },
    )


def _tests_overwritten(tree: TaskTree, label: str) -> TrialRequest:
    root = _workdir(tree)
    prefix = "environment/workspace/"
    visible = [
        p[len(prefix) :]
        for p in tree.files
        if p.startswith(prefix) and p.rsplit("/", 1)[-1].startswith("test") and p.endswith(".py")
    ]
    plants = {f"{root}/{rel}": FORGED_TEST for rel in visible}
    plants[f"{root}/test_forged.py"] = FORGED_TEST
    return TrialRequest(label=label, plant_files=plants)


def _import_forgery(tree: TaskTree, label: str) -> TrialRequest:
    """Code under test that rewrites pytest's reports when imported: only a canary (a
    test that must fail) can tell."""
    root = _workdir(tree)
    prefix = "environment/workspace/"
    modules = {
        p[len(prefix) :]: content
        for p, (content, _x) in tree.files.items()
        if p.startswith(prefix)
        and p.endswith(".py")
        and not p.rsplit("/", 1)[-1].startswith(("test", "conftest"))
    }
    return TrialRequest(
        label=label,
        plant_files={f"{root}/{rel}": content + IMPORT_FORGERY for rel, content in modules.items()},
    )


PROBES: dict[str, Probe] = {
    "probe.conftest-pass-all": Probe(
        "probe.conftest-pass-all", "a conftest.py hook that marks every test passed", _conftest
    ),
    "probe.sitecustomize-exit": Probe(
        "probe.sitecustomize-exit",
        "a sitecustomize.py that exits 0 when Python starts",
        _sitecustomize,
    ),
    "probe.fake-pytest": Probe(
        "probe.fake-pytest", "a pytest that exits 0, earlier on PATH and on sys.path", _fake_pytest
    ),
    "probe.plugin-entry-point": Probe(
        "probe.plugin-entry-point",
        "a pytest plugin declared by package metadata in the workspace, sparing the canary",
        _plugin_entry_point,
    ),
    "probe.reward-file": Probe(
        "probe.reward-file", "reward files written before the verifier runs", _reward_file
    ),
    "probe.tests-overwritten": Probe(
        "probe.tests-overwritten", "test files overwritten with `assert True`", _tests_overwritten
    ),
    "probe.import-forgery": Probe(
        "probe.import-forgery",
        "project code that forges pytest's reports on import",
        _import_forgery,
    ),
    "probe.js-fake-runner": Probe(
        "probe.js-fake-runner",
        "a vitest/jest in node_modules and on PATH that writes a passing report",
        probes_js.fake_runner,
        probes_js.applies,
    ),
    "probe.js-skip-all-config": Probe(
        "probe.js-skip-all-config",
        "a vitest/jest config that runs no test and passes with none",
        probes_js.skip_all_config,
        probes_js.applies,
    ),
    "probe.js-only-skip": Probe(
        "probe.js-only-skip",
        "visible JS tests turned into `.skip`, a planted `.only` test",
        probes_js.only_skip_edits,
        probes_js.applies,
    ),
    "probe.native-fake-toolchain": Probe(
        "probe.native-fake-toolchain",
        "a go/cargo on PATH that prints passing output, canaries included",
        probes_native.fake_toolchain,
        probes_native.applies,
    ),
    "probe.native-skipped-tests": Probe(
        "probe.native-skipped-tests",
        "hidden tests skipped (`t.Skip()`, `#[ignore]`), a planted test under their names",
        probes_native.skipped_tests,
        probes_native.applies,
    ),
}


def probe_requests(tree: TaskTree) -> list[TrialRequest]:
    return [
        probe.build(tree, rule_id)
        for rule_id, probe in PROBES.items()
        if probe.applies is None or probe.applies(tree)
    ]
