"""What each forgery probe plants, checked without Docker (tests/test_probes_docker.py
runs them for real): a probe that plants nothing proves nothing."""

from __future__ import annotations

from pathlib import Path

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.examples import example_bundle
from repo2rlenv.validate.probes import (
    EXIT_ZERO_PY,
    FORGED_TEST,
    PROBES,
    probe_requests,
)


def _tree(tmp_path: Path):
    return read_task_dir(
        write_bundle(example_bundle("example-repair-median", "b:1"), tmp_path).path
    )


def test_one_request_per_probe_labelled_with_its_rule(tmp_path: Path) -> None:
    requests = probe_requests(_tree(tmp_path))
    # a pytest task: the JavaScript, Go and Rust runners' probes are not planted on it
    native = ("probe.js-", "probe.native-")
    assert [r.label for r in requests] == [p for p in PROBES if not p.startswith(native)]
    assert all(r.plant_files or r.agent_commands for r in requests)
    assert not any(r.apply_solution for r in requests)


def test_plugin_probe_declares_a_pytest_plugin_that_spares_the_canary(tmp_path: Path) -> None:
    request = PROBES["probe.plugin-entry-point"].build(_tree(tmp_path), "x")
    plants = {path: content.decode() for path, content in request.plant_files.items()}
    info = "/workspace/rlenv_forged-1.0.dist-info"
    assert "[pytest11]" in plants[f"{info}/entry_points.txt"]
    assert "rlenv_forged_plugin" in plants[f"{info}/entry_points.txt"]
    assert '"canary" not in item.nodeid' in plants["/workspace/rlenv_forged_plugin.py"]


def test_reward_file_probe_writes_both_reward_files(tmp_path: Path) -> None:
    request = PROBES["probe.reward-file"].build(_tree(tmp_path), "probe.reward-file")
    assert set(request.plant_files) == {"/logs/verifier/reward.txt", "/logs/verifier/reward.json"}


def test_sitecustomize_probe_plants_in_the_workspace_and_site_packages(tmp_path: Path) -> None:
    request = PROBES["probe.sitecustomize-exit"].build(_tree(tmp_path), "x")
    assert request.plant_files == {"/workspace/sitecustomize.py": EXIT_ZERO_PY}
    assert any("sitecustomize.py" in command for command in request.agent_commands)


def test_tests_overwritten_probe_replaces_every_visible_test(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    visible = [
        p.removeprefix("environment/")
        for p in tree.files
        if p.startswith("environment/workspace/") and p.rsplit("/", 1)[-1].startswith("test")
    ]
    assert visible, "the example has visible tests to overwrite"
    request = PROBES["probe.tests-overwritten"].build(tree, "x")
    for rel in visible:
        assert request.plant_files[f"/{rel}"] == FORGED_TEST
    assert request.plant_files["/workspace/test_forged.py"] == FORGED_TEST
