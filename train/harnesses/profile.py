"""What every harness profile declares (the registry of profiles is `registry`).

A profile is the whole difference between harnesses: which pinned packages make up its
bundle, the files that point it at the guard, the command line that runs one
instruction non-interactively, and how to count the tool calls it executed. Everything
else (bundle cache, image layer, container, verifier, turns) is shared, so a new
harness is one small module with a profile, listed in `train.harnesses.registry`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

HARNESS_ROOT = "/opt/rlenv-harness"
"""Where the harness layer puts bundles: `<HARNESS_ROOT>/<name>/`."""
RUN_DIR = "/tmp/rlenv-harness"
"""Per-rollout files inside the agent container: the instruction, HOME, the transcript."""
INSTRUCTION_PATH = f"{RUN_DIR}/instruction.md"
TRANSCRIPT_PATH = f"{RUN_DIR}/transcript.jsonl"
STDERR_PATH = f"{RUN_DIR}/stderr.txt"
HOME = f"{RUN_DIR}/home"

Installer = Literal["npm", "pip"]


class RunSettings(BaseModel):
    """What a profile needs to render one run: where the model is and what it is called."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(description="OpenAI-compatible base URL ending in /v1 (the guard).")
    model: str = Field(min_length=1, description="Model name the harness sends: the adapter.")
    context_window: int = Field(default=16384, ge=1024)
    max_tokens: int = Field(default=1024, ge=1)
    api_key: str = "rlenv-harvest"


class HarnessProfile(ABC):
    """One harness. Subclasses set the class attributes and implement the four methods."""

    name: ClassVar[str]
    installer: ClassVar[Installer]
    packages: ClassVar[tuple[str, ...]]
    """Exact pins (`name@1.2.3` for npm, `name==1.2.3` for pip): the bundle's identity."""
    install_flags: ClassVar[tuple[str, ...]] = ()
    """Extra installer options; part of the bundle's identity like the pins."""
    transcript_marker: ClassVar[str | None] = None
    """A fixed string on every stdout line `count_tool_calls` needs: only those lines are
    read back, since a JSON event stream can repeat the growing message on every token."""
    min_context_window: ClassVar[int] = 16384
    """Smallest server context the harness works with (its system prompt and tool list
    under the tiny model's byte-level tokenizer, or a floor the harness enforces)."""

    @property
    def bundle_dir(self) -> str:
        return f"{HARNESS_ROOT}/{self.name}"

    @abstractmethod
    def config_files(self, settings: RunSettings) -> dict[str, bytes]:
        """Files to write before the run, by absolute container path (under HOME)."""

    @abstractmethod
    def command(self, settings: RunSettings) -> list[str]:
        """argv of a non-interactive run. The instruction arrives on stdin, never in this
        argv, so no text of a task can become a shell word; a harness without a stdin mode
        (Hermes) makes it one `--option=` argument inside the container."""

    def env(self, settings: RunSettings) -> dict[str, str]:
        return {"HOME": HOME}

    @abstractmethod
    def count_tool_calls(self, transcript: str) -> int | None:
        """Tool calls the harness executed, from its stdout; None when it cannot tell."""


def json_lines(text: str) -> list[dict[str, object]]:
    """The JSON objects of a JSONL stream; other lines (banners, partial lines) skipped."""
    events = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


class UnknownHarnessError(KeyError):
    reason = "harness.unknown"
