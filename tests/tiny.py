"""The offline tiny model and LoRA adapters on it, for the tests that need real weights.

The model is built by the vLLM virtualenv's interpreter (as `python -m train` builds it,
so server and trainer load the same files); adapters by this interpreter's peft, in a
child process so torch's threads and memory go away with it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from train.serving.install import DEFAULT_VENV, is_installed, venv_python

REPO = Path(__file__).resolve().parents[1]
ADAPTER_PROGRAM = """
import sys, torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM
model_dir, out, seed, rank, alpha, random = sys.argv[1:7]
torch.manual_seed(int(seed))
model = AutoModelForCausalLM.from_pretrained(model_dir)
config = LoraConfig(r=int(rank), lora_alpha=int(alpha), target_modules="all-linear",
                    init_lora_weights=random != "1")
get_peft_model(model, config).save_pretrained(out)
"""


def build_tiny_model(folder: Path, *extra: str) -> Path:
    """`train.serving.tiny_model` into `folder`; `extra` are its options (`--script`...)."""
    if not is_installed():
        pytest.fail("the vLLM virtualenv is missing: run `python -m train.serving.install`")
    subprocess.run(
        [str(venv_python(DEFAULT_VENV)), "-m", "train.serving.tiny_model", str(folder), *extra],
        check=True,
        cwd=REPO,
        capture_output=True,
    )
    return folder


def build_adapter(
    model: Path, out: Path, *, seed: int = 0, rank: int = 8, alpha: int = 16, random: bool = True
) -> Path:
    """A peft LoRA adapter on `model`. `random=False` gives the identity adapter (B = 0):
    served by name, it answers exactly like the base model."""
    args = [str(model), str(out), str(seed), str(rank), str(alpha), "1" if random else "0"]
    subprocess.run([sys.executable, "-c", ADAPTER_PROGRAM, *args], check=True, capture_output=True)
    return out
