"""Build ParsedSessions directly from actions, so replay and kinds are tested without
depending on any reader."""

from __future__ import annotations

from repo2rlenv.formats.base import (
    ApplyPatch,
    EditFile,
    EditSpan,
    ParsedSession,
    ReadFile,
    RunCommand,
    UnifiedDiff,
    UserTurn,
    WriteFile,
)
from schemas.trajectory import Agent, Step, Trajectory

ROOT = "/home/dev/proj"


class SessionBuilder:
    def __init__(self, cwd: str | None = ROOT) -> None:
        self.cwd = cwd
        self.events: list = []
        self.steps: list[Step] = []

    def _step(self, source: str, message: str = "") -> int:
        step_id = len(self.steps) + 1
        self.steps.append(Step(step_id=step_id, source=source, message=message))
        return step_id

    def user(self, text: str) -> SessionBuilder:
        self.events.append(UserTurn(step_id=self._step("user", text), text=text))
        return self

    def say(self, text: str) -> SessionBuilder:
        self._step("agent", text)
        return self

    def _call(self) -> tuple[int, str]:
        step_id = self._step("agent")
        return step_id, f"c{step_id}"

    def write(self, path: str, content: str, ok: bool = True) -> SessionBuilder:
        step, call = self._call()
        self.events.append(WriteFile(step_id=step, call_id=call, path=path, content=content, ok=ok))
        return self

    def edit(
        self, path: str, old: str, new: str, replace_all: bool = False, ok: bool = True
    ) -> SessionBuilder:
        step, call = self._call()
        self.events.append(
            EditFile(
                step_id=step,
                call_id=call,
                path=path,
                ok=ok,
                edits=(EditSpan(old=old, new=new, replace_all=replace_all),),
            )
        )
        return self

    def read(self, path: str, content: str, complete: bool = True) -> SessionBuilder:
        step, call = self._call()
        self.events.append(
            ReadFile(step_id=step, call_id=call, path=path, content=content, complete=complete)
        )
        return self

    def run(
        self, command: str, output: str = "", exit_code: int | None = 0, cwd: str | None = None
    ) -> SessionBuilder:
        step, call = self._call()
        self.events.append(
            RunCommand(
                step_id=step,
                call_id=call,
                command=command,
                cwd=cwd,
                output=output,
                exit_code=exit_code,
                ok=exit_code in (0, None),
            )
        )
        return self

    def patch(self, text: str) -> SessionBuilder:
        step, call = self._call()
        self.events.append(ApplyPatch(step_id=step, call_id=call, patch=text))
        return self

    def diff(self, text: str) -> SessionBuilder:
        step, call = self._call()
        self.events.append(UnifiedDiff(step_id=step, call_id=call, diff=text))
        return self

    def build(self, **flags) -> ParsedSession:
        if not self.steps:
            self._step("user", "")
        trajectory = Trajectory(
            schema_version="ATIF-v1.6", agent=Agent(name="test", version="1"), steps=self.steps
        )
        return ParsedSession(
            trajectory=trajectory,
            source_format="test",
            harness="test",
            cwd=self.cwd,
            events=self.events,
            **flags,
        )


def from_story(story: list[tuple], cwd: str = ROOT) -> ParsedSession:
    """A harness-neutral example story (repo2rlenv.examples.session_stories) as a session."""
    builder = SessionBuilder(cwd)
    for step in story:
        kind, args = step[0], step[1:]
        if kind == "user":
            builder.user(args[0])
        elif kind == "say":
            builder.say(args[0])
        elif kind == "write":
            builder.write(
                args[0] if args[0].startswith(("/", "..")) else f"{cwd}/{args[0]}", args[1]
            )
        elif kind == "edit":
            builder.edit(f"{cwd}/{args[0]}", args[1], args[2])
        elif kind == "read":
            builder.read(f"{cwd}/{args[0]}", args[1])
        elif kind == "run":
            builder.run(args[0], args[1], args[2])
    return builder.build()
