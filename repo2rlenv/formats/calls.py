"""A tool call as the readers collect it, before a tool profile turns it into an action.

Readers fill `ToolResult` with what the harness showed, already unwrapped from the
format's framing (Codex's "Output:" header, Hermes' JSON envelope, OpenHands'
"OBSERVATION:" prefix), so the profiles in `formats.tools` only decide what the call
*did*, never how a harness prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolResult:
    text: str | None = None
    """The output as shown, framing removed; None when the result carried no text."""
    is_error: bool = False
    """The harness flagged the call as failed (isError, is_error, status error...)."""
    exit_code: int | None = None
    """Only when the format records one; never guessed from the text of other tools."""
    data: Any = None
    """Structured result the format keeps beside the text (toolUseResult, metadata...)."""


@dataclass
class Call:
    step_id: int
    call_id: str
    name: str
    args: dict[str, Any]
    result: ToolResult | None = None
    context: dict[str, Any] = field(default_factory=dict)
    """Facts the reader knows but the arguments do not carry: the shell's current
    directory, the file an editor has open, a patch event's `changes` map."""

    @property
    def ran_ok(self) -> bool:
        """A call counts as applied only when a result arrived without an error flag and
        without a non-zero exit code: a call whose result never came (aborted turn, cut
        session) must not be replayed as if it had happened."""
        result = self.result
        if result is None or result.is_error:
            return False
        return result.exit_code in (None, 0)
