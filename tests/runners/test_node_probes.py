"""The JavaScript runners' forgery probes: planted only on tasks whose verifier runs a
JavaScript runner, in the folder it runs from (tests/test_probes_docker.py runs the
pytest ones for real; docs/runners.md records a Docker run of these)."""

from __future__ import annotations

import json

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.kinds import KINDS
from repo2rlenv.replay import replay
from repo2rlenv.validate.probes import PROBES, probe_requests
from repo2rlenv.validate.probes_js import FORGED_REPORT
from tests.runners.test_node_build import CTX, session

JS_PROBES = ["probe.js-fake-runner", "probe.js-skip-all-config", "probe.js-only-skip"]


def _tree(tmp_path):
    (bundle,) = list(KINDS["build"](replay(session()), CTX))
    return read_task_dir(write_bundle(bundle, tmp_path).path)


def test_a_javascript_task_gets_the_javascript_probes(tmp_path):
    labels = [r.label for r in probe_requests(_tree(tmp_path))]
    assert [p for p in labels if p.startswith("probe.js-")] == JS_PROBES
    assert set(JS_PROBES) <= set(PROBES)


def test_the_fake_runner_forges_a_report_with_intact_canaries(tmp_path):
    """Only a verifier that brings its own runner is safe: the canaries in the forged
    report are right, so the canary check alone would not catch it."""
    request = PROBES["probe.js-fake-runner"].build(_tree(tmp_path), "probe.js-fake-runner")
    forged = request.plant_files["/workspace/node_modules/vitest/vitest.mjs"]
    assert b"--outputFile=" in forged and b"import fs from 'fs'" in forged
    titles = {
        c["title"]: c["status"]
        for r in json.loads(FORGED_REPORT)["testResults"]
        for c in r["assertionResults"]
    }
    assert titles["rlenv_canary_must_fail"] == "failed"


def test_skip_and_only_edits_reach_the_visible_tests(tmp_path):
    tree = _tree(tmp_path)
    tree.files["environment/workspace/src/old.test.js"] = (b"test('a', () => {})\n", False)
    request = PROBES["probe.js-only-skip"].build(tree, "probe.js-only-skip")
    assert request.plant_files["/workspace/src/old.test.js"] == b"test.skip('a', () => {})\n"
    assert b"test.only" in request.plant_files["/workspace/rlenv-forged.test.js"]
    config = PROBES["probe.js-skip-all-config"].build(tree, "probe.js-skip-all-config")
    assert {"/workspace/vitest.config.js", "/workspace/jest.config.js"} <= set(config.plant_files)


def test_an_own_runner_task_s_mapping_is_no_runner_name(tmp_path):
    """Django's and SymPy's verifiers keep a mapping under `runner` (command, labels,
    canary): the per-runner probes read no name from it, and validate plants the
    Python probes instead of crashing (`TypeError: unhashable type: 'dict'` ended every
    validate of a Django task)."""
    tree = _tree(tmp_path)
    entry = tree.files["tests/grading.json"]
    for shape in ({"repo": "django/django", "argv": ["tests/runtests.py"]}, ["vitest"], 7):
        settings = {**json.loads(entry[0]), "runner": shape}
        tree.files["tests/grading.json"] = (json.dumps(settings).encode(), *entry[1:])
        labels = [r.label for r in probe_requests(tree)]
        assert not any(p.startswith(("probe.js-", "probe.native-")) for p in labels), shape
        assert labels, shape
