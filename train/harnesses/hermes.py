"""Hermes (PyPI `hermes-agent`), installed with `pip install --target` for the task
image's Python 3.11 and run as `python3 -m hermes_cli.main` with that folder first on
PYTHONPATH, so nothing is installed into the task's own interpreter.

Hermes reads `~/.hermes/config.yaml`; its `model` section names a custom
OpenAI-compatible endpoint (the guard) and the default model (the adapter). A one-shot
run (`chat -q`) prints only the final answer, so its tool calls are counted from the
guard's exchange log instead (`count_tool_calls` returns None).
"""

from __future__ import annotations

import json

from train.harnesses.profile import HOME, HarnessProfile, RunSettings

HERMES_VERSION = "0.19.0"
PYTHON_VERSION = "3.11"
MAX_TURNS = 30


class Hermes(HarnessProfile):
    name = "hermes"
    installer = "pip"
    packages = (f"hermes-agent=={HERMES_VERSION}",)
    min_context_window = 65536
    """Hermes refuses to start on a model whose window is under 64K tokens."""

    def config(self, settings: RunSettings) -> dict[str, object]:
        return {
            "model": {
                "default": settings.model,
                "provider": "custom",
                "base_url": settings.base_url,
                "api_key": settings.api_key,
                "context_length": settings.context_window,
            },
            "agent": {"max_turns": MAX_TURNS},
        }

    def config_files(self, settings: RunSettings) -> dict[str, bytes]:
        # JSON is YAML: no YAML writer needed, and no quoting surprises in values.
        text = json.dumps(self.config(settings), indent=2) + "\n"
        return {f"{HOME}/.hermes/config.yaml": text.encode()}

    def command(self, settings: RunSettings) -> list[str]:
        return [
            "/bin/sh",
            "-c",
            "exec python3 -m hermes_cli.main chat --quiet --yolo --max-turns "
            f'{MAX_TURNS} "--model=$1" "--query=$(cat)"',
            "hermes",
            settings.model,
        ]

    def env(self, settings: RunSettings) -> dict[str, str]:
        return {
            "HOME": HOME,
            "HERMES_HOME": f"{HOME}/.hermes",
            "PYTHONPATH": self.bundle_dir,
            "OPENAI_API_KEY": settings.api_key,
            "OPENAI_BASE_URL": settings.base_url,
        }

    def count_tool_calls(self, transcript: str) -> int | None:
        return None
