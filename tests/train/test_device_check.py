"""The device check (`python -m train.device_check`) and the GPU hookup of the real run.

The slow tests run the whole check on this machine's CPU, where the code is the same as
on a GPU machine but the server is the vLLM CPU build and the model the tiny one: in CI
against the train tests' shared server (the `server.url` path), in the extended suite
starting its own. The quick ones cover what fails before anything starts, the GPU split between
server and trainers, and the verdict on recorded trainer output.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from train.data.config import resolve_config
from train.device_check.__main__ import REPORT, early_missing
from train.device_check.__main__ import main as check_main
from train.device_check.check import CheckError, check_config, judge, run_check
from train.device_check.proof import AdapterProof, ask_server, prove
from train.device_check.trainer import REQUESTS, SLOTS
from train.grpo.trainer_process import OUTCOME, TrainerSpec
from train.launch.errors import RunError
from train.launch.plan import build_plan, gpu_layout, training_blockers
from train.launch.run import trainer_env
from train.launch.services import check_server_python, server_python, visible_gpus
from train.serving.install import DEFAULT_VENV, is_installed, venv_python
from train.serving.server import ServerOptions, server_command

REPO = Path(__file__).resolve().parents[2]
NO_VLLM_HERE = importlib.util.find_spec("vllm") is None


# -- before anything starts ------------------------------------------------------------
@pytest.mark.skipif(not NO_VLLM_HERE, reason="this interpreter has vllm")
def test_a_server_python_without_vllm_fails_early_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(CheckError, match=r"^device\.no-vllm: missing packages: vllm") as info:
        run_check(tmp_path / "out", device="cpu", server_python=Path(sys.executable))
    assert sys.executable in str(info.value)
    assert not (tmp_path / "out").exists()  # refused before any model or server
    argv = ["--device", "cpu", "--server-python", sys.executable, "--out", str(tmp_path / "o")]
    assert check_main(argv) == 2
    assert "device.no-vllm" in capsys.readouterr().err.replace("\n", "")


@pytest.mark.skipif(not NO_VLLM_HERE, reason="this interpreter has vllm")
def test_a_gpu_check_without_vllm_lists_every_missing_package_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a GPU machine without vllm answers: looked up before any project import."""
    assert early_missing(server_here=False) == []  # this venv has the trainer's packages
    assert early_missing(server_here=True) == ["vllm"]
    assert check_main(["--device", "gpu", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"device.no-vllm: missing packages in {sys.executable}: vllm"
    )
    assert not (tmp_path / "o").exists()


def test_a_python_that_does_not_run_and_a_url_without_model_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CheckError, match=r"^device\.bad-python"):
        run_check(tmp_path, device="cpu", server_python=tmp_path / "no-python")
    with pytest.raises(CheckError, match=r"^device\.bad-args"):
        run_check(tmp_path, device="cpu", server_url="http://127.0.0.1:9")


def test_the_check_trains_two_adapters_one_step_each() -> None:
    config = check_config()
    assert config.harnesses == ["pi", "hermes"] and config.steps == 1
    assert config.lora.r == 32 and config.rollouts_per_task >= 2


# -- GPU hookup of the real run ----------------------------------------------------------
def test_gpu_layout_gives_the_server_its_gpus_and_packs_trainers() -> None:
    shared = resolve_config(preset="lfm3-1.7b")  # 2 GPUs, three trainers on one
    assert gpu_layout(shared) == ([0], {"pi": 1, "opencode": 1, "hermes": 1})
    split = resolve_config(preset="twil-8b")  # 4 GPUs, one trainer each
    assert gpu_layout(split) == ([0], {"pi": 1, "opencode": 2, "hermes": 3})
    wide = resolve_config(preset="lfm2.5-24b-a2b", overrides=[("gpus", 5)])
    servers, trainers = gpu_layout(wide)
    assert servers == [0, 1] and sorted(trainers.values()) == [2, 3, 4]
    plan = build_plan(wide, 1, 1, {})
    assert plan.server.gpus == servers
    assert {t.harness: t.gpu for t in plan.trainers} == trainers
    assert gpu_layout(resolve_config(preset="tiny-cpu")) == ([], {"pi": -1})
    remote = resolve_config(preset="twil-8b", overrides=[("server.url", "http://h:8000")])
    assert gpu_layout(remote) == ([], {"pi": 0, "opencode": 1, "hermes": 2})


