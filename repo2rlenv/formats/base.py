"""The reader contract: one raw record in, one parsed session (or a reasoned skip) out.

A *record* is what a source yields: a parsed JSON object (`dict`), the parsed lines of a
JSONL session file (`list[dict]`), or a list holding both good lines and the reason a
line could not be parsed. Readers never raise anything but `FormatError`, whose
`reason` is a stable code counted in the yield table.

Besides the ATIF trajectory, a reader returns the session's *actions*: each tool call
mapped, by the harness's tool profile, to what it did to the workspace. Replay only
needs actions; the trajectory is kept for provenance and for training consumers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.trajectory import Trajectory


class FormatError(Exception):
    """A record that cannot be read. `reason` is a stable code such as
    'format.unknown', 'format.truncated', 'format.bad-type', 'format.empty'."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.source_format: str | None = None
        """The format detected before its reader refused the record (set by
        read_record), so the yield counts the refusal under that format."""


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    step_id: int = Field(description="ATIF step the call belongs to.")
    call_id: str
    ok: bool = Field(default=True, description="False when the tool reported an error.")


class WriteFile(_Action):
    kind: Literal["write"] = "write"
    path: str
    content: str


class EditSpan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    old: str
    new: str
    replace_all: bool = False


class EditFile(_Action):
    """String replacement(s): Claude Edit/MultiEdit, pi edit, opencode edit, hermes patch."""

    kind: Literal["edit"] = "edit"
    path: str
    edits: tuple[EditSpan, ...]


class ApplyPatch(_Action):
    """Codex `*** Begin Patch` envelope (may touch several files)."""

    kind: Literal["apply_patch"] = "apply_patch"
    patch: str


class UnifiedDiff(_Action):
    """A unified diff the tool applied (or reported applying) to one or more files."""

    kind: Literal["unified_diff"] = "unified_diff"
    diff: str


class ReadFile(_Action):
    """A read whose result shows file content. `content` is the text as the tool showed
    it with harness decorations (line-number gutters, banners) removed; `complete` is
    True only when the whole file was shown (no offset/limit, no truncation marker)."""

    kind: Literal["read"] = "read"
    path: str
    content: str | None = None
    complete: bool = False


class RunCommand(_Action):
    kind: Literal["command"] = "command"
    command: str
    cwd: str | None = None
    output: str | None = None
    exit_code: int | None = None
    output_complete: bool = Field(
        default=True,
        description="False when the harness cut the output (mini-swe-agent `<elided_chars>`, "
        "SWE-agent 'characters were elided'): a cut `cat F` is never a full read of F.",
    )


class OtherTool(_Action):
    kind: Literal["other"] = "other"
    name: str
    modifies: str | None = Field(
        default=None,
        description="A file the tool changed in a way no other action can express (OpenHands "
        "insert/undo_edit, SWE-agent line-range edit, notebook edit): replay must treat "
        "its content as unknown after this call.",
    )


Action = WriteFile | EditFile | ApplyPatch | UnifiedDiff | ReadFile | RunCommand | OtherTool


class UserTurn(BaseModel):
    """A user message in order with the actions, so replay knows which request each
    action answered."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    step_id: int
    text: str


class ParsedSession(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    trajectory: Trajectory
    source_format: str = Field(description="e.g. atif-v1.6, pi-v3, pi-v1, claude-code, codex")
    harness: str = Field(description="e.g. terminus-2, pi, claude-code, codex, opencode, hermes")
    cwd: str | None = Field(default=None, description="Session root as the harness recorded it.")
    git: dict[str, Any] | None = None
    compacted: bool = Field(default=False, description="History was summarised/compacted.")
    compacted_at: int | None = Field(
        default=None,
        description="Step id where the last compaction begins; `events` start after it.",
    )
    dropped_events: int = Field(
        default=0, description="User turns and actions before the last compaction (not replayed)."
    )
    truncated: bool = Field(default=False, description="The record ends mid-session.")
    events: list[UserTurn | Action] = Field(
        description="User turns and actions in session order, after the last compaction if any "
        "(the history before a compaction is untrusted: only the trajectory keeps it)."
    )

    @property
    def actions(self) -> list[Action]:
        return [e for e in self.events if not isinstance(e, UserTurn)]

    @property
    def user_turns(self) -> list[UserTurn]:
        return [e for e in self.events if isinstance(e, UserTurn)]


Record = dict[str, Any] | list[Any]
