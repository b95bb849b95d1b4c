"""opencode (npm `opencode-ai`; the executable itself is in the platform package
`opencode-linux-x64`, a self-contained Bun build, so no Node is needed).

Its OpenAI-compatible provider (`@ai-sdk/openai-compatible`) is bundled into the
executable, so nothing is fetched at run time; the environment switches off the
models.dev fetch, auto-update, LSP downloads and default plugins, which would all try
the network. `run --format json` prints one event per line; executed tool calls are
the `tool_use` events.
"""

from __future__ import annotations

import json

from train.harnesses.profile import HOME, HarnessProfile, RunSettings, json_lines

OPENCODE_VERSION = "1.18.33"
PROVIDER = "rlenv"
CONFIG_PATH = f"{HOME}/.config/opencode/opencode.json"
OFFLINE_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
}


class OpenCode(HarnessProfile):
    name = "opencode"
    installer = "npm"
    transcript_marker = '"type":"tool_use"'
    packages = (f"opencode-ai@{OPENCODE_VERSION}", f"opencode-linux-x64@{OPENCODE_VERSION}")
    install_flags = ("--omit=optional",)
    """`opencode-ai` lists every platform's build as optional; npm would add the x64
    baseline and musl builds too (177 MB each). The one used is named explicitly."""
    min_context_window = 32768
    """Its first prompt is just over 16K tokens under the tiny model's tokenizer."""

    def config(self, settings: RunSettings) -> dict[str, object]:
        return {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": f"{PROVIDER}/{settings.model}",
            "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow"},
            "provider": {
                PROVIDER: {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": PROVIDER,
                    "options": {"baseURL": settings.base_url, "apiKey": settings.api_key},
                    "models": {
                        settings.model: {
                            "name": settings.model,
                            "tool_call": True,
                            "limit": {
                                "context": settings.context_window,
                                "output": settings.max_tokens,
                            },
                        }
                    },
                }
            },
        }

    def config_files(self, settings: RunSettings) -> dict[str, bytes]:
        return {CONFIG_PATH: (json.dumps(self.config(settings), indent=2) + "\n").encode()}

    def command(self, settings: RunSettings) -> list[str]:
        return [
            f"{self.bundle_dir}/node_modules/opencode-linux-x64/bin/opencode",
            "run",
            "--model",
            f"{PROVIDER}/{settings.model}",
            "--format",
            "json",
        ]

    def env(self, settings: RunSettings) -> dict[str, str]:
        return {"HOME": HOME, "OPENCODE_CONFIG": CONFIG_PATH, **OFFLINE_ENV}

    def count_tool_calls(self, transcript: str) -> int | None:
        events = json_lines(transcript)
        if not events:
            return None
        calls = set()
        for i, event in enumerate(events):
            if event.get("type") != "tool_use":
                continue
            part = event.get("part")
            call_id = part.get("callID") if isinstance(part, dict) else None
            calls.add(str(call_id or f"#{i}"))
        return len(calls)