def test_each_trainer_process_sees_only_its_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert trainer_env(3)["CUDA_VISIBLE_DEVICES"] == "3"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6,7")  # the run was given GPUs 4-7
    assert trainer_env(1)["CUDA_VISIBLE_DEVICES"] == "5"
    assert visible_gpus([0, 1]) == ["4", "5"]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert trainer_env(-1).get("CUDA_VISIBLE_DEVICES") == os.environ.get("CUDA_VISIBLE_DEVICES")


def test_server_command_uses_the_given_interpreter_and_dtype(tmp_path: Path) -> None:
    options = ServerOptions(model=tmp_path, python=Path("/opt/gpu/bin/python"), dtype="auto",
                            gpu_memory_utilization=0.9)  # fmt: skip
    command = server_command(options, 8000)
    assert command[:3] == ["/opt/gpu/bin/python", "-m", "vllm.entrypoints.openai.api_server"]
    joined = " ".join(command)
    assert "--dtype auto" in joined and "--gpu-memory-utilization 0.9" in joined
    assert server_command(ServerOptions(model=tmp_path), 1)[0] == str(venv_python(DEFAULT_VENV))


def test_the_run_picks_the_server_interpreter_and_refuses_one_without_vllm(
    tmp_path: Path,
) -> None:
    gpu = resolve_config(preset="lfm3-1.7b")
    assert server_python(gpu) == Path(sys.executable)
    assert server_python(resolve_config(preset="tiny-cpu")) == venv_python(DEFAULT_VENV)
    missing = resolve_config(preset="lfm3-1.7b", overrides=[("server.python", str(tmp_path))])
    with pytest.raises(RunError, match=r"^run\.no-vllm: .* does not run"):
        check_server_python(missing)
    assert any("server.python" in b for b in training_blockers(missing, gpus=2))
    if NO_VLLM_HERE:
        with pytest.raises(RunError, match=r"^run\.no-vllm: .* lacks the vllm package"):
            check_server_python(gpu)


@pytest.mark.vllm
def test_a_configured_server_python_with_vllm_is_used() -> None:
    if not is_installed():
        pytest.fail("the vLLM virtualenv is missing: run `python -m train.serving.install`")
    python = str(venv_python(DEFAULT_VENV))
    config = resolve_config(preset="lfm3-1.7b", overrides=[("server.python", python)])
    assert check_server_python(config) == Path(python)
    assert not any("server.python" in b for b in training_blockers(config, gpus=2))


# -- the verdict on what trainers left behind -----------------------------------------------
def _home(tmp_path: Path, harness: str, requests: list[dict], slots: list[dict], same: bool):
    import torch
    from safetensors.torch import save_file

    home = tmp_path / harness
    for version in (1, 2):
        folder = home / "adapters" / f"{harness}-policy-v{version}"
        folder.mkdir(parents=True)
        value = 0.0 if same or version == 1 else 1e-5
        save_file({"x.lora_B.weight": torch.full((2, 2), value)},
                  str(folder / "adapter_model.safetensors"))  # fmt: skip
    (home / OUTCOME).write_text(json.dumps({"harness": harness, "steps": 1, "version": 2,
                                            "adapters": str(home / "adapters")}))  # fmt: skip
    (home / REQUESTS).write_text("".join(json.dumps(r) + "\n" for r in requests))
    (home / SLOTS).write_text("".join(json.dumps(s) + "\n" for s in slots))
    return TrainerSpec(harness=harness, config=check_config(), tasks=[], server_url="http://x",
                       model="m", home=home, run_id="r")  # fmt: skip


def _proof(adapter: str, reason: str | None = None) -> AdapterProof:
    return AdapterProof(adapter=adapter, base="tiny", tokens_differ=False, delta=0.0 if reason
                        else 1e-4, noise=0.0, differs_from_base=reason is None, same_as=[],
                        reason=reason)  # fmt: skip


