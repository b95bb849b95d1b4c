"""The real upstream the vLLM tests use: a scripted tiny model on vLLM's CPU build.

The model (`train.serving.tiny_model`, built at test time, no weights committed)
always answers with one tool call, `bash {"command": "curl -s https://example.org/data.csv"}`:
a real vLLM response on every route, whose verdict depends only on the conversation
(allowed when the instruction names example.org, blocked otherwise). Requests that add
vLLM's `structured_outputs` regex get exactly the calls the regex spells.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from train.serving.install import DEFAULT_VENV, venv_python

SCRIPTED_URL = "https://example.org/data.csv"
SCRIPTED_COMMAND = f"curl -s {SCRIPTED_URL}"
SHOWN = f"Fetch {SCRIPTED_URL} and summarise it."
"""An instruction that names the host the scripted call reaches: the call is allowed."""
NOT_SHOWN = "Summarise the data file."
"""An instruction that does not: the call is blocked (network.unseen-host)."""
SCRIPT = (
    "<tool_call>",
    '\n{"name": "bash", "arguments": ',
    '{"command": "' + SCRIPTED_COMMAND + '"',
    "}}\n",
    "</tool_call>",
)


def assert_anthropic_verdict(message: Any, shown: bool) -> None:
    """An Anthropic response to the scripted call: the call itself where the instruction
    named its host, else the guard's notice in its place."""
    if shown:
        assert message.content[0].type == "tool_use"
        assert message.content[0].input == {"command": SCRIPTED_COMMAND}
        assert message.stop_reason == "tool_use"
    else:
        assert [b.type for b in message.content] == ["text"]
        assert "network.unseen-host" in message.content[0].text
        assert message.stop_reason == "end_turn"


BASH_SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string"}},
    "required": ["command"],
}
OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command.",
            "parameters": BASH_SCHEMA,
        },
    }
]
ANTHROPIC_TOOLS = [
    {"name": "bash", "description": "Run a shell command.", "input_schema": BASH_SCHEMA}
]


def build_scripted_model(out_dir: Path, venv: Path = DEFAULT_VENV) -> Path:
    """Builds in the vLLM virtualenv (torch and transformers live there)."""
    command = [str(venv_python(venv)), "-m", "train.serving.tiny_model", str(out_dir)]
    for piece in SCRIPT:
        command += ["--script", piece]
    subprocess.run(
        command, check=True, cwd=Path(__file__).resolve().parents[2], capture_output=True
    )
    return out_dir


def forced_calls_regex(commands: list[str]) -> str:
    """A `structured_outputs.regex` making the model emit these bash calls (hermes)."""
    calls = [
        "<tool_call>\n"
        + json.dumps({"name": "bash", "arguments": {"command": c}})
        + "\n</tool_call>"
        for c in commands
    ]
    return re.escape("\n".join(calls))
