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

from train.serving.install import DEFAULT_VENV, venv_python

SCRIPTED_COMMAND = "curl -s https://example.org/data.csv"
SCRIPT = (
    "<tool_call>",
    '\n{"name": "bash", "arguments": ',
    '{"command": "' + SCRIPTED_COMMAND + '"',
    "}}\n",
    "</tool_call>",
)
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