def test_judge_passes_a_clean_trainer_and_names_each_fault(tmp_path: Path) -> None:
    good = _home(tmp_path, "pi", [{"asked": "pi-policy-v1"}],
                 [{"op": "load", "name": "pi-policy-v1"}, {"op": "load", "name": "pi-policy-v2"}],
                 same=False)  # fmt: skip
    loaded = ["pi-policy-v1", "pi-policy-v2", "hermes-policy-v2"]
    result, problems = judge(good, loaded, _proof("pi-policy-v2"))
    assert problems == [] and result.v2_differs_from_v1 and result.proof is not None
    assert result.still_loaded == ["pi-policy-v1", "pi-policy-v2"]

    # The same trainer, but its v2 answers the fixed prompt as the base does: the
    # answer's `model` field (the request's, copied) would have passed it before.
    same = "pi-policy-v2 answers the fixed prompt as the base model tiny does"
    _, problems = judge(good, loaded, _proof("pi-policy-v2", same))
    assert problems == [f"pi: device.adapter-unproven: {same}"]
    _, problems = judge(good, loaded, None, "the server could not be asked for the proof: X")
    assert problems == ["pi: device.adapter-unproven: the server could not be asked for the "
                        "proof: X"]  # fmt: skip

    bad = _home(tmp_path, "hermes", [{"asked": "tiny"}],
                [{"op": "unload", "name": "pi-policy-v1"}], same=True)  # fmt: skip
    result, problems = judge(bad, ["pi-policy-v2"])
    text = " | ".join(problems)
    assert "same weights" in text and "hermes-policy-v2 was not asked" in text
    assert "not its own" in text and "not loaded at the end" in text
    assert result.foreign_names == ["pi-policy-v1", "tiny"]


# -- the whole check on this machine's CPU -------------------------------------------------
def _assert_two_adapters_trained(out: Path, report: dict) -> None:
    from safetensors.torch import load_file

    assert report["ok"], report["problems"]
    assert report["device"] == "cpu" and report["wall_s"] > 0
    assert [a["harness"] for a in report["adapters"]] == ["pi", "hermes"]
    for adapter in report["adapters"]:
        harness = adapter["harness"]
        assert (adapter["steps"], adapter["version"]) == (1, 2)
        # Proven by output: v2 answers the fixed greedy prompt unlike the base.
        proof = adapter["proof"]
        assert proof["adapter"] == f"{harness}-policy-v2" and proof["reason"] is None
        assert proof["differs_from_base"] and proof["delta"] > proof["noise"]
        folder = out / harness / "adapters"
        v1 = load_file(folder / f"{harness}-policy-v1" / "adapter_model.safetensors")
        v2 = load_file(folder / f"{harness}-policy-v2" / "adapter_model.safetensors")
        assert any(not (v1[k] == v2[k]).all() for k in v1)
        requests = [
            json.loads(line) for line in (out / harness / REQUESTS).read_text().splitlines()
        ]
        assert requests
        assert {r["asked"] for r in requests} <= {f"{harness}-policy-v1", f"{harness}-policy-v2"}
        slots = [json.loads(line) for line in (out / harness / SLOTS).read_text().splitlines()]
        assert {s["name"] for s in slots} == {f"{harness}-policy-v1", f"{harness}-policy-v2"}


@pytest.mark.slow
@pytest.mark.vllm
@pytest.mark.extended  # CI's case is the one against a running server (below): the start
# of a server is the demo's (`make train-demo`), the same `VllmServer` code
def test_device_check_runs_on_cpu_with_its_own_server(tmp_path: Path) -> None:
    if not is_installed():
        pytest.fail("the vLLM virtualenv is missing: run `python -m train.serving.install`")
    out = tmp_path / "check"
    done = subprocess.run(
        [sys.executable, "-m", "train.device_check", "--device", "cpu", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads((out / REPORT).read_text())
    assert report["server_started"]
    _assert_two_adapters_trained(out, report)
    assert "device check passed" in done.stderr.replace("\n", " ")


@pytest.mark.slow
@pytest.mark.vllm
def test_device_check_against_an_already_running_server(
    lora_server: tuple[str, Path], tmp_path: Path
) -> None:
    from train.serving.adapters import AdapterClient

    url, model = lora_server
    out = tmp_path / "check"
    report = run_check(out, model=str(model), device="cpu", server_url=url)
    assert not report.server_started and report.server_url == url
    _assert_two_adapters_trained(out, report.model_dump(mode="json"))
    # The server we started holds both trainers' newest versions, side by side.
    loaded = AdapterClient(url).loaded()
    assert {"pi-policy-v2", "hermes-policy-v2"} <= set(loaded)
    # The proof's negative on the same real server: v1 is the untrained adapter (LoRA B
    # is zero), which answers the fixed prompt exactly as the base does.
    assert "pi-policy-v1" in loaded
    (untrained,) = prove(ask_server(url), AdapterClient(url).base_model(), ["pi-policy-v1"])
    assert untrained.reason is not None and untrained.delta == 0.0
