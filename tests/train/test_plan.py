from __future__ import annotations

from pathlib import Path

import pytest

import train.launch.plan
from train.data.config import resolve_config
from train.guard.upstream import KEEPALIVE_S
from train.launch.plan import build_plan, training_blockers
from train.serving.server import ServerOptions, server_env


@pytest.mark.parametrize(
    ("preset", "server_gpus", "trainer_gpus", "sessions"),
    [
        ("lfm2.5-24b-a2b", [0], [1, 2, 3], 48),
        ("lfm3-1.7b", [0], [1, 1, 1], 48),
        ("twil-8b", [0], [1, 2, 3], 12),
    ],
)
def test_layout_of_each_preset(
    preset: str, server_gpus: list[int], trainer_gpus: list[int], sessions: int
) -> None:
    config = resolve_config(preset=preset)
    plan = build_plan(config, train_tasks=10, heldout_tasks=2, weight_by_kind={"build": 1.0})
    assert plan.server.gpus == server_gpus
    assert [t.gpu for t in plan.trainers] == trainer_gpus
    assert {t.sessions for t in plan.trainers} == {sessions}
    assert plan.total_sessions == 3 * sessions
    assert [t.task_groups_in_flight for t in plan.trainers] == [max(1, sessions // 8)] * 3
    names = [t.adapter for t in plan.trainers]
    assert len(set(names)) == 3 and config.model not in names
    # every trainer keeps its staleness window loaded, plus one adapter being swapped in
    assert plan.server.max_loras >= 3 * (config.max_staleness + 2)
    flag = plan.server.command.index("--max-loras")
    assert plan.server.command[flag + 1] == str(plan.server.max_loras)
    assert "--enable-lora" in plan.server.command
    # the plan shows the environment the run starts vLLM with (idle connections kept)
    keep_alive_key = "VLLM_HTTP_TIMEOUT_KEEP_ALIVE"
    keep_alive = plan.server.env[keep_alive_key]
    assert server_env(ServerOptions(model=Path(config.model)))[keep_alive_key] == keep_alive
    assert int(keep_alive) > KEEPALIVE_S


def test_two_server_gpus_become_tensor_parallel() -> None:
    config = resolve_config(preset="lfm3-1.7b", overrides=[("gpus", 3)])
    plan = build_plan(config, 1, 0, {})
    assert plan.server.gpus == [0, 1]
    tp = plan.server.command.index("--tensor-parallel-size")
    assert plan.server.command[tp + 1] == "2"
    assert {t.gpu for t in plan.trainers} == {2}


def test_blockers(monkeypatch: pytest.MonkeyPatch) -> None:
    config = resolve_config(preset="lfm3-1.7b")
    with_url = resolve_config(preset="lfm3-1.7b", overrides=[("server.url", "http://h:8000")])
    monkeypatch.setattr(train.launch.plan, "missing_packages", lambda names: [])
    assert training_blockers(with_url, gpus=1) == []
    assert training_blockers(config, gpus=2) == []
    assert any("2 GPUs" in b for b in training_blockers(config, gpus=1))
    assert any("vLLM server" in b for b in training_blockers(config, gpus=0))
    monkeypatch.setattr(train.launch.plan, "missing_packages", lambda names: list(names))
    blockers = training_blockers(with_url, gpus=1)
    assert len(blockers) == 1 and "[train] extra" in blockers[0] and "torch" in blockers[0]
    assert any("[serve] extra" in b for b in training_blockers(config, gpus=2))


def test_count_gpus_without_a_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(train.launch.plan.shutil, "which", lambda name: None)
    assert train.launch.plan.count_gpus() == 0


def test_count_gpus_reads_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text(
        "#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-1)'\n"
        "echo '  MIG 1g.18gb Device 0: (UUID: MIG-1)'\necho 'GPU 1: NVIDIA H200 (UUID: GPU-2)'\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(train.launch.plan.shutil, "which", lambda name: str(fake))
    assert train.launch.plan.count_gpus() == 2
    fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    assert train.launch.plan.count_gpus() == 0
